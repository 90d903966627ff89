"""Tile devices, split ports and targets of your own in a description (cosim.dut), and the structure probe.

The description checks and the structure probe's inference run without a simulator: the probe's
answers come from golden with a fault applied in Python (each inference is shown to name its planted
fault and to stay quiet on a design that only rounds differently).  The runs build the project's test
designs (examples/dut/tile_engine, sdotp_split) under Verilator.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import golden
from cosim.dut import __main__ as cli
from cosim.dut import run as drun
from cosim.dut.builds import prepare
from cosim.dut.description import DescriptionError, Tile, load
from cosim.dut.structure import infer, make_probes
from cosim.dut.tile import TileLayout
from cosim.scoring import Config
from golden.tile import tile_mma

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "dut"
TILE = EXAMPLES / "tile_engine" / "unit.toml"
SDOTP = EXAMPLES / "sdotp_split" / "unit.toml"
HMMA1684 = golden.lookup("ampere", "HMMA.1684.F32.TF32")


def _desc(tmp_path: Path, body: str, name: str = "unit.toml") -> Path:
    p = tmp_path / name
    p.write_text('[dut]\nname = "t"\ntop = "top"\nsources = ["top.sv"]\n' + body)
    return p


TILE_BODY = '''[handshake]
kind = "valid_ready"
[tile]
m = 4
n = 4
k = 8
[operands]
a = { port = "a", element_bits = 32, lanes = 4, layout = "col_major" }
b = { port = "b", element_bits = 32, lanes = 4 }
c = { port = "c", element_bits = 32, lanes = 4 }
d = { port = "d", element_bits = 32, lanes = 4 }
[[target]]
arch = "ampere"
instr = "HMMA.1684.F32.TF32"
'''


def test_tile_description_reads(tmp_path):
    d = load(_desc(tmp_path, TILE_BODY))
    assert d.tile == Tile(4, 4, 8)
    assert d.operands["a"].layout == "col_major" and d.operands["b"].layout == "row_major"
    assert d.operands["a"].elements == 4


@pytest.mark.parametrize("old, new, words", [
    ('lanes = 4, layout = "col_major"', 'elements = 4', "a tile device's operands give lanes = L"),
    ('layout = "col_major"', 'layout = "diagonal"', "layout: 'diagonal'; valid: row_major, col_major, mma."),
    ('kind = "valid_ready"', 'kind = "fixed"\nlatency = 3', "a tile device moves its beats with backpressure"),
    ("k = 8", "k = 0", "[tile] k: 0; valid: 1 to 4096"),
    ('[handshake]\nkind = "valid_ready"', '[handshake]\nkind = "valid_ready"\nin_last = "2x"', "not a Verilog id"),
])
def test_bad_tile_description_is_one_line(tmp_path, old, new, words):
    with pytest.raises(DescriptionError) as e:
        load(_desc(tmp_path, TILE_BODY.replace(old, new)))
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_tile_targets_are_checked_against_the_tile(tmp_path):
    from cosim.dut import targets
    d = load(_desc(tmp_path, TILE_BODY.replace("k = 8", "k = 6")))
    with pytest.raises(DescriptionError, match="multiple of ampere HMMA.1684.F32.TF32's K=4, got k=6"):
        targets.instruction(d, d.targets[0])
    d = load(_desc(tmp_path, TILE_BODY.replace('layout = "col_major"', 'layout = "mma.m16n8k8.a.tf32"')))
    with pytest.raises(DescriptionError, match="a 16 x 8 fragment; this operand's tile is 4 x 8"):
        targets.instruction(d, d.targets[0])
    d = load(_desc(tmp_path, TILE_BODY.replace('c = { port = "c", element_bits = 32, lanes = 4 }',
                                               'c = { port = "c", element_bits = 32, lanes = 3 }')))
    with pytest.raises(DescriptionError, match="lanes = 3 does not divide its 4 x 4 tile"):
        targets.instruction(d, d.targets[0])


SPLIT_BODY = '''[handshake]
kind = "valid_ready"
[operands]
a = { ports = ["op_a[15:0]", "op_b[15:0]"] }
b = { ports = ["op_a[31:16]", "op_b[31:16]"] }
c = { port = "op_c", element_bits = 32 }
d = { port = "res", element_bits = 32 }
[[target]]
name = "mine"
k = 2
pins = { mode = 0 }
[target.formats]
a = "f16"
c = "f32"
[target.params]
base = "FDA"
F = "exact"
e_zero = -126
out_rounding = "RNE"
nan_bits = 0x7fc00000
'''


def test_split_ports_and_a_target_of_your_own(tmp_path):
    from cosim.dut import targets
    from cosim.dut.description import check_conflicts
    d = load(_desc(tmp_path, SPLIT_BODY))
    assert d.operands["a"].fields() == [("op_a", 0, 16), ("op_b", 0, 16)]
    assert d.operands["b"].fields() == [("op_a", 16, 16), ("op_b", 16, 16)]
    check_conflicts(d)
    t = d.targets[0]
    assert t.custom and t.label == "mine" and t.pins == {"mode": 0}
    ins = targets.instruction(d, t)
    assert ins == golden.lookup("custom", "k=2,a=f16,c=f32,base=FDA,F=exact,e_zero=-126,out_rounding=RNE,"
                                          "nan_bits=0x7fc00000")


@pytest.mark.parametrize("old, new, words", [
    ('b = { ports = ["op_a[31:16]", "op_b[31:16]"] }', 'b = { ports = ["op_a[20:5]", "op_b[31:16]"] }',
     "b[0] (op_a[20:5]) overlaps a[0] (op_a[15:0])"),
    ('c = { port = "op_c", element_bits = 32 }', 'c = { port = "mode", element_bits = 32 }',
     "c[0] sits on mode, which is also [[target]] mine pins.mode"),
])
def test_conflicting_ports_are_one_line(tmp_path, old, new, words):
    from cosim.dut.description import check_conflicts
    with pytest.raises(DescriptionError) as e:
        check_conflicts(load(_desc(tmp_path, SPLIT_BODY.replace(old, new))))
    assert words in str(e.value), str(e.value)


@pytest.mark.parametrize("old, new, words", [
    ('a = { ports = ["op_a[15:0]", "op_b[15:0]"] }', 'a = { ports = ["op_a[15:0]", "op_b[7:0]"] }',
     "the bit ranges differ in width (8, 16)"),
    ('a = { ports = ["op_a[15:0]", "op_b[15:0]"] }', 'a = { ports = ["op_a[0:15]", "op_b[15:0]"] }',
     "write the range [hi:lo] with hi >= lo"),
    ('[target.formats]\na = "f16"', '[target.formats]\na = "f17"', "a='f17' is not a format golden knows"),
    ('k = 2\n', '', "one of your own gives k"),
    ('nan_bits = 0x7fc00000', 'nan_bits = 0x7e00', "not a NaN of the output format f32"),
])
def test_bad_split_or_custom_target_is_one_line(tmp_path, old, new, words):
    from cosim.dut import targets
    with pytest.raises(DescriptionError) as e:
        d = load(_desc(tmp_path, SPLIT_BODY.replace(old, new)))
        targets.instruction(d, d.targets[0])
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_tile_layout_packs_and_unpacks():
    layout = TileLayout(HMMA1684, Tile(4, 4, 8))
    rng = np.random.default_rng(2)
    A = rng.integers(0, 2**32, (5, 4, 8), dtype=np.uint64)
    B = rng.integers(0, 2**32, (5, 8, 4), dtype=np.uint64)
    C = rng.integers(0, 2**32, (5, 4, 4), dtype=np.uint64)
    w = layout.pack(A, B, C)
    assert layout.in_width == (32 + 32 + 16) * 32 and layout.out_width == 16 * 32 + 1
    from cosim.payload import get_field
    assert (get_field(w, layout.offset("b", 6, 3), 32) == B[:, 6, 3]).all()
    assert layout.dot_adds == 32


# ---- the structure probe on faults applied in Python ---------------------------------------------------

def _answers(probes, fault=None, ins=HMMA1684):
    A, B, C = probes.A.copy(), probes.B.copy(), probes.C.copy()
    if fault == "transpose_b":
        for s in range(2):
            blk = B[:, 4 * s:4 * s + 4, :].copy()
            B[:, 4 * s:4 * s + 4, :] = blk.transpose(0, 2, 1)
    if fault == "no_carry":
        D = golden.dot_add(ins, A[:, :, None, 4:], np.swapaxes(B[:, 4:, :], 1, 2)[:, None], C)
    elif fault == "rounding":
        D = tile_mma(ins.with_params(F=20), A, B, C)
    elif fault == "c_transposed":
        D = tile_mma(ins, A, B, C.transpose(0, 2, 1))
    else:
        D = tile_mma(ins, A, B, C)
    if fault == "swap_lanes":
        D = D[:, :, [0, 2, 1, 3]]
    return D.reshape(len(D), -1)


@pytest.mark.parametrize("fault, words", [
    (None, "data moves as described"),
    ("rounding", "data moves as described"),
    ("swap_lanes", "columns 1 and 2 of D are swapped"),
    ("transpose_b", "B is read transposed within each k-slice"),
    ("no_carry", "the accumulator is not carried between k-slices"),
    ("c_transposed", "C is read at other positions"),
])
def test_structure_probe_names_the_fault(fault, words):
    tile = Tile(4, 4, 8)
    probes = make_probes(HMMA1684, tile)
    f = infer(HMMA1684, tile, probes, _answers(probes, fault))
    assert any(words in line for line in f.lines), f.lines
    assert f.moves_as_described == (fault in (None, "rounding"))
    assert len(f.lines) == 1, f.lines            # one fault, one finding: the others are explained by it


# ---- runs under Verilator ----------------------------------------------------------------------------

def _run_desc(path, n, **kw):
    prep = prepare(path)
    out = io.StringIO()
    results = []
    for target, ins in prep.pairs:
        cfg = Config(n=n, progress=0.0, out=out, rerun_with_waves=False, **kw)
        results.append(drun.run_target(prep, target, ins, cfg))
    return results, out.getvalue()


def test_tile_engine_matches(tmp_path):
    (dr,), _ = _run_desc(TILE, 20_000, failures_dir=tmp_path)
    r = dr.result
    assert r.ok, r.message
    assert r.vectors == 20_000 and (r.latency, r.initiation_interval) == (19, 8)
    assert any("structured dot-adds: 0 mismatches" in note for note in dr.notes)


@pytest.mark.parametrize("fault, words", [
    ("no_carry", "the accumulator is not carried between k-slices (k-slice 1 starts from C again)"),
    pytest.param("swap_lanes", "columns 1 and 2 of D are swapped (lanes 1 and 2 of every output beat)",
                 marks=pytest.mark.slow),
    pytest.param("transpose_b", "B is read transposed within each k-slice", marks=pytest.mark.slow),
])
def test_tile_engine_fault_is_diagnosed(tmp_path, fault, words):
    (dr,), report = _run_desc(EXAMPLES / "tile_engine" / "faults" / f"{fault}.toml", 4_000, failures_dir=tmp_path)
    assert dr.result.status == "MISMATCH" and "D elements differ from golden" in dr.result.message
    assert words in report, report
    assert "first failing transaction" in report and "k-slice 1 (k = 4..7, accumulator from k-slice 0)" in report


@pytest.mark.slow       # 40-55 s on two cores; the probe's inference on a DUT: test_dut_examples.py's valid/ready
def test_sdotp_probe_inference_pasted_back(tmp_path, capsys):
    """make probe DUT=sdotp_split (no ARCH/INSTR): every target reproduced, each inference as a [[target]];
    the blocks pasted into the description co-simulate with 0 mismatches."""
    from probe.__main__ import main as probe_main
    assert probe_main(["--device", f"dut:{SDOTP}"]) == 0
    text = capsys.readouterr().out
    assert text.rstrip().endswith("verification: reproduced")
    assert "== target 1: f16 -> f32, exact (pins mode=0)" in text and "== target 2: e5m2 -> f16, exact" in text
    blocks = [b.split("\n\n")[0] for b in text.split("(paste it into the description):\n")[1:]]
    assert len(blocks) == 2 and all(b.startswith("[[target]]") for b in blocks)
    desc = SDOTP.read_text().split("[[target]]")[0].replace('filelist = "rtl/', f'filelist = "{SDOTP.parent}/rtl/')
    pasted = tmp_path / "unit.toml"
    pasted.write_text(desc + "\n".join(blocks) + "\n")
    prep = prepare(pasted)
    assert [t.label for t, _ in prep.pairs] == ["f16 -> f32, exact (inferred)", "e5m2 -> f16, exact (inferred)"]
    assert [i for _, i in prep.pairs] == [i for _, i in prepare(SDOTP).pairs]     # the same arithmetic
    results, _ = _run_desc(pasted, 100_000, failures_dir=tmp_path)
    assert all(dr.result.ok and dr.result.vectors == 100_000 for dr in results)
    assert all(any("4,096 structured vectors: 0 mismatches" in n for n in dr.notes) for dr in results)


def test_cli_runs_a_tile_device(capsys):
    assert cli.main(["run", str(TILE), "-n", "2000", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "HMMA.1684.F32.TF32" in out and " ok" in out


def test_a_tile_device_stays_off_the_board():
    from fpga.board.dut import dut_board
    with pytest.raises(DescriptionError, match=r"\[tile\]: a tile device does not go on the board"):
        dut_board(TILE)


def test_a_tile_failure_replays(tmp_path):
    (dr,), _ = _run_desc(EXAMPLES / "tile_engine" / "faults" / "no_carry.toml", 2_000, failures_dir=tmp_path)
    rep = drun.replay(dr.result.failures_file, Config(out=io.StringIO()))
    r = rep.result
    assert r.status == "MISMATCH" and r.vectors == 32 * len(dr.result.failing["index"])
    assert (r.latency, r.initiation_interval) == (19, 8)


def test_block_scaled_tiles_and_their_probes():
    """A block-scaled instruction as a tile (MX fp4, K=64, a 2x2x128 tile: two k-slices): the tile stream,
    golden's tile and the structure probe take its scales; the probe names a lost k-slice."""
    from golden.streams import TileStream
    ins = golden.lookup("blackwell", "UTCOMMA.MXF4.E8")
    tile = Tile(2, 2, 128)
    A, B, C, SA, SB = TileStream(ins, 2, 2, 128, "mixed", 3).take(4)
    assert SA.shape == (4, 2, 4) and SB.shape == (4, 4, 2)
    D = tile_mma(ins, A, B, C, SA, SB)
    d0 = golden.dot_add(ins, A[1, 0, :64], B[1, :64, 1], C[1, 0, 1], SA[1, 0, :2], SB[1, :2, 1])
    assert D[1, 0, 1] == golden.dot_add(ins, A[1, 0, 64:], B[1, 64:, 1], d0, SA[1, 0, 2:], SB[1, 2:, 1])
    layout = TileLayout(ins, tile)
    assert layout.in_width == (2 * 128 + 128 * 2) * 4 + 4 * 4 * 8 + 2 * 2 * 32
    probes = make_probes(ins, tile)
    ok = tile_mma(ins, probes.A, probes.B, probes.C, probes.SA, probes.SB).reshape(len(probes.asks), -1)
    assert infer(ins, tile, probes, ok).moves_as_described
    no_carry = golden.dot_add(ins, probes.A[:, :, None, 64:], np.swapaxes(probes.B[:, 64:, :], 1, 2)[:, None],
                              probes.C, probes.SA[:, :, None, 2:], np.swapaxes(probes.SB[:, 2:, :], 1, 2)[:, None])
    f = infer(ins, tile, probes, no_carry.reshape(len(probes.asks), -1))
    assert any("the accumulator is not carried between k-slices" in line for line in f.lines), f.lines


WARP_TOML = '''[dut]
name = "warp_tile"
top = "warp_tile"
sources = ["mma_unit.v", "warp_tile.sv"]
{defines}
[reset]
name = "rst"

[handshake]
kind = "valid_ready"
in_last = "in_last"

[tile]
m = 16
n = 8
k = 16

[operands]
a = {{ port = "a_frag", element_bits = 16, lanes = 8, layout = "mma.m16n8k16.a.f16" }}
b = {{ port = "b_frag", element_bits = 16, lanes = 4, layout = "mma.m16n8k16.b.f16" }}
c = {{ port = "c_frag", element_bits = 32, lanes = 4, layout = "mma.m16n8k16.c" }}
d = {{ port = "d_frag", element_bits = 32, lanes = 4, layout = "mma.m16n8k16.c" }}

[[target]]
arch = "ampere"
instr = "HMMA.16816.F32"
'''


@pytest.fixture(scope="module")
def warp(tmp_path_factory):
    """tests/data/dut/warp_tile.sv: operands as a warp's mma.m16n8k16 fragments, thread by thread, computed on
    the project's own HMMA.16816.F32 unit exported to Verilog (a design this path was not fitted to)."""
    import shutil

    from cosim.dut import export
    folder = tmp_path_factory.mktemp("warp")
    export.export(golden.lookup("ampere", "HMMA.16816.F32"), folder)
    shutil.copy(REPO / "tests" / "data" / "dut" / "warp_tile.sv", folder)

    def describe(plant: str = ""):
        name = f"warp{plant.lower()}.toml"
        (folder / name).write_text(WARP_TOML.format(defines=f"defines = {{ {plant} = 1 }}" if plant else ""))
        return folder / name
    return describe


def test_ptx_fragment_layouts_end_to_end(warp, tmp_path):
    (dr,), _ = _run_desc(warp(), 6_000, failures_dir=tmp_path)
    assert dr.result.ok and dr.result.vectors == 6_016, dr.result.message        # 47 tiles of 128 dot-adds


@pytest.mark.slow
def test_a_fragment_bug_is_named_by_lane(warp, tmp_path):
    (dr,), report = _run_desc(warp("PLANT_FRAGMENT_HALVES"), 2_000, failures_dir=tmp_path)
    assert dr.result.status == "MISMATCH"
    assert ("in every beat of a, lane 2's element is used as lane 4's, lane 3's element is used as lane 5's, "
            "lane 4's element is used as lane 2's, lane 5's element is used as lane 3's") in report, report
