"""A real GPU as a backend, through PyTorch (CUDA or ROCm).  Imported only when asked for.

One dot-add becomes one element of a matrix product computed by the vendor library:
``A [n, 2K] @ B [2K, n]``, whose diagonal holds the n dot-adds of a chunk.  The library
runs its K loop as a chain of MMA instructions, the accumulator of one fed to the next as
C, so:

* products ``0..K-1`` of every row encode ``c`` exactly (c split into pieces that are
  exact products of the input format; the first instruction sums them to c with no
  rounding), and
* products ``K..2K-1`` are the probe's ``a, b``: the second instruction computes
  ``d = c + sum a_k b_k`` exactly as the instruction under test does, c inside the fused sum.

``torch.addmm(C, A, B)`` would not do: the library adds C in its epilogue, outside the
tensor core.  Rows whose c cannot be split into exact pieces (outside the input format's
product range, -0, an infinity the format cannot carry, or more bits than the first pass
keeps) are reported as *unsupported* and the probes treat them as unobserved.

Routes (NVIDIA, f32 results): f16 and bf16 through ``torch.mm(..., out_dtype=float32)``
with reduced-precision reductions off; tf32 through f32 ``torch.mm`` with
``allow_tf32``; e4m3/e5m2 through ``torch._scaled_mm`` with unit scales and
``use_fast_accum=True`` (without it the library accumulates each instruction's result
in f32 on the CUDA cores, which is not the instruction).  Which SASS instruction the
library picks (HMMA or HGMMA, say) is its choice; instructions with the same datapath
have the same parameters in the catalog.
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np

import golden
from golden.device import Device, DeviceError, Unavailable

_CAPABILITY = {(7, 0): "volta", (7, 5): "turing", (8, 0): "ampere", (8, 6): "ampere", (8, 7): "ampere",
               (8, 9): "ada", (9, 0): "hopper", (10, 0): "blackwell", (10, 3): "blackwell",
               (12, 0): "rtx_blackwell"}
CHUNK = 256


def _torch():
    try:
        import torch
    except ImportError:
        raise Unavailable("PyTorch is not installed (pip install torch), so no GPU backend") from None
    if not torch.cuda.is_available():
        raise Unavailable("PyTorch sees no CUDA or ROCm GPU")
    return torch


class TorchBackend(Device):
    """``backend(ins, a, b, c)`` on the local GPU; see the module docstring."""

    def __init__(self, device: str = "cuda"):
        self.torch = _torch()
        t = self.torch
        self.device = t.device(device)
        props = t.cuda.get_device_properties(self.device)
        self.gpu = props.name
        cap = t.cuda.get_device_capability(self.device)
        self.hip = getattr(t.version, "hip", None) is not None
        self.arch = None if self.hip else _CAPABILITY.get(tuple(cap))
        self.name = f"torch on {self.gpu} ({'ROCm' if self.hip else f'sm_{cap[0]}{cap[1]}'})"
        self._warned = set()
        self._split_cache: dict = {}

    # ---- which instructions --------------------------------------------------------------------

    def _route(self, ins):
        if ins.vendor != "nvidia" or self.hip:
            raise Unavailable(f"{ins.arch} {ins.name}: only NVIDIA f16/bf16/tf32/fp8 instructions with f32 "
                              "results have a PyTorch route here")
        if self.arch and ins.arch != self.arch and ins.arch not in self._warned:
            self._warned.add(ins.arch)
            print(f"warning: probing {ins.arch} {ins.name} on a {self.arch} GPU ({self.gpu}); the comparison is "
                  "with the catalog entry you named", file=sys.stderr)
        if ins.d_format != "f32" or ins.c_format != "f32" or ins.scale_format:
            raise Unavailable(f"{ins.name}: PyTorch reaches only unscaled instructions with f32 C and D")
        fa, fb = ins.a_format, ins.b_format
        if fa == fb and fa in ("f16", "bf16"):
            return "mm16"
        if fa == fb == "tf32":
            return "tf32"
        if fa in ("e4m3", "e5m2") and fb in ("e4m3", "e5m2") and not (fa == fb == "e5m2"):
            return "fp8"
        raise Unavailable(f"{ins.name}: no PyTorch route for {fa} x {fb}")

    # ---- c as exact products ---------------------------------------------------------------------

    def _rig(self, ins):
        from .rig import Rig
        r = Rig(ins, None)
        r.normal_only = False
        return r

    def _split(self, ins, rig, cbits: int):
        """Bits (pa [K], pb [K]) whose exact products sum to the f32 value of ``cbits``, or None."""
        key = (ins.arch, ins.name, cbits)
        if key in self._split_cache:
            return self._split_cache[key]
        K = ins.k
        fa = rig.fa
        v = float(np.array([cbits], np.uint32).view(np.float32)[0])
        out = None
        pa = np.full(K, rig.prod(0.0)[0], np.uint64)
        pb = np.full(K, rig.prod(0.0)[1], np.uint64)
        if v == 0.0 and np.signbit(v):
            out = None
        elif v == 0.0:
            out = (pa, pb)
        elif np.isinf(v) or np.isnan(v):
            from .rig import exact_in
            one = exact_in(rig.fb, 1.0)
            if fa.inf or (np.isnan(v) and fa.has_nan):
                from golden.formats import special_bits
                pa[0] = int(special_bits(fa, "nan")) if np.isnan(v) else exact_in(fa, v)
                pb[0] = one
                out = (pa, pb)
        else:
            w = fa.man_bits + 1
            m, e = np.frexp(abs(v))
            mant = int(m * 2 ** 24)
            lead = int(e) - 1 - 23                   # exponent of mant's last bit
            pieces, pos = [], 0
            while mant and len(pieces) <= K:
                chunk = mant & ((1 << w) - 1)
                if chunk:
                    pieces.append(np.ldexp(float(chunk), lead + pos) * (1 if v > 0 else -1))
                mant >>= w
                pos += w
            if len(pieces) <= K:
                ok = True
                for i, p in enumerate(pieces):
                    pr = rig.prod(float(p))
                    if pr is None:
                        ok = False
                        break
                    pa[i], pb[i] = pr
                if ok:
                    # the first pass must give c exactly (it does whenever its alignment keeps c's bits)
                    d = golden.dot_add(ins, pa[None], pb[None], np.array([0], np.uint64))
                    out = (pa, pb) if int(d[0]) == cbits else None
        self._split_cache[key] = out
        return out

    def unsupported(self, ins, a, b, c, scale_a=None, scale_b=None):
        self._route(ins)
        rig = self._rig(ins)
        return np.array([self._split(ins, rig, int(x)) is None for x in np.asarray(c, np.uint64)], bool)

    # ---- running ---------------------------------------------------------------------------------

    def _tensor(self, bits, fmt):
        t = self.torch
        if fmt in ("f16", "bf16"):
            x = t.from_numpy(np.ascontiguousarray(bits.astype(np.uint16)).view(np.int16))
            return x.to(self.device).view(t.float16 if fmt == "f16" else t.bfloat16)
        if fmt == "tf32":
            x = t.from_numpy(np.ascontiguousarray(bits.astype(np.uint32)).view(np.int32))
            return x.to(self.device).view(t.float32)
        x = t.from_numpy(np.ascontiguousarray(bits.astype(np.uint8)))
        return x.to(self.device).view(t.float8_e4m3fn if fmt == "e4m3" else t.float8_e5m2)

    def all_pairs(self, ins, a, b) -> np.ndarray:
        """``D[i, j] = +0 + sum_k a[i, k] * b[j, k]`` for every row pair, as d bit patterns ``[R, R]``.

        One matrix product ``[0 | a] @ [0 | b]^T``: the first instruction of the library's K loop
        sums zero products (an exact +0), the second takes that as its c and the operands as its
        products, so each of the R * R elements is one dot-add of the instruction with c = +0.
        """
        t = self.torch
        route = self._route(ins)
        a, b = np.asarray(a, np.uint64), np.asarray(b, np.uint64)
        R, K = a.shape
        zero_a, zero_b = self._split(ins, self._rig(ins), 0)
        A = np.concatenate([np.broadcast_to(zero_a, (R, K)), a], axis=1)
        B = np.concatenate([np.broadcast_to(zero_b, (len(b), K)), b], axis=1)
        with self._library(ins, route):
            D = self._product(route, self._tensor(A, ins.a_format), self._tensor(B, ins.b_format))
            return D.contiguous().view(t.int32).cpu().numpy().view(np.uint32).astype(np.uint64)

    @contextlib.contextmanager
    def _library(self, ins, route):
        """The library's settings for the route (restored afterwards); its errors as DeviceError."""
        mm = self.torch.backends.cuda.matmul
        saved = (mm.allow_tf32, mm.allow_fp16_reduced_precision_reduction, mm.allow_bf16_reduced_precision_reduction)
        try:
            mm.allow_tf32 = route == "tf32"
            mm.allow_fp16_reduced_precision_reduction = False
            mm.allow_bf16_reduced_precision_reduction = False
            yield
        except DeviceError:                  # ours (Unavailable too): as raised
            raise
        except RuntimeError as e:
            raise DeviceError(f"PyTorch failed on {ins.name}: {e}") from None
        finally:
            mm.allow_tf32, mm.allow_fp16_reduced_precision_reduction, mm.allow_bf16_reduced_precision_reduction = saved

    def _product(self, route, At, Bt):
        """``At @ Bt^T`` in f32 through the route's library call (see the module docstring)."""
        t = self.torch
        if route == "mm16":
            try:
                return t.mm(At, Bt.t(), out_dtype=t.float32)
            except TypeError:
                raise Unavailable("this PyTorch has no torch.mm(..., out_dtype=float32)") from None
        if route == "tf32":
            return t.mm(At, Bt.t())
        one = t.tensor(1.0, device=self.device)
        D = t._scaled_mm(At, Bt.t(), scale_a=one, scale_b=one, out_dtype=t.float32, use_fast_accum=True)
        return D[0] if isinstance(D, tuple) else D

    def __call__(self, ins, a, b, c, scale_a=None, scale_b=None):
        t = self.torch
        route = self._route(ins)
        a, b, c = np.asarray(a, np.uint64), np.asarray(b, np.uint64), np.asarray(c, np.uint64)
        R, K = a.shape
        rig = self._rig(ins)
        A = np.zeros((R, 2 * K), np.uint64)
        B = np.zeros((R, 2 * K), np.uint64)
        for r in range(R):
            sp = self._split(ins, rig, int(c[r]))
            if sp is None:
                sp = self._split(ins, rig, 0)      # unsupported row: computed with c = 0, reported as such
            A[r, :K], B[r, :K] = sp
        A[:, K:], B[:, K:] = a, b
        out = np.zeros(R, np.uint32)
        with self._library(ins, route):
            for lo in range(0, R, CHUNK):
                hi = min(lo + CHUNK, R)
                n = hi - lo
                npad = max(16, -(-n // 16) * 16)
                Ab = np.zeros((npad, 2 * K), np.uint64)
                Bb = np.zeros((npad, 2 * K), np.uint64)
                Ab[:n], Bb[:n] = A[lo:hi], B[lo:hi]
                Ab[n:], Bb[n:] = A[lo], B[lo]
                # [n, 2K] each; the product wants B^T
                D = self._product(route, self._tensor(Ab, ins.a_format), self._tensor(Bb, ins.b_format))
                out[lo:hi] = t.diagonal(D)[:n].contiguous().view(t.int32).cpu().numpy().view(np.uint32)
        return out
