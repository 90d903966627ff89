"""How far to trust each catalog entry: the evidence behind it and the disputed readings it depends on.

Users of an emulator ask, per instruction, whether its answer is exact, approximate or unsupported.
This module answers with data, one record per kind of evidence:

- :data:`MEASURED_SETS`: dot-adds measured on real GPUs and kept in the repository
  (``tests/data/<folder>/<gpu>_<format>.npz``), each mapped to the catalog entry that ran, with how
  many of its rows that entry reproduces bit for bit (``tests/golden/test_provenance.py`` recomputes every
  count from the data, so a claim here cannot go stale);
- :data:`LIVE_CHECKS`: comparisons run live on a GPU through PyTorch (``python -m probe compare
  ... --backend torch``), with the record of the run under ``docs/``;
- the catalog itself: whether an entry is a native instruction or the observed behaviour of a compiled
  path (:attr:`golden.catalog.Instruction.native`), and which of the documented disagreements about
  special values its datapath depends on (:func:`golden.algorithms.disputed_rules`).

:func:`assess` combines them into a :class:`Provenance` per entry (``ins.provenance``; this module reads
the catalog only through its arguments, so the catalog can import it).  Its ``basis`` is the strongest
evidence, in this order:

``measured``
    the entry reproduces dot-adds measured on a GPU of its architecture (the sets are named);
``live``
    the entry was compared live with a GPU of its architecture (which, how many dot-adds);
``datapath``
    not checked itself, but its datapath (:class:`golden.catalog.Datapath`: same parameters and
    formats, hence the same bits on every input) equals that of an entry of the same architecture that
    was measured or checked live;
``paper``
    read from the paper's tables and docs/spec.md's facts (§4) only;
``compiled``
    not a native instruction: the behaviour a compiler's lowering showed on a GPU (always with data);
``reference``
    an architecture the paper left out, whose entries follow a reference model (not measured, not in
    the paper) and were compared with it bit for bit (:data:`REFERENCE_MODELS`: which model, the record).
``design``
    an instruction of your own (:mod:`golden.custom`): golden computes the Params it states; no GPU is
    claimed, so there is nothing to measure (always ``inferred``).

and its ``status`` says how the evidence came out: ``verified`` (every check bit for bit),
``inferred`` (no check of its own) or ``approximate`` (some measured data are not reproduced; the sets
and counts are named).
"""

from __future__ import annotations

from dataclasses import dataclass

from .rules import Word


class Basis(Word):
    """``Provenance.basis``: the strongest evidence behind an entry, strongest first (the module's docstring)."""

    MEASURED = "measured"      # reproduces dot-adds measured on a GPU of its architecture
    LIVE = "live"              # compared live with a GPU of its architecture
    DATAPATH = "datapath"      # the datapath of a measured or live-checked entry of the same architecture
    PAPER = "paper"            # the paper's tables and docs/spec.md only
    COMPILED = "compiled"      # not native: a compiler's lowering as observed on a GPU
    REFERENCE = "reference"    # an architecture the paper left out, compared with a reference model
    DESIGN = "design"          # an instruction of your own (golden.custom)


class Standing(Word):
    """``Provenance.status``: how the evidence came out."""

    VERIFIED = "verified"          # every check bit for bit
    INFERRED = "inferred"          # no check of its own
    APPROXIMATE = "approximate"    # some measured data are not reproduced


BASES = tuple(Basis)
STATUSES = tuple(Standing)

SOURCE = "Khattak and Mikaitis, MATLAB-tensor-core project (BSD 2-clause)"


@dataclass(frozen=True)
class MeasuredSet:
    """Dot-adds measured on a real GPU and the catalog entry they exercise.

    Members
    -------
    gpu, fmt, out : str
        The set's GPU, operand format and result (``"fp32"`` or ``"fp16"``) as the source names them.
    arch, instruction : str
        The catalog entry that ran.
    rows : int
        Dot-adds in the set.
    reproduced : int or None
        Rows the entry reproduces bit for bit; None means all of them.
    c_zero : bool
        The GPU ran with c = 0 (the set's c column is to be ignored).
    folder : str
        Where the converted copy lives, under ``tests/data/``.
    note : str
    """

    gpu: str
    fmt: str
    out: str
    arch: str
    instruction: str
    rows: int = 5000
    reproduced: int | None = None
    c_zero: bool = False
    folder: str = "gpu_vectors"
    note: str = ""

    @property
    def id(self) -> str:
        return f"{self.gpu}-{self.fmt}-d{self.out}"

    @property
    def path(self) -> str:
        """The data file, relative to the repository."""
        return f"tests/data/{self.folder}/{self.gpu}_{self.fmt}.npz"

    @property
    def matched(self) -> int:
        return self.rows if self.reproduced is None else self.reproduced

    @property
    def exact(self) -> bool:
        return self.matched == self.rows

    def __str__(self) -> str:
        return f"{self.id} ({self.matched:,} of {self.rows:,}{', c = 0' if self.c_zero else ''})"


def _measured_sets() -> tuple[MeasuredSet, ...]:
    """The source README's table of which instruction each set exercises (checked by the tests)."""
    out = [MeasuredSet("V100", "fp16", "fp32", "volta", "HMMA.884.F32.F32"),
           MeasuredSet("V100", "fp16", "fp16", "volta", "HMMA.884.F16.F16")]
    for gpu, arch in (("A100", "ampere"), ("Ada", "ada")):
        out += [MeasuredSet(gpu, "fp16", "fp32", arch, "HMMA.1688.F32"),
                MeasuredSet(gpu, "fp16", "fp16", arch, "HMMA.1688.F16"),
                MeasuredSet(gpu, "bf16", "fp32", arch, "HMMA.1688.F32.BF16"),
                MeasuredSet(gpu, "tf32", "fp32", arch, "HMMA.1684.F32.TF32")]
    for f8 in ("E4M3", "E5M2"):
        out += [MeasuredSet("Ada", f8, "fp32", "ada", f"QMMA.16832.F32.{f8}.{f8}"),
                MeasuredSet("Ada", f8, "fp16", "ada", f"QMMA.16832.F16.{f8}.{f8}"),
                MeasuredSet("H100", f8, "fp32", "hopper", f"QGMMA.64xNx32.F32.{f8}.{f8}", c_zero=True)]
    for gpu, arch in (("H100", "hopper"), ("B200", "blackwell")):
        out += [MeasuredSet(gpu, "fp16", "fp32", arch, "HMMA.16816.F32"),
                MeasuredSet(gpu, "fp16", "fp16", arch, "HMMA.16816.F16"),
                MeasuredSet(gpu, "bf16", "fp32", arch, "HMMA.16816.F32.BF16"),
                MeasuredSet(gpu, "tf32", "fp32", arch, "HMMA.1684.F32.TF32")]
    # fp8 mma.sync, a compiled path on both GPUs (docs/gpu/unresolved_fp8.md): fp8 to f16, two
    # HMMA.16816 over k % 4 < 2 then k % 4 >= 2 from +0, then c by one RNE add
    out += [MeasuredSet("B200", "E4M3", "fp32", "blackwell", "MMA.16832.F32.E4M3.E4M3",
                        folder="gpu_vectors_unresolved"),
            MeasuredSet("B200", "E4M3", "fp16", "blackwell", "MMA.16832.F16.E4M3.E4M3",
                        folder="gpu_vectors_unresolved"),
            MeasuredSet("H100", "E4M3", "fp16", "hopper", "MMA.16832.F16.E4M3.E4M3",
                        folder="gpu_vectors_unresolved")]
    return tuple(out)


MEASURED_SETS: tuple[MeasuredSet, ...] = _measured_sets()


@dataclass(frozen=True)
class LiveCheck:
    """A comparison run live on a GPU.

    Members
    -------
    gpu : str
        The device as the run printed it.
    arch, instruction : str
    dot_adds, mismatches : int
    record : str
        The run's output, relative to the repository.
    how : str
        What ran (the command, the operand distributions).
    """

    gpu: str
    arch: str
    instruction: str
    dot_adds: int
    mismatches: int
    record: str
    how: str = ""

    def __str__(self) -> str:
        return f"{self.gpu}: {self.dot_adds:,} dot-adds, {self.mismatches:,} mismatches ({self.record})"


_H100 = "NVIDIA H100 80GB HBM3"
_H100_HOW = ("python -m probe compare hopper ... --backend torch -n 4096 (cuBLAS, c = 0), "
             "uniform bit patterns and normal values, 16,777,216 dot-adds each")

LIVE_CHECKS: tuple[LiveCheck, ...] = tuple(
    LiveCheck(_H100, "hopper", name, 2 * 16_777_216, 0, "docs/gpu/h100_compare.txt", _H100_HOW)
    for name in ("HGMMA.64xNx16.F32", "HGMMA.64xNx16.F32.BF16", "QGMMA.64xNx32.F32.E4M3.E4M3",
                 "QGMMA.64xNx32.F32.E4M3.E5M2", "QGMMA.64xNx32.F32.E5M2.E4M3")
) + (
    # with uniform f32 bit patterns cuBLAS converts f32 to tf32 itself (docs/gpu/README.md), so only the
    # run on tf32 values checks the instruction
    LiveCheck(_H100, "hopper", "HGMMA.64xNx8.F32.TF32", 16_777_216, 0, "docs/gpu/h100_compare.txt",
              "python -m probe compare hopper ... --backend torch -n 4096 --vectors normal (tf32 values)"),
)


@dataclass(frozen=True)
class ReferenceModel:
    """The reference model an architecture's entries follow, where the paper has none of them.

    Members
    -------
    arch : str
    model : str
        The model and its pinned version (``pip install`` spelling).
    record : str
        The comparison's output, relative to the repository (one row per instruction and vector kind).
    how : str
        The command that wrote it.
    """

    arch: str
    model: str
    record: str
    how: str

    def __str__(self) -> str:
        return f"reference model (not measured, not in the paper): {self.model}, compared bit for bit ({self.record})"


REFERENCE_MODELS: dict[str, ReferenceModel] = {
    "cdna1": ReferenceModel("cdna1", "mmasim==2.1.1", "docs/cdna1/mmasim_check.txt",
                            "python tools/mmasim_check.py -n 20000 (every CDNA1 instruction, every vector kind)"),
}


@dataclass(frozen=True)
class Provenance:
    """The evidence behind one catalog entry.

    Members
    -------
    basis : Basis
        See the module's docstring.
    status : Standing
    measured : tuple of MeasuredSet
    live : tuple of LiveCheck
    same_datapath_as : tuple of str
        Names of checked entries of the same architecture with this entry's datapath.
    disputed : tuple of str
        The documented disagreements this entry's result depends on (names of
        :func:`golden.algorithms.disputed_rules`); the catalog follows the paper on each.
    same_lowering_as : tuple of str
        For a compiled path without data of its own: the measured entries (``arch name``) whose
        lowering (parameters) it shares.
    reference : ReferenceModel or None
        The reference model the entry follows (basis ``reference``).
    """

    basis: Basis
    status: Standing
    measured: tuple = ()
    live: tuple = ()
    same_datapath_as: tuple = ()
    disputed: tuple = ()
    same_lowering_as: tuple = ()
    reference: ReferenceModel | None = None

    def summary(self) -> str:
        """One short line, as ``python -m golden list`` shows it."""
        if self.measured:
            ev = ", ".join(str(s) for s in self.measured)
        elif self.live:
            ev = ", ".join(f"{c.dot_adds:,} dot-adds live on {c.gpu}" for c in self.live)
        elif self.same_datapath_as:
            ev = "as " + ", ".join(self.same_datapath_as[:2]) + (" ..." if len(self.same_datapath_as) > 2 else "")
        elif self.same_lowering_as:
            ev = "the lowering measured on " + ", ".join(self.same_lowering_as[:2]) + \
                (" ..." if len(self.same_lowering_as) > 2 else "")
        elif self.reference:
            ev = f"reference model (not measured, not in the paper): {self.reference.model}"
        else:
            ev = "paper and docs/spec.md only"
        extra = f"; disputed: {', '.join(self.disputed)}" if self.disputed else ""
        return f"{self.status} ({self.basis}: {ev}{extra})"

    def describe(self) -> str:
        """Every piece of evidence, one per line."""
        lines = [f"status: {self.status}", f"basis: {self.basis}"]
        lines += [f"measured: {s} in {s.path}{' - ' + s.note if s.note else ''}" for s in self.measured]
        lines += [f"live: {c}; {c.how}" for c in self.live]
        if self.same_datapath_as:
            lines.append("same datapath as: " + ", ".join(self.same_datapath_as))
        if self.same_lowering_as:
            lines.append("same lowering as: " + ", ".join(self.same_lowering_as))
        if self.reference:
            lines.append(f"reference: {self.reference}; {self.reference.how}")
        lines += [f"disputed: {r}" for r in self.disputed]
        return "\n".join(lines)


def _evidence(catalog, lookup):
    """Evidence by catalog entry, and which datapaths of which architectures were checked."""
    key = id(catalog)
    if key not in _EVIDENCE:
        measured: dict[tuple[str, str], list] = {}
        live: dict[tuple[str, str], list] = {}
        for s in MEASURED_SETS:
            ins = lookup(s.arch, s.instruction)
            measured.setdefault((ins.arch, ins.name), []).append(s)
        for c in LIVE_CHECKS:
            ins = lookup(c.arch, c.instruction)
            live.setdefault((ins.arch, ins.name), []).append(c)
        checked: dict[tuple, list[str]] = {}
        for ins in catalog:
            if (ins.arch, ins.name) in measured or (ins.arch, ins.name) in live:
                checked.setdefault((ins.arch, ins.datapath), []).append(ins.name)
        _EVIDENCE[key] = measured, live, checked
    return _EVIDENCE[key]


_EVIDENCE: dict = {}        # cleared by a test that plants a stale claim


def assess(ins, catalog, lookup) -> Provenance:
    """The :class:`Provenance` of ``ins``, an entry of ``catalog`` (``lookup`` finds entries by name)."""
    from .algorithms import disputed_rules
    if ins.arch == "custom":                  # golden.catalog.CUSTOM (not imported: the catalog imports this)
        return Provenance(Basis.DESIGN, Standing.INFERRED, (), (), (), tuple(disputed_rules(ins)), (), None)
    measured, live, checked = _evidence(catalog, lookup)
    key = (ins.arch, ins.name)
    sets, checks = tuple(measured.get(key, ())), tuple(live.get(key, ()))
    same = tuple(n for n in checked.get((ins.arch, ins.datapath), ()) if n != ins.name)
    if not getattr(ins, "native", True):
        basis = Basis.COMPILED
    elif sets:
        basis = Basis.MEASURED
    elif checks:
        basis = Basis.LIVE
    elif same:
        basis = Basis.DATAPATH
    elif ins.arch in REFERENCE_MODELS:
        basis = Basis.REFERENCE
    else:
        basis = Basis.PAPER
    if not all(s.exact for s in sets) or any(c.mismatches for c in checks):
        status = Standing.APPROXIMATE
    elif sets or checks:
        status = Standing.VERIFIED
    else:
        status = Standing.INFERRED
    lowering = ()
    if basis is Basis.COMPILED and not sets:
        lowering = tuple(f"{x.arch} {x.name}" for x in catalog if not x.native and x.params == ins.params
                         and (x.arch, x.name) in measured)
    return Provenance(basis, status, sets, checks, same if basis is Basis.DATAPATH else (),
                      tuple(disputed_rules(ins)), lowering,
                      REFERENCE_MODELS[ins.arch] if basis is Basis.REFERENCE else None)


def counts(entries) -> dict[tuple[Basis, Standing], int]:
    """How many of ``entries`` (catalog entries) have each (basis, status)."""
    out: dict[tuple[Basis, Standing], int] = {}
    for ins in entries:
        p = ins.provenance
        out[p.basis, p.status] = out.get((p.basis, p.status), 0) + 1
    return out
