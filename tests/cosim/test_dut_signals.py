"""The signal map (cosim.dut.signals): golden's stages on a design's own signals, the first divergent stage.

The map's parsing, the VCD reader and the comparison run without a simulator; the design runs build
examples/dut/dotp_v2k with waveforms, clean (every mapped stage agrees) and with its planted short
alignment (the alignment stage is named).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import golden
from cosim.dut import run as drun
from cosim.dut.builds import prepare
from cosim.dut.description import DescriptionError, load
from cosim.dut.signal_map import Mapping, compare, first_divergence
from cosim.dut.vcd import VcdError, find, sample
from cosim.scoring import Config

REPO = Path(__file__).resolve().parents[2]
V2K = REPO / "examples" / "dut" / "dotp_v2k"
INS = golden.lookup("ampere", "HMMA.1688.F32")


def test_signal_map_reads(tmp_path):
    d = load(V2K / "unit.toml")
    m = d.signals["aligned.products"]
    assert (m.element_bits, m.signed, m.cycle) == (27, True, 1) and m.paths == (("terms", 0, 216),)
    assert d.signals["max_exponent.e_max"].bias == 256


@pytest.mark.parametrize("line, words", [
    ('"aligned" = { signal = "x", cycle = 1 }', "not STAGE.VALUE"),
    ('"shifted.products" = { signal = "x", cycle = 1 }', "not STAGE.VALUE"),
    ('"aligned.products" = { signal = "x" }', "cycle: missing"),
    ('"aligned.products" = { signal = "x", signals = "y{i}", cycle = 1 }', "give exactly one of signal"),
    ('"aligned.products" = { signal = "x", cycle = 1, scale = 2 }', "scale: unknown field"),
])
def test_bad_signal_map_is_one_line(tmp_path, line, words):
    text = (V2K / "unit.toml").read_text()
    head = text.split("[signals]")[0]
    rest = text.split("[signals]")[1].split("[[target]]")[1]
    p = tmp_path / "unit.toml"
    p.write_text(head + "[signals]\n" + line + "\n\n[[target]]" + rest)
    with pytest.raises(DescriptionError) as e:
        load(p)
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_vcd_samples_before_each_rising_edge(tmp_path):
    vcd = tmp_path / "w.vcd"
    vcd.write_text("$timescale 1ps $end\n$scope module TOP $end\n$scope module unit $end\n"
                   "$var wire 1 ! clk $end\n$var wire 4 \" x [3:0] $end\n$upscope $end\n$upscope $end\n"
                   "$enddefinitions $end\n#0\n0!\nb0000 \"\n#1\n1!\nb0011 \"\n#2\n0!\n#3\n1!\nb0101 \"\n"
                   "#4\n0!\n#5\n1!\n")
    names = {"TOP.unit.clk", "TOP.unit.x"}
    vals, widths = sample(vcd, "TOP.unit.clk", ["TOP.unit.x"])
    assert vals["TOP.unit.x"] == [0, 3, 5] and widths["TOP.unit.x"] == 4       # the value each edge saw
    from cosim.dut.vcd import names_of
    full, _ = names_of(vcd)
    assert set(full) == names and find(full, "x", "TOP.unit") == "TOP.unit.x"
    with pytest.raises(VcdError, match="no signal 'y'"):
        find(full, "y", "TOP.unit")


def test_compare_names_the_first_stage_that_differs():
    rng = np.random.default_rng(4)
    a, b, c, _, _ = golden.vectors.random_operands(INS, 1, rng, "normal")
    v = golden.trace(INS, a[0], b[0], c[0]).values()
    maps = {"max_exponent.e_max": Mapping("max_exponent.e_max", (("e", 0, 10),), None, 1, bias=256),
            "aligned.products": Mapping("aligned.products", (("t", 0, 216),), 27, 1, signed=True)}
    design = {"max_exponent.e_max": [int(v["max_exponent.e_max"]) + 256],
              "aligned.products": [int(x) for x in v["aligned.products"]]}
    verdicts = compare(INS, maps, (a[0], b[0], c[0], None, None), design)
    assert [x for _, x in verdicts] == ["agrees", "agrees"]
    design["aligned.products"][3] += 1
    line = first_divergence(compare(INS, maps, (a[0], b[0], c[0], None, None), design))
    assert line.startswith("max_exponent.e_max agrees; aligned.products differs: element 3 is"), line


@pytest.mark.slow
def test_the_map_agrees_on_the_working_design():
    """dotp_v2k's map: every mapped stage agrees on 16 dot-adds of the working design."""
    from cosim.dut.signals import check_map
    out = io.StringIO()
    cfg = Config(seed=1, vectors="normal", progress=0.0)
    assert check_map(prepare(V2K / "unit.toml"), cfg, n=16, out=out) == 0, out.getvalue()
    assert "aligned.products             16 of 16 agree" in out.getvalue()


def test_the_map_names_the_planted_alignment_fault(tmp_path):
    """dotp_v2k with its planted fault (every aligned term one fraction bit short): the run's report names the
    alignment stage as the first that differs."""
    prep = prepare(V2K / "faults" / "short_align.toml")
    (target, ins), = prep.pairs
    out = io.StringIO()
    dr = drun.run_target(prep, target, ins, Config(n=2000, progress=0.0, out=out, rerun_with_waves=False,
                                                   failures_dir=tmp_path))
    text = out.getvalue()
    assert dr.result.status == "MISMATCH"
    assert "max_exponent.e_max agrees; max_exponent.c_exponent agrees; aligned.products differs" in text, text
    assert "first divergent stage: aligned.products in 8 of 8" in text, text
