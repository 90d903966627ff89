"""The instruction catalog: every (architecture, instruction) cell of docs/spec.md's two tables (§1, §2).

Instructions are data.  Each NVIDIA row names its paper (SASS) form, PTX form,
shape and types; the algorithm parameters follow from the architecture's
datapath (docs/spec.md §4: F, e_zero, bytes per pass).  Each AMD row names its
CDNA3 and CDNA2 forms and the algorithm on each.  The RTL generator reads the
same :class:`Instruction` objects.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace

from .algorithms import Params
from .datapath import Datapath
from .descriptors import ALGORITHMS
from .formats import Format, get_format
from .params import check_params_for
from .provenance import Provenance, assess
from .rules import EXACT, Overflow, Rounding, ZeroSign

ARCHITECTURES = ("volta", "turing", "ampere", "ada", "hopper", "blackwell", "rtx_blackwell", "cdna1", "cdna2",
                 "cdna3")
NVIDIA = ARCHITECTURES[:7]
AMD = ARCHITECTURES[7:]
CUSTOM = "custom"        # the architecture of an instruction of your own (golden.custom): its name is its spec

_ARCH_ALIASES = {
    "sm_70": "volta", "sm70": "volta", "v100": "volta",
    "sm_75": "turing", "sm75": "turing", "t4": "turing",
    "sm_80": "ampere", "sm80": "ampere", "a100": "ampere",
    "sm_89": "ada", "sm89": "ada", "ada_lovelace": "ada", "lovelace": "ada", "rtx4090": "ada",
    "sm_90": "hopper", "sm90": "hopper", "sm_90a": "hopper", "h100": "hopper",
    "sm_100": "blackwell", "sm100": "blackwell", "sm_100a": "blackwell", "b200": "blackwell",
    "sm_120": "rtx_blackwell", "sm120": "rtx_blackwell", "rtx-blackwell": "rtx_blackwell",
    "rtxblackwell": "rtx_blackwell", "sm_120a": "rtx_blackwell",
    "mi100": "cdna1", "gfx908": "cdna1", "arcturus": "cdna1",
    "mi200": "cdna2", "mi250": "cdna2", "mi250x": "cdna2", "gfx90a": "cdna2",
    "mi300": "cdna3", "mi300x": "cdna3", "gfx942": "cdna3",
}


def canonical_arch(arch: str) -> str:
    """Case-insensitive architecture name (or alias) to its canonical form."""
    key = str(arch).strip().lower().replace(" ", "_")
    key = _ARCH_ALIASES.get(key, key)
    if key == CUSTOM:
        return key
    if key not in ARCHITECTURES:
        close = difflib.get_close_matches(key, ARCHITECTURES + tuple(_ARCH_ALIASES), n=3, cutoff=0.5)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise ValueError(f"unknown architecture {arch!r}{hint}; valid: {', '.join(ARCHITECTURES)}, or {CUSTOM} "
                         f"(an instruction of your own, named by its spec)")
    return key


@dataclass(frozen=True)
class Instruction:
    """One matrix instruction on one architecture.

    Members
    -------
    arch : str
        Canonical architecture name.
    name : str
        Paper (SASS) name, or the AMD ISA name with its ``v_mfma_`` prefix.
    ptx : str
        PTX form (NVIDIA) or ISA name (AMD).
    m, n, k : int
        Shape of one instruction (for HGMMA/QGMMA/tcgen05, ``n`` is the
        smallest valid N; see ``shapes``).
    a_format, b_format, c_format, d_format : str
        Operand formats (names of :data:`golden.formats.FORMATS`).
    scale_format : str or None
        Block-scale format, None if unscaled.
    block_size : int or None
        Products per scale factor.
    params : Params
        The algorithm parameters (:attr:`algorithm` follows from them and K).
    aliases : tuple of str
        Other accepted names (CDNA1/CDNA2-style AMD names).
    shapes : tuple of (m, n)
        Every valid (M, N); the dot-add never depends on it.
    blocks : int
        Independent blocks computed by one AMD instruction (``_4b``).
    note : str
        What the entry rests on where the tables do not say it.
    native : bool
        False for a form the architecture has no instruction of its own for: the compiler
        lowers it to others, and the entry models what that compiled path was measured to do.
    """

    arch: str
    name: str
    ptx: str
    m: int
    n: int
    k: int
    a_format: str
    b_format: str
    c_format: str
    d_format: str
    scale_format: str | None
    block_size: int | None
    params: Params
    aliases: tuple = ()
    shapes: tuple = ()
    blocks: int = 1
    note: str = ""
    native: bool = True

    def __post_init__(self):
        check_params_for(self.params, self)        # the Params against this instruction's formats and K

    @property
    def algorithm(self) -> str:
        """Algorithm name as in the paper (``FDA``, ``CoFDA``, ``GDFS``, ...), from the params and K."""
        return self.params.algorithm_name(self.k)

    def with_params(self, params: Params | None = None, **changes) -> Instruction:
        """This instruction computing another design: ``params``, or its own with ``changes``
        (``ins.with_params(F=27)``); the name, shape and formats stay."""
        if params is not None and changes:
            raise ValueError("with_params takes a Params or field changes, not both")
        return replace(self, params=params if params is not None else self.params.with_(**changes))

    @property
    def family(self) -> str:
        """First component of the name: ``HMMA``, ``HGMMA``, ``UTCOMMA``, ``v_mfma``..."""
        return "v_mfma" if self.name.startswith("v_mfma") else self.name.split(".")[0]

    @property
    def formats(self) -> tuple[Format, ...]:
        return tuple(get_format(f) for f in (self.a_format, self.b_format, self.c_format, self.d_format))

    @property
    def datapath(self) -> Datapath:
        """What this instruction computes (:class:`Datapath`), for grouping and for the RTL."""
        fs = get_format(self.scale_format) if self.scale_format else None
        return Datapath(self.params, *self.formats, self.k, fs, self.block_size)

    @property
    def exact_nan(self) -> bool:
        """Whether its NaN results are specified bit for bit (:attr:`Params.exact_nan`)."""
        return self.params.exact_nan

    @property
    def provenance(self) -> Provenance:
        """The evidence behind this entry and the disputed readings it depends on
        (:class:`golden.provenance.Provenance`)."""
        return assess(self, CATALOG, lookup)

    @property
    def vendor(self) -> str:
        """``nvidia``, ``amd``, or ``custom`` for an instruction of your own (no GPU runs it)."""
        return CUSTOM if self.arch == CUSTOM else "amd" if self.arch in AMD else "nvidia"

    def with_shape(self, m: int | None = None, n: int | None = None) -> Instruction:
        """This instruction at a concrete shape; raises if the shape is not valid."""
        m = self.m if m is None else m
        n = self.n if n is None else n
        if (m, n) not in self.shapes:
            ms = sorted({s[0] for s in self.shapes})
            ns = sorted({s[1] for s in self.shapes if s[0] == m}) or sorted({s[1] for s in self.shapes})
            raise ValueError(f"{self.name} on {self.arch}: shape M={m}, N={n} is not valid; "
                             f"M in {ms}, N in {_ranges(ns)}")
        return replace(self, m=m, n=n)

    def describe(self) -> str:
        p = self.params
        bits = [self.algorithm]
        if p.F is not None:
            bits.append(f"F={p.F}")
        if p.pass_size and ALGORITHMS[p.base].chained:
            bits.append(f"L={p.pass_size}")
        if p.group:
            bits.append(f"G={p.group}")
        if p.e_zero is not None:
            bits.append(f"e_zero={p.e_zero}")
        if p.out_frac_bits is not None:
            bits.append(f"result fraction bits={p.out_frac_bits}")
        lowered = [f"operands as {p.operand_format}" if p.operand_format else "",
                   f"passes interleave runs of {p.pass_interleave}" if p.pass_interleave else "",
                   "c added last" if p.c_last else ""]
        if any(lowered):
            bits.append("(" + ", ".join(x for x in lowered if x) + ")")
        return " ".join(bits)

    def __str__(self) -> str:
        scale = f" scales {self.scale_format}/{self.block_size}" if self.scale_format else ""
        return (f"{self.arch:13s} {self.name:42s} {self.m}x{self.n}x{self.k} "
                f"{self.a_format}*{self.b_format}+{self.c_format}->{self.d_format}{scale}  {self.describe()}")


def _ranges(ns):
    if len(ns) > 4 and all(b - a == ns[1] - ns[0] for a, b in zip(ns, ns[1:])):
        return f"{ns[0]}..{ns[-1]} step {ns[1] - ns[0]}"
    return str(ns)


# --------------------------------------------------------------------------- NVIDIA datapaths

@dataclass(frozen=True)
class _Datapath:
    F: int
    bytes_per_pass: int
    e_zero_f32: int
    e_zero_f16: int


_VOLTA = _Datapath(23, 8, -131, -19)
_DATAPATH = {
    "volta": _VOLTA, "turing": _Datapath(24, 16, -132, -20), "ampere": _Datapath(24, 16, -132, -20),
    "ada": _Datapath(24, 16, -132, -20), "hopper": _Datapath(25, 32, -133, -21),
    "blackwell": _Datapath(25, 32, -133, -21), "rtx_blackwell": _Datapath(25, 32, -133, -21),
}
_ELEMENT_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "e3m2": 1, "e2m3": 1, "e2m1": 1}
_SASS_TYPE = {"e4m3": "E4M3", "e5m2": "E5M2", "e3m2": "E3M2", "e2m3": "E2M3", "e2m1": "E2M1"}
F8 = ("e4m3", "e5m2")
F8F6F4 = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")


def _nvidia_params(arch, a, d, k, fp8_narrow=False, scaled=False, datapath=None):
    dp = datapath or _DATAPATH[arch]
    f16_out = d == "f16"
    F = 13 if fp8_narrow else dp.F
    return Params(
        base="FDA", F=F, pass_size=min(k, dp.bytes_per_pass // _ELEMENT_BYTES[a]),
        e_zero=-133 if scaled else (dp.e_zero_f16 if f16_out else dp.e_zero_f32),
        out_rounding=Rounding.RNE if f16_out else Rounding.RZ,
        out_frac_bits=13 if (fp8_narrow and not f16_out) else None,
        overflow=Overflow.IEEE if f16_out else Overflow.INF)


def _mma_shapes(m, n):
    return ((m, n),)


def _wgmma_shapes():
    return tuple((64, n) for n in range(8, 257, 8))


def _tcgen05_shapes():
    return tuple((64, n) for n in range(8, 257, 8)) + tuple((128, n) for n in range(16, 257, 16))


# the designs of NVIDIA's SFMA (f64) and GDFS (block-scaled fp4) entries
_NV_SFMA = Params(base="SFMA", zero_sign=ZeroSign.IEEE)
_NV_GDFS = Params(base="GDFS", F=35, pass_size=64, e_zero=-139, group=16)


def _nvidia() -> list[Instruction]:
    out = []

    def add(arches, name, ptx, m, n, k, a, b, c, d, shapes=None, scale=None, block=None, fp8_narrow=(),
            datapath=None, note="", fixed=None, native=True, aliases=()):
        for arch in arches:
            if fixed is not None:
                params = fixed
            else:
                params = _nvidia_params(arch, a, d, k, arch in fp8_narrow, scale is not None,
                                        datapath.get(arch) if datapath else None)
            nm = name(arch) if callable(name) else name
            out.append(Instruction(arch, nm, ptx, m, n, k, a, b, c, d, scale, block, params, aliases=aliases,
                                   shapes=shapes or _mma_shapes(m, n), note=note, native=native))

    V, T, A, AD, H, B, R = NVIDIA
    turing_884 = {T: _VOLTA}
    note_884 = "Turing runs m8n8k4 on Volta's datapath (F=23, L=4), per the authors' later model (docs/spec.md §1 (a))"
    add([V, T], "HMMA.884.F32.F32", "mma.m8n8k4.f32.f16.f16.f32", 8, 8, 4, "f16", "f16", "f32", "f32",
        datapath=turing_884, note=note_884)
    add([V, T], "HMMA.884.F32.F16", "mma.m8n8k4.f32.f16.f16.f16", 8, 8, 4, "f16", "f16", "f16", "f32",
        datapath=turing_884, note=note_884)
    add([V, T], "HMMA.884.F16.F16", "mma.m8n8k4.f16.f16.f16.f16", 8, 8, 4, "f16", "f16", "f16", "f16",
        datapath=turing_884, note=note_884)
    after_turing = [T, A, AD, H, B, R]
    add(after_turing, "HMMA.1688.F32", "mma.m16n8k8.f32.f16.f16.f32", 16, 8, 8, "f16", "f16", "f32", "f32")
    add(after_turing, "HMMA.1688.F16", "mma.m16n8k8.f16.f16.f16.f16", 16, 8, 8, "f16", "f16", "f16", "f16")
    add([A, AD, H, B, R], lambda arch: "DMMA.884" if arch in (A, AD) else "DMMA.8x8x4",
        "mma.m8n8k4.f64.f64.f64.f64", 8, 8, 4, "f64", "f64", "f64", "f64", fixed=_NV_SFMA)
    amp = [A, AD, H, B, R]
    add(amp, "HMMA.1688.F32.TF32", "mma.m16n8k8.f32.tf32.tf32.f32", 16, 8, 8, "tf32", "tf32", "f32", "f32")
    add(amp, "HMMA.16816.F32", "mma.m16n8k16.f32.f16.f16.f32", 16, 8, 16, "f16", "f16", "f32", "f32")
    add(amp, "HMMA.16816.F16", "mma.m16n8k16.f16.f16.f16.f16", 16, 8, 16, "f16", "f16", "f16", "f16")
    add(amp, "HMMA.16816.F32.BF16", "mma.m16n8k16.f32.bf16.bf16.f32", 16, 8, 16, "bf16", "bf16", "f32", "f32")
    add(amp, "HMMA.1684.F32.TF32", "mma.m16n8k4.f32.tf32.tf32.f32", 16, 8, 4, "tf32", "tf32", "f32", "f32")
    add(amp, "HMMA.1688.F32.BF16", "mma.m16n8k8.f32.bf16.bf16.f32", 16, 8, 8, "bf16", "bf16", "f32", "f32")
    for x in F8:
        for y in F8:
            X, Y = _SASS_TYPE[x], _SASS_TYPE[y]
            for d in ("f32", "f16"):
                D = d.upper()
                for k in (32, 16):
                    add([AD, R], f"QMMA.168{k}.{D}.{X}.{Y}", f"mma.m16n8k{k}.{d}.{x}.{y}.{d}", 16, 8, k,
                        x, y, d, d, fp8_narrow=(AD,))
    for k in (16, 8, 4):
        add([H], f"DMMA.16x8x{k}", f"mma.m16n8k{k}.f64.f64.f64.f64", 16, 8, k, "f64", "f64", "f64", "f64",
            fixed=_NV_SFMA)
    wg = _wgmma_shapes()
    add([H], "HGMMA.64xNx8.F32.TF32", "wgmma.m64nNk8.f32.tf32.tf32", 64, 8, 8, "tf32", "tf32", "f32", "f32", wg)
    add([H], "HGMMA.64xNx16.F32", "wgmma.m64nNk16.f32.f16.f16", 64, 8, 16, "f16", "f16", "f32", "f32", wg)
    add([H], "HGMMA.64xNx16.F16", "wgmma.m64nNk16.f16.f16.f16", 64, 8, 16, "f16", "f16", "f16", "f16", wg)
    add([H], "HGMMA.64xNx16.F32.BF16", "wgmma.m64nNk16.f32.bf16.bf16", 64, 8, 16, "bf16", "bf16", "f32", "f32", wg)
    for x in F8:
        for y in F8:
            X, Y = _SASS_TYPE[x], _SASS_TYPE[y]
            for d in ("f32", "f16"):
                add([H], f"QGMMA.64xNx32.{d.upper()}.{X}.{Y}", f"wgmma.m64nNk32.{d}.{x}.{y}", 64, 8, 32,
                    x, y, d, d, wg, fp8_narrow=(H,))
    tc = _tcgen05_shapes()
    add([B], "UTCHMMA.F32.TF32", "tcgen05.mma.kind::tf32.f32.tf32.tf32", 64, 8, 8, "tf32", "tf32", "f32", "f32", tc)
    add([B], "UTCHMMA.F32.F16", "tcgen05.mma.kind::f16.f32.f16.f16", 64, 8, 16, "f16", "f16", "f32", "f32", tc)
    add([B], "UTCHMMA.F16.F16", "tcgen05.mma.kind::f16.f16.f16.f16", 64, 8, 16, "f16", "f16", "f16", "f16", tc)
    add([B], "UTCHMMA.F32.BF16", "tcgen05.mma.kind::f16.f32.bf16.bf16", 64, 8, 16, "bf16", "bf16", "f32", "f32", tc)
    for x in F8F6F4:
        for y in F8F6F4:
            X, Y = _SASS_TYPE[x], _SASS_TYPE[y]
            for d in ("f32", "f16"):
                add([B], f"UTCQMMA.{d.upper()}.{X}.{Y}", f"tcgen05.mma.kind::f8f6f4.{d}.{x}.{y}", 64, 8, 32,
                    x, y, d, d, tc)
            add([B], f"UTCQMMA.SF.F32.{X}.{Y}.E8",
                f"tcgen05.mma.block_scale.kind::mxf8f6f4.block32.f32.{x}.{y}.ue8m0", 64, 8, 32,
                x, y, "f32", "f32", tc, scale="ue8m0", block=32)
            for d in ("f32", "f16"):
                add([R], f"QMMA.16832.{d.upper()}.{X}.{Y}.F8F6F4", f"mma.m16n8k32.kind::f8f6f4.{d}.{x}.{y}.{d}",
                    16, 8, 32, x, y, d, d)
            add([R], f"QMMA.SF.16832.F32.{X}.{Y}.E8",
                f"mma.block_scale.m16n8k32.kind::mxf8f6f4.block32.f32.{x}.{y}.f32.ue8m0", 16, 8, 32,
                x, y, "f32", "f32", scale="ue8m0", block=32)
    fp4 = [("UTCOMMA.MXF4.E8", "tcgen05.mma.block_scale.kind::mxf4.block32.ue8m0", "ue8m0", 32),
           ("UTCOMMA.MXF4NVF4.E8.B32", "tcgen05.mma.block_scale.kind::mxf4nvf4.block32.ue8m0", "ue8m0", 32),
           ("UTCOMMA.MXF4NVF4.E8.B16", "tcgen05.mma.block_scale.kind::mxf4nvf4.block16.ue8m0", "ue8m0", 16),
           ("UTCOMMA.4X", "tcgen05.mma.block_scale.kind::mxf4nvf4.block16.ue4m3", "ue4m3", 16)]
    for name, ptx, sf, blk in fp4:
        add([B], name, ptx, 64, 8, 64, "e2m1", "e2m1", "f32", "f32", tc, scale=sf, block=blk, fixed=_NV_GDFS)
    omma = [("OMMA.SF.16864.F32.E2M1.E2M1.E8", "mma.block_scale.m16n8k64.kind::mxf4.block32.ue8m0", "ue8m0", 32),
            ("OMMA.SF.16864.F32.E2M1.E2M1.E8.NVF4.B32",
             "mma.block_scale.m16n8k64.kind::mxf4nvf4.block32.ue8m0", "ue8m0", 32),
            ("OMMA.SF.16864.F32.E2M1.E2M1.E8.NVF4.B16",
             "mma.block_scale.m16n8k64.kind::mxf4nvf4.block16.ue8m0", "ue8m0", 16),
            ("OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X",
             "mma.block_scale.m16n8k64.kind::mxf4nvf4.block16.ue4m3", "ue4m3", 16)]
    for name, ptx, sf, blk in omma:
        add([R], name, ptx, 16, 8, 64, "e2m1", "e2m1", "f32", "f32", scale=sf, block=blk, fixed=_NV_GDFS)
    for x in F8:
        for y in F8:
            X, Y = _SASS_TYPE[x], _SASS_TYPE[y]
            for d in ("f32", "f16"):
                add([H, B], f"MMA.16832.{d.upper()}.{X}.{Y}", f"mma.m16n8k32.{d}.{x}.{y}.{d}", 16, 8, 32,
                    x, y, d, d, fixed=COMPILED_FP8_MMA_PARAMS[d], native=False, note=_COMPILED_FP8_NOTE[d],
                    aliases=(f"mma.sync.aligned.m16n8k32.row.col.{d}.{x}.{y}.{d}",))
    return out


# --------------------------------------------------------------------------- compiled paths

# Hopper (sm_90) and Blackwell (sm_100) have no warp-level fp8 MMA instruction: ptxas lowers mma.sync
# m16n8k32 fp8 to conversions to f16 and two HMMA.16816 over the byte pairs of each fragment register,
# the first from a zero accumulator, then adds c with one IEEE add (tools/fp8_f16_search.py,
# docs/gpu/unresolved_fp8.md).  The entries are that lowering, as data: the architecture's own
# HMMA.16816 parameters (F = 25, L = 16) with the operands converted to f16, the passes over
# interleaved runs of two products, and c added last; they reproduce all 5,000 dot-adds of each measured
# set (B200 f32 and f16 results, H100 f16).  What the finite data do not pin (NaN bits, overflow, the
# sign of zeros) follows the HMMA and the add they lower to.
COMPILED_FP8_MMA_PARAMS = {
    d: _nvidia_params("blackwell", "f16", d, 16).with_(operand_format="f16", pass_interleave=2, c_last=True)
    for d in ("f32", "f16")
}
_LOWERING = ("fp8 converted to f16; HMMA.16816 over the products k % 4 < 2 with a zero accumulator, "
             "HMMA.16816 over k % 4 >= 2 onto that, then c added by one IEEE add (RNE)")
_COMPILED_FP8_NOTE = {
    d: "observed behaviour of a compiled path (no native instruction on sm_90 / sm_100): " + _LOWERING +
       f"; reproduces every measured dot-add ({'B200' if d == 'f32' else 'B200 and H100'}, e4m3; e5m2 inferred)"
    for d in ("f32", "f16")
}


# --------------------------------------------------------------------------- AMD

def _amd_params(alg, a, k):
    if alg == "SFMA":
        return Params(base="SFMA", zero_sign=ZeroSign.IEEE)
    if alg.startswith("GPS"):
        return Params(base="GPS", group=int(alg[-1]), flush_subnormals=True, zero_sign=ZeroSign.IEEE)
    L = {"tf32": 4, "f16": 8, "bf16": 8, "e4m3fnuz": 16, "e5m2fnuz": 16}[a]
    common = dict(F=24, pass_size=min(L, k), out_rounding=Rounding.RNE, overflow=Overflow.IEEE, product_overflow=True,
                  zero_sign=ZeroSign.IEEE)
    if alg == "GFDRDA":
        return Params(base="GFDRDA", c_drop=25, **common)
    return Params(base="FDRDA", **common)


# (CDNA3 name, CDNA2 name or None, CDNA2-only aliases, K, a/b format, c/d format, CDNA2 alg, CDNA3 alg)
_AMD_ROWS = [
    ("f64_16x16x4_f64", "f64_16x16x4f64", 4, "f64", "f64", "SFMA", "SFMA"),
    ("f64_4x4x4_4b_f64", "f64_4x4x4f64", 4, "f64", "f64", "SFMA", "SFMA"),
    ("f32_32x32x1_2b_f32", "f32_32x32x1f32", 1, "f32", "f32", "SFMA", "SFMA"),
    ("f32_16x16x1_4b_f32", "f32_16x16x1f32", 1, "f32", "f32", "SFMA", "SFMA"),
    ("f32_4x4x1_16b_f32", "f32_4x4x1f32", 1, "f32", "f32", "SFMA", "SFMA"),
    ("f32_32x32x2_f32", "f32_32x32x2f32", 2, "f32", "f32", "SFMA", "SFMA"),
    ("f32_16x16x4_f32", "f32_16x16x4f32", 4, "f32", "f32", "SFMA", "SFMA"),
    ("f32_16x16x8_xf32", None, 8, "tf32", "f32", None, "FDRDA"),
    ("f32_32x32x4_xf32", None, 4, "tf32", "f32", None, "FDRDA"),
    ("f32_32x32x4_2b_f16", "f32_32x32x4f16", 4, "f16", "f32", "GPS4", "FDRDA"),
    ("f32_16x16x4_4b_f16", "f32_16x16x4f16", 4, "f16", "f32", "GPS4", "FDRDA"),
    ("f32_4x4x4_16b_f16", "f32_4x4x4f16", 4, "f16", "f32", "GPS4", "FDRDA"),
    ("f32_32x32x8_f16", "f32_32x32x8f16", 8, "f16", "f32", "GPS4", "FDRDA"),
    ("f32_16x16x16_f16", "f32_16x16x16f16", 16, "f16", "f32", "GPS4", "FDRDA"),
    ("f32_32x32x2bf16", "f32_32x32x2bf16", 2, "bf16", "f32", "GPS2", None),
    ("f32_16x16x2bf16", "f32_16x16x2bf16", 2, "bf16", "f32", "GPS2", None),
    ("f32_4x4x2bf16", "f32_4x4x2bf16", 2, "bf16", "f32", "GPS2", None),
    ("f32_32x32x4bf16", "f32_32x32x4bf16", 4, "bf16", "f32", "GPS2", None),
    ("f32_16x16x8bf16", "f32_16x16x8bf16", 8, "bf16", "f32", "GPS2", None),
    ("f32_32x32x4_2b_bf16", "f32_32x32x4bf16_1k", 4, "bf16", "f32", "GPS4", "FDRDA"),
    ("f32_16x16x4_4b_bf16", "f32_16x16x4bf16_1k", 4, "bf16", "f32", "GPS4", "FDRDA"),
    ("f32_4x4x4_16b_bf16", "f32_4x4x4bf16_1k", 4, "bf16", "f32", "GPS4", "FDRDA"),
    ("f32_32x32x8_bf16", "f32_32x32x8bf16_1k", 8, "bf16", "f32", "GPS4", "FDRDA"),
    ("f32_16x16x16_bf16", "f32_16x16x16bf16_1k", 16, "bf16", "f32", "GPS4", "FDRDA"),
] + [
    (f"f32_{shape}_{x}_{y}", None, k, (fx, fy), "f32", None, "GFDRDA")
    for shape, k in (("16x16x32", 32), ("32x32x16", 16))
    for x, fx in (("fp8", "e4m3fnuz"), ("bf8", "e5m2fnuz"))
    for y, fy in (("fp8", "e4m3fnuz"), ("bf8", "e5m2fnuz"))
]

_SHAPE = re.compile(r"f(?:32|64)_(\d+)x(\d+)x(\d+)(?:_(\d+)b)?")


def _amd() -> list[Instruction]:
    out = []
    for cdna3_name, cdna2_name, k, ab, cd, alg2, alg3 in _AMD_ROWS:
        fa, fb = ab if isinstance(ab, tuple) else (ab, ab)
        m, n, kk, blocks = _SHAPE.match(cdna3_name).groups()
        assert int(kk) == k, cdna3_name
        for arch, alg, aliases in (("cdna2", alg2, (cdna2_name,)), ("cdna3", alg3, ())):
            if alg is None:
                continue
            params = _amd_params(alg, fa, k)
            aliases = tuple(f"v_mfma_{a}" for a in aliases if a and a != cdna3_name)
            name = f"v_mfma_{cdna3_name}"
            out.append(Instruction(arch, name, name, int(m), int(n), k, fa, fb, cd, cd, None, None, params,
                                   aliases=aliases, shapes=((int(m), int(n)),), blocks=int(blocks or 1)))
    return out


# --------------------------------------------------------------------------- CDNA1

# CDNA1 (MI100, gfx908): not in the paper and never measured here; its entries follow the authors' later
# reference model (mmasim 2.1.1, amd/sim.py: MFMA("CDNA1", ...)).  Its MFMA list by the names the CDNA1
# ISA writes (the CDNA2 names of the rows above).  f32: one fma per product, in order; f16 and bf16: a
# chain of passes of 4 (f16) or 2 (bf16) products, each the exact sum of its products and c rounded once
# to f32 (RNE, IEEE overflow), its NaN and infinities those of the plain sum.  The CDNA1 ISA's integer
# MFMAs (i8 -> i32) are not here: the project has no integer formats and the model has no integer MFMA.
CDNA1_NAMES = (
    "f32_32x32x1f32", "f32_16x16x1f32", "f32_4x4x1f32", "f32_32x32x2f32", "f32_16x16x4f32",
    "f32_32x32x4f16", "f32_16x16x4f16", "f32_4x4x4f16", "f32_32x32x8f16", "f32_16x16x16f16",
    "f32_32x32x2bf16", "f32_16x16x2bf16", "f32_4x4x2bf16", "f32_32x32x4bf16", "f32_16x16x8bf16",
)
_CDNA1_PASS = {"f16": 4, "bf16": 2}
CDNA1_NOTE = "reference model (not measured, not in the paper): mmasim 2.1.1, MFMA('CDNA1', ...)"


def _cdna1_params(a: str, k: int) -> Params:
    if a == "f32":
        return Params(base="SFMA", zero_sign=ZeroSign.IEEE)
    # e_zero moves nothing in an exact window; fp32's smallest normal exponent keeps the RTL's window at
    # the formats' own span (golden.algorithms.exact_window)
    return Params(base="FDA", F=EXACT, pass_size=min(_CDNA1_PASS[a], k), e_zero=-126, out_rounding=Rounding.RNE,
                  overflow=Overflow.IEEE, zero_sign=ZeroSign.IEEE)


def _cdna1() -> list[Instruction]:
    rows = {cdna2: (cdna3, k, ab, cd) for cdna3, cdna2, k, ab, cd, _, _ in _AMD_ROWS if cdna2}
    out = []
    for name in CDNA1_NAMES:
        cdna3_name, k, ab, cd = rows[name]
        m, n, _, blocks = _SHAPE.match(cdna3_name).groups()
        params = _cdna1_params(ab, k)
        aliases = (f"v_mfma_{cdna3_name}",) if cdna3_name != name else ()
        out.append(Instruction("cdna1", f"v_mfma_{name}", f"v_mfma_{name}", int(m), int(n), k, ab, ab, cd, cd,
                               None, None, params, aliases=aliases, shapes=((int(m), int(n)),),
                               blocks=int(blocks or 1), note=CDNA1_NOTE))
    return out


CATALOG: tuple[Instruction, ...] = tuple(_nvidia() + _amd() + _cdna1())


# --------------------------------------------------------------------------- lookup

def _key(s: str) -> str:
    s = s.strip().lower()
    return s[len("v_mfma_"):] if s.startswith("v_mfma_") else s


def _names(ins: Instruction):
    return (ins.name, ins.ptx, *ins.aliases)


def _template_match(query: str, ins: Instruction):
    """Match a concrete shape (``HGMMA.64x128x16.F32``, ``wgmma.m64n128k16...``) against an N template."""
    q = _key(query)
    for pattern in (ins.name, ins.ptx):
        p = _key(pattern)
        if "xnx" in p or "nnk" in p:
            rx = re.escape(p).replace("xnx", r"x(\d+)x").replace("nnk", r"n(\d+)k")
            mt = re.fullmatch(rx, q)
            if mt:
                return int(mt.group(1))
    return None


def instructions(arch: str | None = None, family: str | None = None) -> list[Instruction]:
    """Catalog entries, optionally of one architecture and one family or name prefix.

    ``family`` matches an exact name (paper, PTX/ISA, alias) or a prefix of
    the name up to a separator: ``HGMMA``, ``HMMA.16816``, ``UTCOMMA``,
    ``v_mfma_f32_32x32x16`` all work.  Case-insensitive.
    """
    if family is not None and not isinstance(family, str):
        raise TypeError(f"an instruction name or family is a string (HGMMA.64xNx16.F32, HGMMA), "
                        f"got {family!r} ({type(family).__name__})")
    if arch is not None and canonical_arch(arch) == CUSTOM:
        return [_custom(family)] if family is not None else []      # the name of one of your own is its spec
    pool = [i for i in CATALOG if arch is None or i.arch == canonical_arch(arch)]
    if family is None:
        return pool
    q = _key(family)
    if q in ("mfma", "v_mfma"):
        return [i for i in pool if i.vendor == "amd"]
    exact = [i for i in pool if q in map(_key, _names(i))]
    if exact:
        return exact
    shaped = [i.with_shape(n=n) for i in pool if (n := _template_match(family, i)) is not None
              and (i.m, n) in i.shapes]
    if shaped:
        return shaped
    return [i for i in pool if any(_key(nm).startswith(q + sep) for nm in _names(i) for sep in "._:")]


def lookup(arch: str, name: str) -> Instruction:
    """The one instruction called ``name`` on ``arch``; clear errors with close matches otherwise."""
    arch = canonical_arch(arch)
    if arch == CUSTOM:
        return _custom(name)
    found = instructions(arch, name)
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        names = ", ".join(i.name for i in found[:12]) + (" ..." if len(found) > 12 else "")
        raise ValueError(f"the name {name.strip()} names {len(found)} instructions on {arch}, not one: {names}; "
                         "give one of them")
    elsewhere = sorted({i.arch for i in instructions(None, name)})
    if elsewhere:
        raise ValueError(f"{name!r} is not available on {arch}; it exists on: {', '.join(elsewhere)}")
    candidates = sorted({nm for i in instructions(arch) for nm in _names(i)})
    close = difflib.get_close_matches(name, candidates, n=5, cutoff=0.4) or \
        difflib.get_close_matches(name.upper(), candidates, n=5, cutoff=0.4)
    fams = sorted({i.family for i in instructions(arch)})
    hint = f"; close matches: {', '.join(close)}" if close else ""
    raise ValueError(f"unknown instruction {name!r} on {arch}{hint}; families on {arch}: {', '.join(fams)} "
                     f"(python -m golden list --arch {arch} shows all)")


_POSITION = {(i.arch, i.name): n for n, i in enumerate(CATALOG)}


def _select_custom(arches: list, instr) -> list[Instruction]:
    """``select("custom", SPEC)``: one instruction of your own (its spec holds commas, so it is not a
    comma list; several specs are separated by ``;``)."""
    if arches != [CUSTOM]:
        raise ValueError(f"{CUSTOM} goes alone: ARCH={CUSTOM} INSTR=SPEC (an instruction of your own), not "
                         f"beside other architectures")
    specs = [] if instr is None else [s for s in str(instr).split(";") if s.strip()]
    if not specs or str(instr).strip().lower() == "all":
        raise ValueError(f"ARCH={CUSTOM} needs INSTR=SPEC, an instruction of your own: k=K,a=FMT,c=FMT,base=ALG,..."
                         f" (docs/golden.md, 'Instructions of your own')")
    found: dict = {}
    for s in specs:
        ins = _custom(s)
        found.setdefault(ins.name, ins)
    return list(found.values())


_SPEC_PARSER: list = []          # golden.custom.parse, registered when golden.custom is imported (golden does)


def register_custom(parse) -> None:
    """The parser of custom instructions' specs (:func:`golden.custom.parse` registers itself: the catalog
    is below it and cannot import it)."""
    _SPEC_PARSER[:] = [parse]


def _custom(spec: str) -> Instruction:
    if not _SPEC_PARSER:
        raise RuntimeError("golden.custom is not imported (import golden does)")
    return _SPEC_PARSER[0](spec)


def _split(text) -> list[str]:
    return [t.strip() for t in str(text).split(",") if t.strip()]


def select(arch: str | None = None, instr: str | None = None) -> list[Instruction]:
    """The instructions a command line names, without repeats: architecture by architecture in
    the order named (catalog order for "all"), catalog order within one.

    ``arch``: an architecture or alias, a comma list of them, or ``None``/``"all"`` for every
    one.  ``instr``: a name or family (as :func:`instructions` takes it), a comma list of them,
    or ``None``/``"all"`` for every instruction.  A name that matches nothing raises
    ``ValueError`` with close matches or the architectures where it exists.
    """
    arches = [None] if arch is None or str(arch).strip().lower() in ("", "all") else \
        [canonical_arch(a) for a in _split(arch)]
    if CUSTOM in arches:
        return _select_custom(arches, instr)
    if not arches:
        raise ValueError(f"no architecture named in {arch!r}; valid: {', '.join(ARCHITECTURES)}")
    names = [None] if instr is None or str(instr).strip().lower() in ("", "all") else _split(instr)
    if not names:
        raise ValueError(f"no instruction named in {instr!r}")
    found: dict = {}
    for a in arches:
        for name in names:
            hits = instructions(a, name)
            if not hits:
                if a is None:
                    raise ValueError(f"no instruction matches {name!r} on any architecture "
                                     f"(python -m golden list shows all)")
                lookup(a, name)                  # raises with close matches / where it exists
                raise ValueError(f"no instruction matches {name!r} on {a}")
            for i in hits:
                found.setdefault((i.arch, i.name, i.m, i.n), i)
    rank = {a: n for n, a in enumerate(arches)}        # architectures in the order named
    return sorted(found.values(), key=lambda i: (rank.get(i.arch, 0), _POSITION[i.arch, i.name]))
