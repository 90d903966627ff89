"""One descriptor per dot-add algorithm, and the registry where every layer adds its part.

An algorithm is described once, in golden (:data:`ALGORITHMS`, filled by :mod:`golden.algorithms`):
its golden pass function, the :class:`golden.Params` fields it reads, the fields it needs, whether
``pass_size`` makes a chain of passes, and its own checks.  The layers above golden cannot be
imported here (golden is the bottom layer), so each registers its part of every algorithm with
:func:`register` when it is imported:

========================  ===================================================================
part (:class:`Part`)      who registers it, and what it is
========================  ===================================================================
``HW_DATAPATH``           hw/unit.py: the datapath class that builds it (a ``DatapathPipeline``)
``HW_LOWERED``            hw/unit.py: the class that builds its compiled path (``Algorithm.lowering``),
                          or None
``HW_UNION``              hw/unit.py: True when the datapath sees a and b only decoded, so a
                          tensor core shares it between format pairs through a union decoder
``PIPELINING``            hw/unit.py: the stage kinds (:class:`hw.pipelining.StageKind`) whose
                          register placements its datapath reads
``FORMAL``                formal/catalog.py: ``{stage class: (kind, parameters function)}`` for the
                          stages of its own that the formal proofs take (may be empty)
``PROBE``                 probe/algorithms.py: how the probe recognises it and infers its fields
``REFERENCE``             tests/support/reference_model.py: the independent reference model's function
``COVER``                 golden/cover/__init__.py: its cover points (a tuple of
                          :class:`golden.cover.model.CoverPoint`; golden.coverage measures them)
========================  ===================================================================

A layer asked for a part an algorithm lacks raises :class:`Unsupported`, naming the layer and the
algorithm: the named refusal of a layer that does not support it.  Golden's own compiled kernels are
chosen by :attr:`Algorithm.kernel_code` (explicit, never the order of the describe() calls).

``tests/golden/test_descriptors.py`` checks that every algorithm has every part;
``tests/project/test_extending.py`` registers a toy algorithm and finds it, or each layer's refusal,
everywhere; docs/extending.md is the recipe for a new algorithm.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum

__all__ = ["Algorithm", "ALGORITHMS", "KernelCode", "Part", "Unsupported", "describe", "withdraw", "register",
           "part", "parts", "missing_parts"]


class KernelCode(IntEnum):
    """The compiled kernels' algorithm codes (``golden.kernels.spec``'s ``prm[P_BASE]``), one per row
    kernel of :mod:`golden.kernels`; an algorithm names its own in :attr:`Algorithm.kernel_code`.  A
    new compiled kernel is a new member (the next free number: the codes are the kernels' ABI)."""

    SFMA = 0
    GPS = 1
    FDA = 2
    GDFS = 3
    FDRDA = 4
    GFDRDA = 5


class Unsupported(NotImplementedError, LookupError):
    """A layer's named refusal: it has nothing for this algorithm (``layer``: the part it lacks,
    e.g. ``hw.datapath``).  A NotImplementedError (hw's refusals) and a LookupError (a missing part)."""

    def __init__(self, algorithm: str, layer: str, detail: str = ""):
        self.algorithm, self.layer = algorithm, str(layer)
        super().__init__(f"{self.layer} has no part for algorithm {algorithm}"
                         f"{f' ({detail})' if detail else ''}; docs/extending.md, 'A new algorithm'")


class Part(StrEnum):
    """A layer's part of an algorithm descriptor.  The value is the part's name in the error for a
    missing part (``hw.datapath``), not a module: the modules that register each part are listed in
    this module's docstring."""

    HW_DATAPATH = "hw.datapath"
    HW_LOWERED = "hw.lowered"
    HW_UNION = "hw.union"
    PIPELINING = "hw.pipelining"
    FORMAL = "formal.stages"
    PROBE = "probe.infer"
    REFERENCE = "tests.support.reference_model"
    COVER = "golden.cover"


@dataclass(frozen=True)
class Algorithm:
    """What golden knows of one base algorithm.

    Members
    -------
    name : str
        The paper's name (``FDA``); a chain of passes is ``"Co" + name``.
    passes : callable
        One pass: ``passes(datapath, a, b, c, scale_a, scale_b, trace)`` -> d bits ``[R]``, on
        ``[R, L]`` operands; ``datapath`` is the pass's :class:`golden.Datapath` (``k`` = L, the Params
        at ``datapath.params``).  :func:`golden.algorithms.run_datapath` runs the chain of passes.
    fields_read : tuple of str
        The Params fields that can change a result; the others are carried, never read.
    requires : dict
        ``{field: what it is}``: fields that must not be None.
    chained : bool
        Whether ``pass_size < K`` makes a chain of passes (SFMA and GPS ignore ``pass_size``).
    exact_nan : bool
        Whether its NaN results are the canonical NaN, bit for bit.
    exact_F : bool
        Whether ``F="exact"`` (no alignment window) is a design of it.
    flushes : bool
        Whether it flushes subnormals whatever the params say (GPS): the probe does not call a
        flushed subnormal a behaviour outside it.
    lowering : bool
        Whether the compiled-path fields (``operand_format``, ``pass_interleave``, ``c_last``) apply.
    check : callable or None
        ``check(params)`` raises ValueError for a design it cannot run (after the fields' own checks).
    describes : dict
        ``{field: values}`` of fields it does not read whose values state what it does anyway (GPS
        flushes subnormals; SFMA's IEEE operations sign zeros as IEEE does): a catalog entry may say so.
        Any other value of a field it does not read, other than the default, is refused
        (:func:`golden.params.check_unused`).
    summary : str
        One line for the docs and error messages.
    kernel_code : KernelCode or None
        The compiled kernel that computes it (:class:`KernelCode`); None: golden runs it on the numpy
        path only.
    exact_terms : callable or None
        ``exact_terms(params, L) -> (int_bits, terms)``: a pass of ``L`` products sums ``terms`` terms
        of ``int_bits`` integer bits at ``F`` fraction bits (the bound that keeps its sums exact in
        float64); None: ``(2, L)``.  Read only when it reads ``F``.
    check_formats : callable or None
        ``check_formats(params, design)`` raises :class:`golden.params.ParamsSpecError` for formats
        (or block scales) it cannot compute in; ``design`` has ``where`` (for the message), ``fa``,
        ``fb``, ``fc``, ``fd``, ``fs`` (:class:`golden.formats.Format` or None), ``block``, ``k`` and
        ``L`` (the products of one pass).
    disputed : tuple of str
        The :data:`golden.algorithms.DISPUTED_RULES` its results can depend on (``Params.specials``).
    """

    name: str
    passes: Callable
    fields_read: tuple
    requires: dict = field(default_factory=dict)
    chained: bool = True
    exact_nan: bool = False
    exact_F: bool = False
    flushes: bool = False
    lowering: bool = False
    check: Callable | None = None
    describes: dict = field(default_factory=dict)
    summary: str = ""
    kernel_code: KernelCode | None = None
    exact_terms: Callable | None = None
    check_formats: Callable | None = None
    disputed: tuple = ()

    def terms(self, params, L: int) -> tuple[int, int]:
        """``(int_bits, terms)`` of a pass of ``L`` products (:attr:`exact_terms`)."""
        return (2, L) if self.exact_terms is None else self.exact_terms(params, L)


ALGORITHMS: dict[str, Algorithm] = {}
_PARTS: dict[str, dict[Part, object]] = {}


def describe(algorithm: Algorithm) -> Algorithm:
    """Add ``algorithm`` to :data:`ALGORITHMS` (golden.algorithms does, once per algorithm)."""
    if algorithm.name in ALGORITHMS:
        raise ValueError(f"algorithm {algorithm.name} is described twice")
    if algorithm.kernel_code is not None:
        code = KernelCode(algorithm.kernel_code)
        taken = [a.name for a in ALGORITHMS.values() if a.kernel_code == code]
        if taken:
            raise ValueError(f"kernel code {code.name} of {algorithm.name} is {taken[0]}'s already")
    ALGORITHMS[algorithm.name] = algorithm
    _PARTS.setdefault(algorithm.name, {})
    return algorithm


def withdraw(name: str) -> None:
    """Remove algorithm ``name`` and every part registered for it (a test's toy algorithm)."""
    _known(name)
    del ALGORITHMS[name]
    _PARTS.pop(name, None)


def _known(name: str) -> None:
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; valid: {', '.join(ALGORITHMS)}")


def register(name: str, what: Part, value) -> None:
    """A layer's part ``what`` of algorithm ``name`` (registered again: the same value, or an error)."""
    _known(name)
    what = Part(what)
    have = _PARTS[name].get(what, value)
    if have is not value and have != value:
        raise ValueError(f"{what} of {name} is registered twice with different values")
    _PARTS[name][what] = value


def part(name: str, what: Part):
    """The part ``what`` of algorithm ``name``; :class:`Unsupported` (naming the layer, the algorithm
    and the algorithms that have it) when its layer registered none."""
    _known(name)
    try:
        return _PARTS[name][Part(what)]
    except KeyError:
        have = [n for n, p in _PARTS.items() if what in p]
        raise Unsupported(name, what, f"registered for: {', '.join(have) or 'none'}") from None


def parts(what: Part) -> dict:
    """``{algorithm: value}`` of every algorithm that registered ``what``, in :data:`ALGORITHMS` order."""
    what = Part(what)
    return {n: _PARTS[n][what] for n in ALGORITHMS if what in _PARTS[n]}


def missing_parts() -> list[tuple[str, Part]]:
    """``(algorithm, part)`` for every part not registered (import the layers first)."""
    return [(n, p) for n in ALGORITHMS for p in Part if p not in _PARTS[n]]
