"""examples/models/run.py at its tiny size: both models run as float64, plainly and emulated, every
product of theirs goes through the mode (strict), and the per-layer measures see a planted difference."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: pip install 'mma-rtl[torch]'")

import golden.torch  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("models_run", REPO / "examples" / "models" / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module              # dataclasses look their module up by name
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


@pytest.mark.parametrize("name, op, repeats", [("resnet18", "aten.convolution.default", 1),
                                               ("gpt", "aten._scaled_dot_product_flash_attention_for_cpu.default", 2)])
def test_tiny_models_run_all_three_ways_with_every_product_emulated(example, name, op, repeats):
    model, x, what = example.BUILDERS[name]("tiny", 0)
    report = example.measure(model, x, what, arch="hopper", dtype="bf16", strict=True, repeats=repeats)
    assert report.repeated
    layers = [row[0] for row in report.rows]
    assert layers[-1] == "(model output)" and len(layers) == len(set(layers)) > 5
    assert report.native == {} and op in report.ops and sum(report.calls.values()) >= sum(report.ops.values())
    assert all(0 <= row[5] < 0.05 for row in report.rows if row[5] == row[5])    # bf16-sized relative errors
    assert any(row[2] > 0 for row in report.rows)                                 # the low dtype does round
    text = example.render(report)
    assert what in text and "HGMMA.64xNx16.F32.BF16" in text and "seconds per forward pass" in text
    short = example.render(report, "products")
    assert "(model output)" in short and len(short.splitlines()) < len(text.splitlines())
    assert all(("norm" not in line and "relu" not in line and "bn" not in line) for line in short.splitlines()[3:])


def test_resnet_shares_torchvisions_layer_names(example):
    names = {name for name, _ in example.watched(example.ResNetStyle(4))}
    assert {"conv1", "bn1", "maxpool", "layer1.0.conv1", "layer2.0.downsample.0", "layer4.1.bn2", "fc"} <= names


class NativeProduct(torch.nn.Module):
    """A float32 product at full precision: a GPU runs it on CUDA cores, so the mode leaves it native."""

    def forward(self, x):
        return x.float() @ x.float().t()


def test_strict_refuses_a_product_the_mode_does_not_model(example):
    x = torch.randn(4, 4)
    with pytest.raises(golden.torch.NotEmulated):
        example.measure(NativeProduct(), x, "planted", arch="hopper", dtype="bf16", strict=True, repeats=1)
    report = example.measure(NativeProduct(), x, "planted", arch="hopper", dtype="bf16", repeats=1)
    assert sum(report.native.values()) == 1 and report.calls == {}


def test_errors_and_differences_see_a_planted_change(example):
    ref = torch.tensor([1.0, -4.0, 2.0], dtype=torch.float64)
    assert example.errors(ref, ref) == (0.0, 0.0)
    assert example.errors(ref + torch.tensor([0.0, 2.0, 0.0], dtype=torch.float64), ref) == (2.0, 2.0 / ref.norm())


def test_main_runs_and_refuses_bad_arguments(example, capsys):
    assert example.main(["--model", "gpt", "--size", "tiny", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "GPT-style decoder built here" in out and "(model output)" in out
    assert example.main(["--arch", "nosuch"]) == 2
    assert example.main(["--repeats", "0"]) == 2
    err = capsys.readouterr().err
    assert "error: --arch: unknown architecture 'nosuch'" in err and "error: --repeats" in err


def test_torchvision_resnet18_is_taken_where_torchvision_imports(example, monkeypatch):
    import types

    made = []

    def resnet18(weights):
        made.append(weights)
        return example.ResNetStyle(4)
    fake = types.SimpleNamespace(__version__="0.0-test", models=types.SimpleNamespace(resnet18=resnet18))
    monkeypatch.setitem(sys.modules, "torchvision", fake)
    _, x, what = example.build_resnet("small", 0)
    assert made == [None] and what == "torchvision 0.0-test ResNet-18" and tuple(x.shape) == (1, 3, 64, 64)
    monkeypatch.setitem(sys.modules, "torchvision", None)           # an import that fails
    assert example.build_resnet("small", 0)[2].startswith("ResNet-style network built here")
