"""docs/extending.md, "A new algorithm", held by a toy: an algorithm described in this one module
(its golden pass a float64 dot product rounded once to d), registered through the public API
(golden.descriptors.describe), is computed by golden and met in every other layer by that layer's
named refusal (golden.descriptors.Unsupported, naming the layer and the algorithm), never by a
KeyError or a wrong answer.  The fixture withdraws it, so no other test sees it."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import reference_model  # noqa: F401  (registers the reference model's parts)

import formal.catalog  # noqa: F401  (registers formal's parts)
import golden
import hw
import probe  # noqa: F401  (registers the probe's parts)
from golden import kernels
from golden.custom import custom
from golden.descriptors import ALGORITHMS, Algorithm, Part, Unsupported, describe, missing_parts, part, parts, withdraw
from golden.formats import from_float, to_float
from golden.kernels import spec

TOY = "TOY"
REPO = Path(__file__).resolve().parents[2]


def toy(dp, a, b, c, scale_a=None, scale_b=None, trace=None):
    """d = c + sum a*b in float64, rounded once (RNE) to d's format."""
    fa, fb, fc, fd = dp.formats
    d = (to_float(fa, a) * to_float(fb, b)).sum(-1) + to_float(fc, c)
    if trace is not None:
        trace.append(("sum", {"d": d}))
    return from_float(fd, d).astype(fd.dtype)


@pytest.fixture
def registered():
    before = dict(ALGORITHMS)
    describe(Algorithm(TOY, toy, (), chained=False, summary="a float64 dot product, rounded once"))
    try:
        yield ALGORITHMS[TOY]
    finally:
        withdraw(TOY)
    assert ALGORITHMS == before


def _toy_instruction():
    return custom(4, "f16", "f32", golden.Params(base=TOY))


def test_golden_computes_it(registered):
    ins = _toy_instruction()
    assert ins.algorithm == TOY and ins.params.fields_read == ()
    a = from_float("f16", [[1.0, 2.0, 0.5, -3.0], [0.25, 0.25, 0.25, 0.25]])
    b = from_float("f16", [[1.0, 1.0, 4.0, 1.0], [4.0, 4.0, 4.0, 4.0]])
    c = from_float("f32", [0.5, -4.0])
    d = golden.dot_add(ins, a, b, c, backend="numpy")
    assert to_float("f32", d).tolist() == [2.5, 0.0]
    # a field it does not read is refused in golden's words, naming the algorithm
    with pytest.raises(ValueError, match="TOY does not read it"):
        custom(4, "f16", "f32", golden.Params(base=TOY, F=3))


def test_golden_kernels_send_it_to_the_numpy_path(registered):
    """No kernel_code: golden.kernels declines it and the numba backend answers with numpy's bits."""
    ins = _toy_instruction()
    assert registered.kernel_code is None and spec.kernel_code(ins.params) is None
    assert not kernels.supports(ins.params, ins.formats, ins.k) and not kernels.handles(ins.datapath)
    rng = np.random.default_rng(0)
    a, b = (rng.integers(0, 1 << 16, (32, 4), dtype=np.uint64) for _ in range(2))
    a, b = (np.where(np.isfinite(to_float("f16", x)), x, 0) for x in (a, b))
    c = from_float("f32", rng.normal(size=32))
    assert np.array_equal(golden.dot_add(ins, a, b, c, backend="numba"), golden.dot_add(ins, a, b, c, backend="numpy"))


@pytest.mark.parametrize("what", list(Part))
def test_every_other_layer_refuses_it_by_name(registered, what):
    """Each layer's part, asked of the toy: Unsupported naming the layer (the part) and the algorithm."""
    with pytest.raises(Unsupported, match=f"{what} has no part for algorithm {TOY}") as e:
        part(TOY, what)
    assert (e.value.algorithm, e.value.layer) == (TOY, str(what))
    assert TOY not in parts(what)
    assert (TOY, what) in missing_parts()       # tests/golden/test_descriptors.py would name each


def test_hw_and_cosim_refuse_it_by_name(registered):
    from cosim.units import NoRTL, unit_provider
    from hw.unit import datapath_class
    ins = _toy_instruction()
    with pytest.raises(Unsupported, match=f"hw.datapath has no part for algorithm {TOY}.*no RTL for {TOY} yet"):
        datapath_class(ins.datapath)
    with pytest.raises(Unsupported, match=f"hw.datapath has no part for algorithm {TOY}"):
        hw.dot_add_unit(ins)
    with pytest.raises(NoRTL, match=f"hw.datapath has no part for algorithm {TOY}"):
        unit_provider("hw")(ins, lanes=1)


def test_the_probe_never_infers_it(registered):
    """The probe tries only the algorithms with a probe part: the toy is never its answer."""
    from probe.algorithms import PROBE_PARTS
    assert TOY not in PROBE_PARTS and TOY not in parts(Part.PROBE)


def test_withdrawn_it_is_gone_everywhere():
    assert TOY not in ALGORITHMS and all(n != TOY for n, _ in missing_parts())
    with pytest.raises(ValueError, match="unknown algorithm 'TOY'"):
        golden.Params(base=TOY)


def _recipe() -> str:
    text = (REPO / "docs" / "extending.md").read_text()
    return text[text.index("## The algorithm descriptor"):text.index("## 3. A new board")]


def test_the_recipe_names_files_and_tables_that_exist():
    """docs/extending.md, file by file: each `path` it names is there, each `path:NAME` is a name of it."""
    import importlib
    named = re.findall(r"`((?:golden|hw|formal|probe|tests|tools|docs)/[\w/<>.]+?\.(?:py|md))(?::(\w+))?`", _recipe())
    assert len(named) > 15
    for path, name in named:
        if "<" in path:
            continue                                 # a file of the new algorithm's own
        assert (REPO / path).is_file(), path
        if name and path.endswith(".py") and not path.startswith("tests/"):
            module = importlib.import_module(path[:-3].replace("/", ".").removesuffix(".__init__"))
            assert hasattr(module, name), f"{path}:{name}"


def test_the_recipe_table_has_every_part():
    table = {m for cell in re.findall(r"^\| (`[A-Z_]+`(?:, `[A-Z_]+`)*) \|", _recipe(), re.M)
             for m in re.findall(r"`(\w+)`", cell)}
    assert table == {p.name for p in Part}
