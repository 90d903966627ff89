"""The design clock from the board's oscillator: the ECP5 PLL (``EHXPLLL``), its dividers and its
gateware.

:func:`ecp5_pll` finds dividers that make the requested frequency *exactly* (the UART's
clocks per bit and the identify blob's ``clock_hz`` are computed from it, so an approximate clock
would be a silently wrong baud).  It searches as Project Trellis's ``ecppll`` does and picks what
``ecppll`` picks (the first exact solution whose VCO is nearest 600 MHz, in the order
CLKI_DIV, CLKFB_DIV, CLKOP_DIV, CLKOS_DIV), with exact integer arithmetic where ``ecppll`` uses
floats:

* CLKOP out, fed back (``ecppll``'s default):
  ``fout = fin / CLKI_DIV * CLKFB_DIV`` and ``VCO = fout * CLKOP_DIV``;
* when no such solution is exact, CLKOP fed back only and CLKOS out (``ecppll --highres``):
  ``VCO = fin / CLKI_DIV * CLKFB_DIV * CLKOP_DIV`` and ``fout = VCO / CLKOS_DIV``. 25 MHz to 16 MHz
  needs it: CLKOP alone would need CLKI_DIV = 25, a 1 MHz phase detector, below its 3.125 MHz.

Limits (ECP5 family data sheet, sysCLOCK PLL; the ranges ``ecppll`` uses): CLKI_DIV 1..128,
CLKFB_DIV 1..80, output dividers 1..128; phase detector ``fin / CLKI_DIV`` 3.125..400 MHz;
VCO 400..800 MHz; outputs 3.125..400 MHz, the fed-back CLKOP of the second form 10..400 MHz
(``ecppll``'s output minimum).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from amaranth import Module, Signal
from amaranth.hdl import Instance
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["PLLParams", "ecp5_pll", "makes_exactly", "ECP5PLL"]

MHZ = 1_000_000
CLKI_DIVS = range(1, 129)
CLKFB_DIVS = range(1, 81)
OUTPUT_DIVS = range(1, 129)
PFD_HZ = (3_125_000, 400 * MHZ)
VCO_HZ = (400 * MHZ, 800 * MHZ)
OUTPUT_HZ = (3_125_000, 400 * MHZ)
FEEDBACK_HZ = (10 * MHZ, 400 * MHZ)      # a CLKOP that only closes the loop (ecppll --highres)
VCO_PREFERRED_HZ = 600 * MHZ             # ecppll's tie-break: the VCO nearest mid-range


@dataclass(frozen=True)
class PLLParams:
    """One EHXPLLL setting with feedback from CLKOP.

    Members
    -------
    clki_div, clkfb_div, clkop_div : int
        The input, feedback and CLKOP dividers.
    clkop_cphase : int
        CLKOP's coarse phase in VCO cycles (half its period, as ``ecppll`` sets it).
    vco_hz, fout_hz : Fraction
        The VCO and the design clock (``fout_hz`` is exactly what was asked for).
    clkos_div : int or None
        None: the design clock is CLKOP.  Otherwise the design clock is CLKOS, divided by this from
        the VCO, and CLKOP only closes the loop.
    clkos_cphase : int
        CLKOS's coarse phase: CLKOP's, the 0-degree secondary output of ``ecppll``.
    """

    clki_div: int
    clkfb_div: int
    clkop_div: int
    clkop_cphase: int
    vco_hz: Fraction
    fout_hz: Fraction
    clkos_div: int | None = None
    clkos_cphase: int = 0

    @property
    def output(self) -> str:
        """The EHXPLLL port the design clock leaves by: ``CLKOP`` or ``CLKOS``."""
        return "CLKOP" if self.clkos_div is None else "CLKOS"


def _within(value, limits) -> bool:
    return limits[0] <= value <= limits[1]


def _loops(fin_hz: int):
    """Every (CLKI_DIV, CLKFB_DIV, CLKOP_DIV, VCO) the loop can lock at, in ``ecppll``'s order."""
    for clki_div in CLKI_DIVS:
        pfd = Fraction(fin_hz, clki_div)
        if not _within(pfd, PFD_HZ):
            continue
        for clkfb_div in CLKFB_DIVS:
            fed_back = pfd * clkfb_div
            lo = max(1, -(-VCO_HZ[0] // fed_back))      # CLKOP_DIVs that put the VCO in range
            hi = min(OUTPUT_DIVS[-1], VCO_HZ[1] // fed_back)
            for clkop_div in range(int(lo), int(hi) + 1):
                yield clki_div, clkfb_div, clkop_div, fed_back * clkop_div


def _simple(fin_hz: int, fout_hz: int):
    """Exact solutions with CLKOP out and fed back."""
    for clki_div, clkfb_div, clkop_div, vco in _loops(fin_hz):
        fout = vco / clkop_div
        if fout == fout_hz and _within(fout, OUTPUT_HZ):
            yield PLLParams(clki_div, clkfb_div, clkop_div, clkop_div // 2, vco, fout)


def _highres(fin_hz: int, fout_hz: int):
    """Exact solutions with CLKOP fed back only and CLKOS out."""
    for clki_div, clkfb_div, clkop_div, vco in _loops(fin_hz):
        clkos_div = vco / fout_hz
        if (_within(vco / clkop_div, FEEDBACK_HZ) and clkos_div.denominator == 1
                and clkos_div in OUTPUT_DIVS and _within(fout_hz, OUTPUT_HZ)):
            yield PLLParams(clki_div, clkfb_div, clkop_div, clkop_div // 2, vco, Fraction(fout_hz),
                            int(clkos_div), clkop_div // 2)


def _first_nearest_600(solutions):
    return min(solutions, key=lambda p: abs(p.vco_hz - VCO_PREFERRED_HZ), default=None)


def _solve(fin_hz: int, fout_hz: int) -> PLLParams | None:
    return _first_nearest_600(_simple(fin_hz, fout_hz)) or _first_nearest_600(_highres(fin_hz, fout_hz))


def makes_exactly(fin_hz: int, fout_hz: int) -> bool:
    """Whether the PLL makes exactly ``fout_hz`` from ``fin_hz`` (:func:`ecp5_pll` without the error)."""
    return _within(fout_hz, OUTPUT_HZ) and _solve(fin_hz, fout_hz) is not None


def _nearest(fin_hz: int, fout_hz: int) -> list[Fraction]:
    """The design clocks nearest ``fout_hz`` below and above that the PLL makes from ``fin_hz``."""
    outputs = set()
    for _, _, clkop_div, vco in _loops(fin_hz):
        outputs.add(vco / clkop_div)
        if _within(vco / clkop_div, FEEDBACK_HZ):       # CLKOS out: the VCO's dividers nearest the target
            floor = vco // fout_hz
            outputs.update(vco / d for d in (floor, floor + 1) if d in OUTPUT_DIVS)
    made = sorted(f for f in outputs if _within(f, OUTPUT_HZ))
    return [f for f in made if f < fout_hz][-1:] + [f for f in made if f > fout_hz][:1]


def _mhz(hz) -> str:
    return f"{_attr_mhz(hz)} MHz"


def ecp5_pll(fin_hz: int, fout_hz: int) -> PLLParams:
    """The EHXPLLL dividers that make exactly ``fout_hz`` from an ``fin_hz`` oscillator.

    Parameters
    ----------
    fin_hz, fout_hz : int
        The oscillator and the design clock, in Hz.

    Returns
    -------
    PLLParams
        ``ecppll``'s choice: CLKOP out when it can be exact, else CLKOS out.

    Raises
    ------
    ValueError
        One line naming the nearest frequencies the PLL can make, when none is exact (or the
        frequencies are out of the PLL's ranges).
    """
    for name, value in (("fin_hz", fin_hz), ("fout_hz", fout_hz)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive integer (Hz), not {value!r}")
    if not _within(fout_hz, OUTPUT_HZ):
        raise ValueError(f"the ECP5 PLL makes {_mhz(OUTPUT_HZ[0])} to {_mhz(OUTPUT_HZ[1])}, not {_mhz(fout_hz)}")
    params = _solve(fin_hz, fout_hz)
    if params is not None:
        return params
    nearest = _nearest(fin_hz, fout_hz)
    if not nearest:
        raise ValueError(f"the ECP5 PLL cannot run from a {_mhz(fin_hz)} input (its phase detector "
                         f"takes {_mhz(PFD_HZ[0])} to {_mhz(PFD_HZ[1])})")
    raise ValueError(f"the ECP5 PLL cannot make exactly {_mhz(fout_hz)} from {_mhz(fin_hz)}; "
                     f"the nearest it makes: {' and '.join(_mhz(f) for f in nearest)}")


class ECP5PLL(wiring.Component):
    """An ECP5 ``EHXPLLL`` making exactly ``fout_hz`` from an ``fin_hz`` clock (:func:`ecp5_pll`).

    Parameters
    ----------
    fin_hz, fout_hz : int
        The input clock and the output clock, in Hz.

    Members
    -------
    clk_in : In(1)
        The input clock (from a clock pin's buffer).
    clk_out : Out(1)
        The output clock.
    locked : Out(1)
        High while the PLL is locked; hold the output's domain in reset until it is.
    params : PLLParams
        The dividers used.
    """

    def __init__(self, fin_hz: int, fout_hz: int):
        self.fin_hz, self.fout_hz = fin_hz, fout_hz
        try:
            self.params = ecp5_pll(fin_hz, fout_hz)
        except ValueError:
            self._MustUse__silence = True       # refused, not forgotten: no "never used" warning
            raise
        super().__init__({"clk_in": In(1), "clk_out": Out(1), "locked": Out(1)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.pll = Instance("EHXPLLL", **self._attributes(), **self._parameters(), **self._ports())
        return m

    def _attributes(self) -> dict:
        """The synthesis attributes ``ecppll`` and Lattice's tools put on the PLL."""
        return {"a_FREQUENCY_PIN_CLKI": _attr_mhz(self.fin_hz),
                f"a_FREQUENCY_PIN_{self.params.output}": _attr_mhz(self.fout_hz),
                "a_ICP_CURRENT": "12", "a_LPF_RESISTOR": "8", "a_MFG_ENABLE_FILTEROPAMP": "1",
                "a_MFG_GMCREF_SEL": "2"}

    def _parameters(self) -> dict:
        p = self.params
        params = {"p_PLLRST_ENA": "DISABLED", "p_INTFB_WAKE": "DISABLED", "p_STDBY_ENABLE": "DISABLED",
                  "p_DPHASE_SOURCE": "DISABLED", "p_OUTDIVIDER_MUXA": "DIVA", "p_OUTDIVIDER_MUXB": "DIVB",
                  "p_OUTDIVIDER_MUXC": "DIVC", "p_OUTDIVIDER_MUXD": "DIVD",
                  "p_CLKI_DIV": p.clki_div, "p_CLKFB_DIV": p.clkfb_div, "p_FEEDBK_PATH": "CLKOP",
                  "p_CLKOP_ENABLE": "ENABLED", "p_CLKOP_DIV": p.clkop_div,
                  "p_CLKOP_CPHASE": p.clkop_cphase, "p_CLKOP_FPHASE": 0}
        if p.clkos_div is not None:
            params.update({"p_CLKOS_ENABLE": "ENABLED", "p_CLKOS_DIV": p.clkos_div,
                           "p_CLKOS_CPHASE": p.clkos_cphase, "p_CLKOS_FPHASE": 0})
        return params

    def _ports(self) -> dict:
        # CLKOP closes the loop through CLKFB in both forms (FEEDBK_PATH "CLKOP")
        if self.params.clkos_div is None:
            clkop, outputs = self.clk_out, {"o_CLKOP": self.clk_out}
        else:
            clkop = Signal(name="clkop")
            outputs = {"o_CLKOP": clkop, "o_CLKOS": self.clk_out}
        # the phase inputs as ecppll ties them when dynamic phase shifting is off
        return {"i_CLKI": self.clk_in, "i_CLKFB": clkop, "i_RST": 0, "i_STDBY": 0, "i_PHASESEL0": 0,
                "i_PHASESEL1": 0, "i_PHASEDIR": 1, "i_PHASESTEP": 1, "i_PHASELOADREG": 1,
                "i_PLLWAKESYNC": 0, "i_ENCLKOP": 0, "o_LOCK": self.locked, **outputs}


def _attr_mhz(hz) -> str:
    """A frequency as the FREQUENCY_PIN_* attributes write it: MHz, no trailing zeros."""
    return f"{float(Fraction(hz) / MHZ):.6f}".rstrip("0").rstrip(".")
