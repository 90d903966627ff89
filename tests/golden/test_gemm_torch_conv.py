"""golden.torchconv: convolution and its backward as implicit GEMMs through a caller's mm.

With an exact float64 mm and small integer inputs every result equals torch's own convolution bit
for bit (all partial sums are exact integers); with random floats it agrees to float rounding.  With
an emulated mm (golden.gemm on Hopper's f16 tensor core) each pass equals its GEMM built here by
hand, element by element, bit for bit, and a GEMM with the other K order differs (the test sees it).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: pip install 'mma-rtl[torch]'")

from golden.gemm import Kernel, gemm, instruction_for  # noqa: E402
from golden.torchconv import GEMM_SHAPES, conv2d, conv2d_backward, conv_output_size  # noqa: E402

F = torch.nn.functional
FMT = {torch.float16: "f16", torch.bfloat16: "bf16"}


def exact_mm(a, b):
    """A float64 product, returned in the operands' dtype (exact for small integers)."""
    return (a.double() @ b.double()).to(a.dtype)


def bits(t: torch.Tensor) -> np.ndarray:
    return t.detach().contiguous().view(torch.int16).numpy().view(np.uint16)


def from_bits(x: np.ndarray, dtype) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(x.astype(np.uint16)).view(np.int16)).view(dtype)


def golden_mm(a: np.ndarray, b: np.ndarray, dtype, arch="hopper") -> np.ndarray:
    ins = instruction_for(arch, FMT[dtype], FMT[dtype])
    return gemm(a, b, instr=ins, kernel=Kernel(out_format=FMT[dtype]))


class EmulatedMM:
    """golden.gemm as the mm of golden.torchconv, recording each call's shape."""

    def __init__(self):
        self.shapes = []

    def __call__(self, a, b):
        self.shapes.append((a.shape[0], b.shape[1], a.shape[1]))
        return from_bits(golden_mm(bits(a), bits(b), a.dtype), a.dtype)


GRID = [dict(stride=s, padding=p, dilation=d, groups=g, hw=(6, 7), rs=rs)
        for s, p, d, g, rs in itertools.product((1, 2, 3), (0, 1, 2), (1, 2), (1, 2), ((3, 3), (1, 2)))]
# the default suite's share: every stride, padding, dilation, groups and kernel shape at least once, a
# padding larger than the dilated kernel's reach (negative dgrad pads), a stride that leaves rows unread
DEFAULT = [GRID[i] for i in (0, 9, 22, 47, 55, 70)]


def case_id(c):
    return "s{stride}p{padding}d{dilation}g{groups}r{rs[0]}{rs[1]}".format(**c)


@pytest.mark.parametrize("case", DEFAULT, ids=case_id)
def test_exact_mm_equals_torch_bit_for_bit_on_integers(case):
    check_against_torch(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", GRID, ids=case_id)
def test_exact_mm_equals_torch_on_the_whole_grid(case):
    check_against_torch(case)


def check_against_torch(case):
    g = torch.Generator().manual_seed(len(str(case)))
    c, k = 4, 6
    x = torch.randint(-4, 5, (2, c, *case["hw"]), generator=g).double()
    w = torch.randint(-4, 5, (k, c // case["groups"], *case["rs"]), generator=g).double()
    bias = torch.randint(-4, 5, (k,), generator=g).double()
    args = case["stride"], case["padding"], case["dilation"], case["groups"]
    want = F.conv2d(x, w, bias, *args)
    assert torch.equal(conv2d(x, w, bias, *args, mm=exact_mm), want)
    gy = torch.randint(-4, 5, want.shape, generator=g).double()
    ref = torch.ops.aten.convolution_backward(gy, x, w, [k], *[[a] * 2 for a in args[:3]], False, [0, 0], args[3],
                                              [True, True, True])
    got = conv2d_backward(gy, x, w, *args, (True, True, True), mm=exact_mm)
    for name, r, m in zip(("grad_input", "grad_weight", "grad_bias"), ref, got):
        assert torch.equal(r, m), name


def test_random_floats_agree_with_torch_to_rounding():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 6, 9, 8, generator=g, dtype=torch.float64)
    w = torch.randn(4, 3, 3, 2, generator=g, dtype=torch.float64)
    y = conv2d(x, w, None, (2, 1), (1, 0), (1, 2), 2, mm=exact_mm)
    assert torch.allclose(y, F.conv2d(x, w, None, (2, 1), (1, 0), (1, 2), 2), rtol=1e-13, atol=1e-13)
    gy = torch.randn(y.shape, generator=g, dtype=torch.float64)
    gx, gw, gb = conv2d_backward(gy, x, w, (2, 1), (1, 0), (1, 2), 2, (True, True, False), mm=exact_mm)
    rx, rw, _ = torch.ops.aten.convolution_backward(gy, x, w, None, [2, 1], [1, 0], [1, 2], False, [0, 0], 2,
                                                     [True, True, False])
    assert gb is None and torch.allclose(gx, rx, atol=1e-12) and torch.allclose(gw, rw, atol=1e-12)


# ------------------------------------------------------------------ the GEMMs built by hand, element by element

def fprop_by_hand(x, w, stride, pad, dil, channels_inner=True):
    """im2col of x ``[N*P*Q, R*S*C]`` and the weight ``[R*S*C, K]``, K ordered (r, s, c) (or (c, r, s))."""
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    p, q = conv_output_size(h, r, stride, pad, dil), conv_output_size(wd, s, stride, pad, dil)
    xp = F.pad(x, (pad, pad, pad, pad))
    order = [(ri, si, ci) for ri in range(r) for si in range(s) for ci in range(c)] if channels_inner else \
        [(ri, si, ci) for ci in range(c) for ri in range(r) for si in range(s)]
    a = torch.stack([torch.stack([xp[ni, ci, pi * stride + ri * dil, qi * stride + si * dil] for ri, si, ci in order])
                     for ni in range(n) for pi in range(p) for qi in range(q)])
    b = torch.stack([w[:, ci, ri, si] for ri, si, ci in order])
    return a, b, (n, p, q, k)


def test_emulated_fprop_is_its_gemm_bit_for_bit():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(1, 4, 6, 6, generator=g).half()
    w = torch.randn(3, 4, 3, 3, generator=g).half()
    bias = torch.randn(3, generator=g).half()
    mm = EmulatedMM()
    y = conv2d(x, w, bias, 1, 1, 1, 1, mm=mm)
    a, b, (n, p, q, k) = fprop_by_hand(x, w, 1, 1, 1)
    assert mm.shapes == [(n * p * q, k, a.shape[1])]                # fprop: M = NPQ, N = K, K = RSC
    d = from_bits(golden_mm(bits(a), bits(b), torch.float16), torch.float16).view(n, p, q, k).permute(0, 3, 1, 2)
    want = (d.float() + bias.float().view(1, k, 1, 1)).half()
    assert np.array_equal(bits(y), bits(want))


def test_the_k_order_decides_the_bits():
    """+64 and -64 products at filter position (0, 0) of channels 0 and 3, 2^-22 everywhere else: where
    both large products share one k-step they cancel there, the small ones beside them truncated
    (Hopper's F = 25 alignment) and the rest summed exactly; apart, the fp32 accumulator holds 64 between
    them and loses other small products.  Channels inner (this module's order) puts them in one k-step,
    channels outer 27 places apart, so the two orders give different bits: the test above would see it."""
    x = torch.ones(1, 4, 3, 3).half()
    w = torch.full((1, 4, 3, 3), 2.0 ** -22).half()
    w[0, 0, 0, 0], w[0, 3, 0, 0] = 64, -64
    y = conv2d(x, w, None, 1, 0, 1, 1, mm=EmulatedMM())
    results = {}
    for inner in (True, False):
        a, b, _ = fprop_by_hand(x, w, 1, 0, 1, channels_inner=inner)
        results[inner] = from_bits(golden_mm(bits(a), bits(b), torch.float16), torch.float16).item()
    assert y.item() == results[True] == 20 * 2.0 ** -22 and results[False] == 4 * 2.0 ** -22


def test_emulated_dgrad_and_wgrad_are_their_gemms_bit_for_bit():
    g = torch.Generator().manual_seed(6)
    stride, pad, dil = 2, 1, 1
    x = torch.randn(1, 3, 5, 5, generator=g).bfloat16()
    w = torch.randn(4, 3, 3, 3, generator=g).bfloat16()
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    p, q = conv_output_size(h, r, stride, pad, dil), conv_output_size(wd, s, stride, pad, dil)
    gy = torch.randn(n, k, p, q, generator=g).bfloat16()
    mm = EmulatedMM()
    gx, gw, gb = conv2d_backward(gy, x, w, stride, pad, dil, 1, (True, True, True), mm=mm)
    assert mm.shapes == [(n * h * wd, c, r * s * k), (k, r * s * c, n * p * q)]   # dgrad, then wgrad
    # dgrad: dx[n, c, h, w] = sum over (r', s', o), r = R-1-r', of dy[n, o, p, q] where h = p*stride - pad + r*dil
    zero = torch.zeros((), dtype=x.dtype)
    order = [(r - 1 - ri, s - 1 - si, o) for ri in range(r) for si in range(s) for o in range(k)]

    def dy_at(ni, hi, wi, rr, ss, o):
        ph, qw = hi + pad - rr * dil, wi + pad - ss * dil
        ok = ph % stride == 0 and qw % stride == 0 and 0 <= ph // stride < p and 0 <= qw // stride < q
        return gy[ni, o, ph // stride, qw // stride] if ok else zero
    a = torch.stack([torch.stack([dy_at(ni, hi, wi, rr, ss, o) for rr, ss, o in order])
                     for ni in range(n) for hi in range(h) for wi in range(wd)])
    b = torch.stack([w[o, :, rr, ss] for rr, ss, o in order])
    want_gx = from_bits(golden_mm(bits(a), bits(b), x.dtype), x.dtype).view(n, h, wd, c).permute(0, 3, 1, 2)
    assert np.array_equal(bits(gx), bits(want_gx.contiguous()))
    cols, _, _ = fprop_by_hand(x, w, stride, pad, dil)                       # [N*P*Q, R*S*C]
    dy2 = gy.permute(1, 0, 2, 3).reshape(k, -1)                               # [K, N*P*Q]
    want_gw = from_bits(golden_mm(bits(dy2), bits(cols), x.dtype), x.dtype).view(k, r, s, c).permute(0, 3, 1, 2)
    assert np.array_equal(bits(gw), bits(want_gw.contiguous()))
    assert torch.equal(gb, gy.sum((0, 2, 3)))


def test_gemm_shapes_table_names_the_three_passes():
    assert set(GEMM_SHAPES) == {"fprop", "dgrad", "wgrad"} and all(len(v) == 3 for v in GEMM_SHAPES.values())


@pytest.mark.parametrize("kwargs, match", [
    (dict(stride=0), "stride and dilation must be >= 1"),
    (dict(stride=(1, 2, 3)), "stride must be an int or two ints"),
    (dict(padding=-1), "padding >= 0"),
    (dict(groups=3), "groups must be a positive int dividing"),
    (dict(padding=0, dilation=4), "does not fit"),
])
def test_bad_arguments_are_one_clear_value_error(kwargs, match):
    x, w = torch.zeros(1, 4, 5, 5), torch.zeros(2, 4, 3, 3)
    with pytest.raises(ValueError, match=match):
        conv2d(x, w, None, **kwargs, mm=exact_mm)


def test_bad_tensors_are_refused():
    with pytest.raises(ValueError, match="4-D"):
        conv2d(torch.zeros(4, 5, 5), torch.zeros(2, 4, 3, 3), mm=exact_mm)
    with pytest.raises(ValueError, match="one dtype"):
        conv2d(torch.zeros(1, 4, 5, 5), torch.zeros(2, 4, 3, 3).half(), mm=exact_mm)
    with pytest.raises(ValueError, match="input channels per group"):
        conv2d(torch.zeros(1, 4, 5, 5), torch.zeros(2, 3, 3, 3), mm=exact_mm)
    with pytest.raises(ValueError, match="grad_output must be"):
        conv2d_backward(torch.zeros(1, 2, 2, 2), torch.zeros(1, 4, 5, 5), torch.zeros(2, 4, 3, 3), mm=exact_mm)
