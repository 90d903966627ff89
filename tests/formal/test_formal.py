"""Formal proofs (formal/): a fast subset proves, and every kind of proof fails on a planted bug.

Each test runs SymbiYosys on one property; ``make formal`` runs them all at the catalog's
parameters.  The planted bugs are corners random vectors rarely reach: a tie rounded the wrong
way, a trailing-zero count wrong only when the top bit alone is set, a shift of exactly the
window's width that keeps a bit, a carry dropped at one column, exponents compared unsigned, a
product wrong only for all-ones significands, an infinity decoded as a number, a shell whose
declared latency is one more than its datapath's, a shell that does not stall its datapath.
"""

from __future__ import annotations

import pytest
from amaranth import Mux

import hw.align
import hw.decode
import hw.maxexp
import hw.normalise
import hw.tensor_core
import hw.unit
from formal.align import align_property
from formal.bitscan import bitscan_property
from formal.compress import compress_property
from formal.decode import decode_property
from formal.maxexp import maxexp_property
from formal.multiply import multiply_property
from formal.normalise import normalise_property
from formal.protocol import core_property, unit_property
from formal.round import rounder_property
from hw.bitscan import leading_one, trailing_zeros
from hw.compress import CompressorTree
from hw.decode import OperandDecode
from hw.multiply import significand_product
from hw.round import Rounder
from hw.unit import DotAddUnit

pytestmark = pytest.mark.xdist_group("yosys")
TIMEOUT = 120
HOPPER = ("hopper", "HGMMA.64xNx16.F32")


@pytest.fixture(autouse=True, scope="module")
def tools_started():
    """The YoWASP tools started once before any proof's clock (a fresh machine compiles them first,
    a minute or more under load); a second or so when they are compiled already."""
    from formal.runner import warm
    warm()


def proves(prop, tmp_path):
    v = prop.run(TIMEOUT, workdir=tmp_path)
    assert v.status == "proved", v.line()


def fails(prop, tmp_path):
    v = prop.run(TIMEOUT, workdir=tmp_path)
    assert v.status == "failed", v.line()
    assert v.trace and v.trace.endswith(".vcd"), "a failed proof names its counterexample trace"


# -- planted bugs ---------------------------------------------------------------------------------

class TiesToOdd(Rounder):
    """RNE whose tie goes to the odd neighbour: the rounding bit's decision off by the kept LSB."""

    def _increment(self, kept_lsb, rbit, sticky, sign):
        return rbit & (sticky | ~kept_lsb) if self.mode == "RNE" else super()._increment(kept_lsb, rbit, sticky, sign)


def tz_top_corner(v):
    """Trailing zeros, wrong by one when only the top bit is set."""
    return trailing_zeros(v) - (v == 1 << (len(v) - 1))


class DroppedCarry(CompressorTree):
    """A 3:2 compressor that loses its carry into the top (sign) column."""

    @staticmethod
    def _carry(x, y, z):
        return CompressorTree._carry(x, y, z) & ~(1 << (len(x) - 1))


def product_all_ones(x, y):
    """A product wrong only when both significands are all ones."""
    return significand_product(x, y) ^ (x.all() & y.all())


class InfAsNumber(OperandDecode):
    """A decoder that reads e5m2's infinities as numbers."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        if self.fmt.name == "e5m2":
            m.d.comb += self.out.inf.eq(0)
        return m


class OneStageMore(DotAddUnit):
    """A shell that counts one stage more than its datapath has: valid lags the data."""

    @property
    def latency(self):
        return super().latency + 1

    @property
    def stage_latencies(self):
        return super().stage_latencies + [("extra", 1)]


def _width_keeps_a_bit(real):
    """align_magnitude whose shift of exactly the window's width keeps the lowest bit."""
    def planted(tl, name, sig, frac, exp, e_max, F, width, **kwargs):
        mag = real(tl, name, sig, frac, exp, e_max, F, width, **kwargs)
        return Mux((e_max - exp) == width, mag | 1, mag)
    return planted


def _unsigned_compare(real):
    """A Mux for the max tree whose comparison reads signed exponents as unsigned."""
    def planted(sel, x, y):
        return real(x.as_unsigned() > y.as_unsigned(), x, y)
    return planted


def _no_stall(enable):
    """EnableInserter that leaves the datapaths always running (the valid line still stalls)."""
    def planted(en):
        inserter = enable(en)
        return lambda dut: dut if hasattr(dut, "a") else inserter(dut)
    return planted


# -- the fast subset: proofs that pass ------------------------------------------------------------

def test_rounder_proves(tmp_path):
    proves(rounder_property("f16", 21, "RNE", positive_zero=True, sticky="mask", lod="halves"), tmp_path)


def test_bitscan_proves(tmp_path):
    proves(bitscan_property(34, "lod.halves"), tmp_path)


@pytest.mark.slow                      # about 11 s (make test's budget); the 34-bit proof stays
def test_bitscan_at_the_exact_windows_width(tmp_path):
    """525 bits (CDNA1's bf16 exact window): the reference scan builds (chunked), proves, and sees a
    leading one off by one in the top chunk."""
    proves(bitscan_property(525, "lod.halves"), tmp_path)
    off = lambda v: Mux(v[524], 523, leading_one(v, "halves"))      # noqa: E731
    fails(bitscan_property(525, "lod.halves", scan=off), tmp_path)


def test_align_proves(tmp_path):
    proves(align_property(6, 4, 13, "f16"), tmp_path)


def test_compress_levels_prove(tmp_path):
    proves(compress_property(27, 5), tmp_path)


def test_maxexp_proves(tmp_path):
    proves(maxexp_property(9), tmp_path)


def test_multiply_proves(tmp_path):
    proves(multiply_property(3, 4), tmp_path)


def test_decode_proves(tmp_path):
    proves(decode_property(["e4m3", "e5m2"]), tmp_path)


def test_unit_order_proves(tmp_path):
    proves(unit_property(*HOPPER, "order"), tmp_path)


# -- the fast subset: planted bugs fail ------------------------------------------------------------

def test_rounder_tie_bug_fails(tmp_path):
    fails(rounder_property("f16", 21, "RNE", positive_zero=True, sticky="mask", lod="halves", dut_class=TiesToOdd),
          tmp_path)


def test_trailing_zeros_corner_fails(tmp_path):
    fails(bitscan_property(34, "tz", scan=tz_top_corner), tmp_path)


def test_compress_dropped_carry_fails(tmp_path):
    fails(compress_property(27, 5, dut_class=DroppedCarry), tmp_path)


def test_unit_without_stall_loses_results(tmp_path, monkeypatch):
    monkeypatch.setattr(hw.unit, "EnableInserter", _no_stall(hw.unit.EnableInserter))
    fails(unit_property(*HOPPER, "order"), tmp_path)


# -- slow: the other proofs and planted bugs ------------------------------------------------------

@pytest.mark.slow
def test_normalise_proves_and_fails_on_the_tie_bug(tmp_path, monkeypatch):
    prop = lambda: normalise_property(21, 13, "f16", 10, "RNE", "ieee", True)  # noqa: E731
    proves(prop(), tmp_path)
    monkeypatch.setattr(hw.normalise, "Rounder", TiesToOdd)
    fails(prop(), tmp_path)


@pytest.mark.slow
def test_rounder_pipelined_proves(tmp_path):
    proves(rounder_property("f32", 28, "RNE", flush=True, cuts=("amount", "shift", "increment", "lod")), tmp_path)


@pytest.mark.slow
def test_align_width_shift_bug_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(hw.align, "align_magnitude", _width_keeps_a_bit(hw.align.align_magnitude))
    fails(align_property(6, 4, 13, "f16"), tmp_path)


@pytest.mark.slow
def test_compress_pipelined_and_whole(tmp_path):
    proves(compress_property(27, 9, pipelining="compress=1,final_add=1"), tmp_path)
    fails(compress_property(27, 9, pipelining="compress=1,final_add=1", dut_class=DroppedCarry), tmp_path)
    proves(compress_property(27, 4, whole=True), tmp_path)


@pytest.mark.slow
def test_maxexp_unsigned_compare_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(hw.maxexp, "Mux", _unsigned_compare(hw.maxexp.Mux))
    fails(maxexp_property(9), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("bits", [11, 24, 53])
def test_multiply_corner_fails(tmp_path, bits):
    fails(multiply_property(bits, bits, product=product_all_ones), tmp_path)


@pytest.mark.slow
def test_decode_inf_bug_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(hw.decode, "OperandDecode", InfAsNumber)
    fails(decode_property(["e4m3", "e5m2"]), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["ready", "latency"])
def test_unit_shell_proves(tmp_path, kind):
    proves(unit_property(*HOPPER, kind, pipelining=3), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["latency", "order"])
def test_unit_latency_bug_fails(tmp_path, kind):
    fails(unit_property(*HOPPER, kind, dut_class=OneStageMore), tmp_path)


@pytest.mark.slow
def test_core_proves_and_fails_without_stall(tmp_path, monkeypatch):
    proves(core_property("volta", "order", pipelining=3), tmp_path)
    monkeypatch.setattr(hw.tensor_core, "EnableInserter", _no_stall(hw.tensor_core.EnableInserter))
    fails(core_property("volta", "order", pipelining=3), tmp_path)


# -- the command line (nothing proved) ------------------------------------------------------------

def test_filters_keep_the_units_stages(tmp_path):
    from formal.__main__ import filters, select
    stages, units = filters("hopper", "HGMMA.64xNx16.F32", "protocol,round")
    assert stages == ("protocol", "round") and units == {HOPPER}
    props = [unit_property(*HOPPER, "ready"), core_property("volta", "ready"), multiply_property(3, 4)]
    assert [p.name for p in select(props, stages, units)] == [props[0].name]
    assert len(select(props, *filters())) == 3


@pytest.mark.parametrize("argv, says", [(["--stage", "nope"], "unknown stage nope; valid: round"),
                                        (["--arch", "nope"], "unknown architecture"),
                                        (["--pipelining", "9"], "pipelining level must be 0..3"),
                                        (["--stage", ""], "--stage is empty; valid: round")])
def test_bad_filters_say_what_is_valid(capsys, argv, says):
    from formal.__main__ import main
    assert main(argv) == 2
    assert says in capsys.readouterr().err
