"""hw.TensorCore: one opcode-selected core per architecture, bit for bit against golden.dot_add.

Amaranth's simulator drives a random instruction every cycle (mixed opcodes in flight, random
valid/ready stalls) and checks each result against the golden model of that instruction.
"""

from __future__ import annotations

import numpy as np
import pytest
from amaranth_sim import stream_run

import golden
import golden.vectors
from golden.descriptors import Part, part
from hw.decode import UnionFormat, union_format
from hw.pipeline import questions_only
from hw.tensor_core import TensorCore, datapath_groups


def operands(ins, n, rng):
    """Random bit patterns, normal values and structured cases (cancellation, ties, e_zero) mixed."""
    return golden.vectors.random_operands(ins, n, rng, "all")


def run_core(core: TensorCore, jobs, stall=0.2, seed=0):
    """``jobs``: list of (opcode, a, b, c, sa, sb) rows; returns the d words in order."""
    def word(row):
        op, a, b, c, sa, sb = row
        pad = lambda xs, n: [int(x) for x in xs] + [0] * (n - len(xs))  # noqa: E731
        w = {"opcode": op, "a": pad(a, core.k_max), "b": pad(b, core.k_max), "c": int(c)}
        if core.s_max:
            w["scale_a"] = pad([] if sa is None else sa, core.s_max)
            w["scale_b"] = pad([] if sb is None else sb, core.s_max)
        return w

    out, _ = stream_run(core, [word(row) for row in jobs], stall, stall, seed,
                        max_cycles=20 * (len(jobs) + core.latency + 50))
    return [int(v) for v in out]


def check_core(arch, per_instruction, seed, instructions=None):
    core = TensorCore(arch, instructions)
    rng = np.random.default_rng(seed)
    jobs, expected, who = [], [], []
    for op, ins in enumerate(core.instructions):
        a, b, c, sa, sb = operands(ins, per_instruction, rng)
        d = golden.dot_add(ins, a, b, c, sa, sb)
        for r in range(per_instruction):
            jobs.append((op, a[r], b[r], c[r], None if sa is None else sa[r], None if sb is None else sb[r]))
            expected.append(int(d[r]))
            who.append(ins)
    order = rng.permutation(len(jobs))                 # instructions interleaved at random
    jobs = [jobs[k] for k in order]
    expected = [expected[k] for k in order]
    who = [who[k] for k in order]
    got = run_core(core, jobs, seed=seed)
    bad = [(ins.name, jobs[k], g, e) for k, (g, e, ins) in enumerate(zip(got, expected, who))
           if not golden.same_results(ins, [g], [e])[0]]
    assert not bad, f"{len(bad)} of {len(jobs)} differ; first: {bad[0]}"
    return core


def test_union_format_keeps_value_and_exponent():
    u = union_format(["e4m3", "e5m2", "e2m1"])
    assert isinstance(u, UnionFormat) and u.man_bits == 3 and u.member_bits == 8 and u.select_bits == 2
    assert u.storage_bits == 10 and u.encode(2, 0b0101) == (2 << 8) | 0b0101
    assert union_format(["f16", "f16"]).name == "f16"


def test_groups_share_datapaths():
    bw = golden.instructions("blackwell")
    groups = datapath_groups(bw)
    assert len(groups) < len({(i.params, i.formats, i.k, i.scale_format, i.block_size) for i in bw})
    f8f6f4 = max(groups, key=lambda g: len(g.members))
    assert len(f8f6f4.members) == 25 and isinstance(f8f6f4.fa, UnionFormat) and len(f8f6f4.fa.members) == 5
    # formats named by the algorithm's rules are never merged
    for g in datapath_groups(golden.instructions("cdna2")):
        if not part(g.template.params.base, Part.HW_UNION):
            assert len({(i.a_format, i.b_format) for i in g.members}) == 1


@pytest.mark.parametrize("arch,per", [("volta", 12), ("ampere", 10)])
def test_tensor_core_matches_golden(arch, per):
    core = check_core(arch, per, seed=len(arch))
    assert core.latency == max(dp.latency for dp in core.datapaths)


def test_tensor_core_shared_f8f6f4_group():
    """Hopper's 4 QGMMA and Blackwell's 25 f8f6f4 kinds of one shape, each through one shared datapath."""
    hopper = [i for i in golden.instructions("hopper") if i.name.startswith("QGMMA")]
    core = check_core("hopper", 8, seed=3, instructions=hopper)
    assert len(core.groups) < len(hopper)
    bw = [i for i in golden.instructions("blackwell", "UTCQMMA") if i.name.startswith("UTCQMMA.F32.")]
    core = check_core("blackwell", 3, seed=4, instructions=bw)
    assert len(core.groups) == 1


def test_tensor_core_errors():
    from hw.pipeline import questions_only
    with pytest.raises(ValueError, match="unknown architecture"):
        TensorCore("hoper")
    with pytest.raises(ValueError, match="not a hopper instruction"):
        TensorCore("hopper", golden.instructions("volta"))
    with questions_only():            # built only to ask for opcodes
        core = TensorCore("volta")
        assert core.opcode(core.instructions[1]) == 1
        with pytest.raises(ValueError, match="not an instruction"):
            core.opcode("HGMMA")
        del core


@pytest.mark.slow                      # a Verilator lint of the Hopper QGMMA core, about 11 s
def test_tensor_core_verilog_lints_clean(tmp_path):
    from cosim import toolchain
    from cosim.lint import lint_unit
    toolchain.setup()
    hopper = [i for i in golden.instructions("hopper") if i.name.startswith("QGMMA")]
    rep = lint_unit(TensorCore("hopper", hopper), tmp_path)
    assert rep.ok, "\n".join(rep.active)


def test_tensor_core_under_verilator():
    """The Volta core built by Verilator: random instructions every cycle, stalls, golden per row;
    a planted difference in one instruction's results is caught and named."""
    from cosim import toolchain
    from cosim.tensor_core import core_reference, run_core
    toolchain.setup()
    r = run_core("volta", n=20_000, progress=0)
    assert r.ok and r.result.vectors == 20_000 and r.result.mismatches == 0
    assert r.result.latency_measured == r.latency and r.result.ii_measured == 1
    assert len(r.per_instruction) == 3 and min(r.per_instruction.values()) > 5000

    core = TensorCore("volta")
    golden_rows = core_reference(core)

    def off_by_one_ulp_on_opcode_1(label, opcode, *ops):
        d = golden_rows(label, opcode, *ops)
        return np.where(opcode == 1, d ^ np.uint64(1), d)
    bad = run_core("volta", n=3000, progress=0, core=core, reference=off_by_one_ulp_on_opcode_1)
    assert not bad.ok and bad.result.mismatches == bad.per_instruction[core.instructions[1].name]
    assert {f[0] for f in bad.failing} == {core.instructions[1].name}


@pytest.mark.slow                      # a core build of its own at MAX_LEVEL, about 12 s; every unit's deepest
                                       # pipelining stays in tests/cosim/test_cosim_rtl.py
def test_tensor_core_at_the_deepest_pipelining_under_verilator():
    """Every datapath group of a core at the deepest pipelining: the same bits, one fixed latency
    (the longest group's), II 1; the shorter groups wait in their delay lines."""
    from cosim import toolchain
    from cosim.tensor_core import run_core
    from hw import MAX_LEVEL
    toolchain.setup()
    with questions_only():
        shallow = TensorCore("volta").latency
    core = TensorCore("volta", pipelining=MAX_LEVEL)
    assert core.latency > shallow
    r = run_core("volta", n=3000, progress=0, core=core, pipelining=MAX_LEVEL)
    assert r.ok and r.result.vectors == 3000 and r.result.mismatches == 0
    assert r.result.latency_measured == r.latency == core.latency and r.result.ii_measured == 1
