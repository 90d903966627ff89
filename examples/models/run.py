"""Whole models on an emulated GPU: a ResNet-18 and a small GPT, layer by layer against float64.

    python examples/models/run.py [--model resnet18|gpt|all] [--arch hopper] [--dtype bf16|f16]
                                  [--size small|tiny] [--rows all|products] [--strict] [--seed 0]
                                  [--repeats 3]

Each model is built here with random weights from a seed (nothing is downloaded):

* ``resnet18``: torchvision's ``resnet18(weights=None)`` when torchvision imports (input 1x3x64x64);
  otherwise a ResNet-style network built here from ``torch.nn`` with the same layer pattern (7x7/2
  stem, batch norm, max pool, four stages of two basic blocks, strided 3x3 convolutions, 1x1
  downsampling shortcuts, average pool, linear head) and a quarter of its widths.  The output says
  which ran.
* ``gpt``: token and position embeddings, ``nn.TransformerEncoderLayer`` blocks (pre-norm, GELU) with a
  causal mask, a final LayerNorm and a linear LM head over the vocabulary.

The low-dtype model (weights and input rounded to ``--dtype``) runs three ways: as float64 (the same
rounded weights and input, every operation in float64: the reference), plainly in the low dtype as
torch runs it on this CPU, and under ``golden.torch.emulate(arch)``, where every product it models
(linear layers, convolutions, attention, ...) is computed as ``arch``'s tensor cores compute it and the
rest runs as torch runs it.  For each leaf module (and each attention module) it prints the largest
absolute error of its output against float64 and the relative error ``||y - y64|| / ||y64||``,
for the plain and for the emulated run, and in how many elements the two runs differ;
then the products emulated per instruction (``mode.calls``), per aten operator (``mode.ops``), what
ran natively (``mode.native``, of the last pass), and the median wall and CPU time of one forward
pass of each run over ``--repeats`` passes, the three runs interleaved.  ``--strict`` makes any
product the mode does not model an error.  ``--size tiny`` shrinks both models to a few layers'
worth (seconds; what the tests run).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import sys
import time

import torch
from torch import nn

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}
RESNET_INPUT = {"small": (1, 3, 64, 64), "tiny": (1, 3, 16, 16)}
LOCAL_WIDTH = {"small": 16, "tiny": 4}                 # torchvision's ResNet-18 starts at 64
GPT_SIZES = {"small": dict(vocab=512, d=128, heads=4, layers=2, ctx=64),
             "tiny": dict(vocab=32, d=32, heads=2, layers=1, ctx=8)}


# ---------------------------------------------------------------------------------------------- the models

class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm and a shortcut (a 1x1 strided convolution when the shape changes)."""

    def __init__(self, c_in: int, c_out: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.downsample = None
        if stride != 1 or c_in != c_out:
            self.downsample = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + (x if self.downsample is None else self.downsample(x)))


class ResNetStyle(nn.Module):
    """ResNet-18's layer pattern (torchvision's module names) at base width ``width`` instead of 64."""

    def __init__(self, width: int, classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        widths = [width, 2 * width, 4 * width, 8 * width]
        c_in = width
        for i, (c, stride) in enumerate(zip(widths, (1, 2, 2, 2))):
            setattr(self, f"layer{i + 1}", nn.Sequential(BasicBlock(c_in, c, stride), BasicBlock(c, c, 1)))
            c_in = c
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c_in, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class GPT(nn.Module):
    """A GPT-style decoder: embeddings, causal ``nn.TransformerEncoderLayer`` blocks, LayerNorm, LM head."""

    def __init__(self, vocab: int, d: int, heads: int, layers: int, ctx: int):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        length = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(length, device=idx.device))
        mask = nn.Transformer.generate_square_subsequent_mask(length, dtype=x.dtype, device=idx.device)
        return self.head(self.ln(self.blocks(x, mask=mask, is_causal=True)))


def torchvision_resnet18():
    """torchvision's ResNet-18 (random init), or None where torchvision does not import (a CUDA build
    against a CPU torch fails with errors other than ImportError, hence the broad except)."""
    try:
        import torchvision
        return torchvision.models.resnet18(weights=None), f"torchvision {torchvision.__version__} ResNet-18"
    except Exception:      # noqa: BLE001 (any failure to load it means: use the local network)
        return None


def build_resnet(size: str, seed: int):
    """(model in float32, input, description): torchvision's ResNet-18 where it imports and ``size`` is
    ``small``, else the ResNet-style network built here."""
    torch.manual_seed(seed)
    found = torchvision_resnet18() if size == "small" else None
    if found is None:
        width = LOCAL_WIDTH[size]
        model, what = ResNetStyle(width), f"ResNet-style network built here (ResNet-18's pattern, width {width})"
    else:
        model, what = found
    x = torch.randn(RESNET_INPUT[size], generator=torch.Generator().manual_seed(seed + 1))
    return model.eval(), x, what


def build_gpt(size: str, seed: int):
    """(model in float32, token ids, description) of the GPT-style model at ``size``."""
    torch.manual_seed(seed)
    cfg = GPT_SIZES[size]
    model = GPT(**cfg)
    idx = torch.randint(0, cfg["vocab"], (1, cfg["ctx"]), generator=torch.Generator().manual_seed(seed + 1))
    what = "GPT-style decoder built here ({})".format(", ".join(f"{k} {v}" for k, v in cfg.items()))
    return model.eval(), idx, what


BUILDERS = {"resnet18": build_resnet, "gpt": build_gpt}
SKIPPED = (nn.Dropout, nn.Identity)          # identities in eval mode: their rows would repeat the previous one
PRODUCTS = (nn.Conv2d, nn.Linear, nn.MultiheadAttention)    # the layers whose outputs come from products
ROWS = ("all", "products")


# ---------------------------------------------------------------------------------------------- measuring

def watched(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """The modules whose outputs are compared: leaves, and attention modules (their projections are
    used as weights, not called, so no hook inside them fires)."""
    return [(name, m) for name, m in model.named_modules()
            if name and not isinstance(m, SKIPPED) and (not list(m.children()) or isinstance(m, nn.MultiheadAttention))]


def capture(model: nn.Module, x: torch.Tensor, mode=None) -> tuple[dict, torch.Tensor, float]:
    """One forward pass: ({layer: output as float64}, output, (wall, CPU) seconds); a module called twice is
    ``name`` then ``name#2``."""
    outs: dict[str, torch.Tensor] = {}

    def hook(name):
        def record(_module, _inputs, output):
            t = output[0] if isinstance(output, tuple) else output
            key, n = name, 1
            while key in outs:
                n += 1
                key = f"{name}#{n}"
            outs[key] = t.detach().double()
        return record
    handles = [m.register_forward_hook(hook(name)) for name, m in watched(model)]
    try:
        with torch.no_grad():
            t0, c0 = time.perf_counter(), time.process_time()
            if mode is None:
                y = model(x)
            else:
                with mode:
                    y = model(x)
            seconds = (time.perf_counter() - t0, time.process_time() - c0)
    finally:
        for h in handles:
            h.remove()
    return outs, y.detach().double(), seconds


def errors(y: torch.Tensor, ref: torch.Tensor) -> tuple[float, float]:
    """(largest absolute error, relative error ``||y - ref|| / ||ref||`` in the 2-norm; NaN where ref is 0)."""
    if not ref.numel():
        return 0.0, 0.0
    norm = float(ref.norm())
    return float((y - ref).abs().max()), (float((y - ref).norm()) / norm if norm else float("nan"))


@dataclasses.dataclass
class Report:
    """What :func:`measure` found for one model."""

    what: str
    dtype: str
    arch: str
    rows: list            # (layer, shape, plain abs, plain rel, emulated abs, emulated rel, elements differing,
                          #  whether the layer is a product layer or the model output)
    calls: dict
    ops: dict
    native: dict
    seconds: dict         # fp64, plain, emulated: (wall, CPU) seconds of one forward pass, medians of the repeats
    repeated: bool        # every emulated pass gave the same output bits


def measure(model: nn.Module, x: torch.Tensor, what: str, *, arch: str, dtype: str, strict: bool = False,
            repeats: int = 3) -> Report:
    """Run ``model`` as float64, plainly in ``dtype`` and under ``golden.torch.emulate(arch)``; compare."""
    import golden.torch

    low = copy.deepcopy(model).to(DTYPES[dtype])
    ref = copy.deepcopy(low).double()                 # the same rounded weights, float64 arithmetic
    x_low = x.to(DTYPES[dtype]) if x.is_floating_point() else x
    x_ref = x_low.double() if x.is_floating_point() else x
    warm_up(arch, DTYPES[dtype])
    runs = {"fp64": [], "plain": [], "emulated": []}
    mode = None
    for _ in range(max(1, repeats)):        # interleaved, so a busy machine slows all three alike
        runs["fp64"].append(capture(ref, x_ref))
        runs["plain"].append(capture(low, x_low))
        mode = golden.torch.emulate(arch, strict=strict, quiet=True)
        runs["emulated"].append(capture(low, x_low, mode))
    (ref_outs, ref_y, _), (plain_outs, plain_y, _), (emu_outs, emu_y, _) = (runs[k][0] for k in runs)
    rows = []
    products = {name for name, m in watched(model) if isinstance(m, PRODUCTS)}
    for name, r in list(ref_outs.items()) + [("(model output)", ref_y)]:
        p = plain_y if name == "(model output)" else plain_outs[name]
        e = emu_y if name == "(model output)" else emu_outs[name]
        product = name == "(model output)" or name.split("#")[0] in products
        rows.append((name, "x".join(map(str, r.shape)), *errors(p, r), *errors(e, r), int((p != e).sum()), product))
    seconds = {k: tuple(sorted(t[i] for _, _, t in v)[len(v) // 2] for i in (0, 1)) for k, v in runs.items()}
    repeated = all(torch.equal(y, emu_y) for _, y, _ in runs["emulated"])
    return Report(what, dtype, arch, rows, dict(mode.calls), dict(mode.ops), dict(mode.native), seconds, repeated)


def warm_up(arch: str, dtype: torch.dtype) -> None:
    """One small product under the mode first, so the timed pass does not include loading the kernels."""
    import golden.torch

    a = torch.ones(16, 16, dtype=dtype)
    with golden.torch.emulate(arch, quiet=True):
        a @ a


def render(report: Report, rows: str = "all") -> str:
    """The report as the table the command prints: every watched layer, or (``rows="products"``) the
    convolution, linear and attention layers and the model's output."""
    lines = [f"# {report.what}", f"# {report.dtype}, emulated on {report.arch}'s matrix units; errors against float64 "
             "(the same rounded weights and input)",
             f"{'layer':32s} {'shape':>14s} {'plain abs':>10s} {'plain rel':>10s} {'emul. abs':>10s} "
             f"{'emul. rel':>10s} {'differ':>7s}"]
    for name, shape, pa, pr, ea, er, differ, product in report.rows:
        if rows == "products" and not product:
            continue
        lines.append(f"{name:32s} {shape:>14s} {pa:10.3e} {pr:10.3e} {ea:10.3e} {er:10.3e} {differ:7d}")
    fmt = lambda d: ", ".join(f"{k} x{v}" for k, v in sorted(d.items())) or "none"   # noqa: E731
    s = report.seconds
    lines += [f"products emulated, per instruction: {fmt(report.calls)}",
              f"aten operators emulated: {fmt(report.ops)}",
              f"floating-point products run natively: {fmt(report.native)}",
              f"emulated passes gave the same bits each time: {'yes' if report.repeated else 'NO'}",
              "seconds per forward pass, wall / CPU (all threads): " + ", ".join(
                  f"{label} {s[k][0]:.3f} / {s[k][1]:.3f}"
                  for k, label in (("plain", f"plain {report.dtype}"), ("fp64", "float64"), ("emulated", "emulated"))),
              f"emulated / plain: {s['emulated'][0] / max(s['plain'][0], 1e-9):.1f}x wall, "
              f"{s['emulated'][1] / max(s['plain'][1], 1e-9):.1f}x CPU"]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=[*BUILDERS, "all"], default="all")
    p.add_argument("--arch", default="hopper")
    p.add_argument("--dtype", choices=DTYPES, default="bf16")
    p.add_argument("--size", choices=GPT_SIZES, default="small")
    p.add_argument("--strict", action="store_true", help="a product the mode does not model is an error")
    p.add_argument("--rows", choices=ROWS, default="all",
                   help="every leaf layer, or only the convolution, linear and attention layers")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, default=3, help="passes of each run timed (the median is printed)")
    args = p.parse_args(argv)
    import golden.torch

    try:
        golden.torch.emulate(args.arch)
    except ValueError as e:
        print(f"error: --arch: {e}", file=sys.stderr)
        return 2
    if args.repeats < 1:
        print(f"error: --repeats must be at least 1, got {args.repeats}", file=sys.stderr)
        return 2
    print(f"# torch {torch.__version__}, {torch.get_num_threads()} CPU threads")
    for name in (BUILDERS if args.model == "all" else [args.model]):
        model, x, what = BUILDERS[name](args.size, args.seed)
        try:
            report = measure(model, x, what, arch=args.arch, dtype=args.dtype, strict=args.strict,
                             repeats=args.repeats)
        except golden.torch.NotEmulated as e:
            print(f"error: --strict: {e}", file=sys.stderr)
            return 1
        print(render(report, args.rows), end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
