"""Instructions of your own: arithmetic that no catalog entry has, as a first-class :class:`golden.Instruction`.

A custom instruction states what a catalog entry holds: the dot-add's K (and, for a whole instruction,
M and N), the formats of a, b, c and d (block scales with their format and block size) and the
:class:`golden.Params` of its algorithm.  Its architecture is :data:`CUSTOM` and its name is its
**spec**, written in the project's one params grammar (``FIELD=VALUE,...``, :func:`golden.params.parse_params`)
with the shape and format fields in front::

    k=2,a=f16,b=f16,c=f32,d=f32,base=FDA,F=exact,e_zero=-126,out_rounding=RNE,overflow=ieee,zero_sign=ieee754

so ``golden.lookup("custom", name)`` gives it back, and every layer that names instructions by
(architecture, name) -- cosim (``make cosim ARCH=custom INSTR=...``), the probe, campaigns, gemm, the
board -- takes it as it takes a catalog entry.  :func:`spec` writes the canonical name (each field
once, in a fixed order, Params fields only where they differ from :class:`golden.Params`' defaults);
:func:`parse` reads any spelling of it; :func:`custom` builds one from Python values.

Fields: ``k`` (required), ``m`` and ``n`` (default 1: one dot-add), ``a`` and ``c`` (required), ``b``
(default: a's format), ``d`` (default: c's), ``scale`` and ``block`` (together: a block-scale format
and the products per scale, which divides k), then the Params fields (``base`` required).  An
instruction golden cannot run is refused when it is made, in one line naming what is wrong.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .algorithms import Params
from .api import dot_add
from .catalog import CATALOG, CUSTOM, Instruction, register_custom
from .descriptors import ALGORITHMS
from .formats import FORMATS, from_float, get_format
from .options import is_whole
from .params import FIELDS, ParamsSpecError, format_params, parse_params

__all__ = ["CUSTOM", "SHAPE_FIELDS", "FORMAT_FIELDS", "CustomError", "custom", "parse", "spec", "scale_formats"]

SHAPE_FIELDS = ("m", "n", "k")
FORMAT_FIELDS = ("a", "b", "c", "d", "scale", "block")
NOTE = "a design of your own (arch custom): golden computes the stated Params; no GPU is claimed"
_DEFAULTS = Params(base="SFMA")          # the dataclass defaults every other field is written against


class CustomError(ValueError):
    """A custom instruction golden cannot make or run (one line: the field, the value, what is valid)."""


def scale_formats() -> tuple:
    """The block-scale formats golden runs: those of the catalog's block-scaled entries."""
    return tuple(sorted({i.scale_format for i in CATALOG if i.scale_format}))


def custom(k: int, a: str, c: str, params: Params, *, b: str | None = None, d: str | None = None, m: int = 1,
           n: int = 1, scale: str | None = None, block: int | None = None) -> Instruction:
    """The instruction ``d = c + sum_k a_k * b_k`` over ``k`` products in these formats, computed by
    ``params`` (a :class:`golden.Params`); ``m``, ``n``: the whole instruction's shape (for
    :func:`golden.mma`).  :class:`CustomError` (one line) for anything golden cannot run."""
    if not isinstance(params, Params):
        raise CustomError(f"params must be a golden.Params, not {type(params).__name__}")
    b = a if b is None else b
    d = c if d is None else d
    _check_shape(k, m, n, a, b, c, d, scale, block)
    if params.pass_size is None and ALGORITHMS[params.base].chained:
        params = params.with_(pass_size=int(k))   # one pass of all k products: the same design, one spelling
    try:                                          # the Params against these formats (golden.params.check_params_for)
        ins = Instruction(CUSTOM, "", "", int(m), int(n), int(k), a, b, c, d, scale, block, params,
                          shapes=((int(m), int(n)),), note=NOTE)
    except ValueError as e:
        raise CustomError(f"custom instruction: {e}") from None
    name = spec(ins)
    ins = replace(ins, name=name, ptx=name)
    _smoke(ins)
    return ins


def _check_shape(k, m, n, a, b, c, d, scale, block) -> None:
    """The shape and formats, each on its own (before the Params, whose errors name other fields)."""
    for name, value in (("k", k), ("m", m), ("n", n)):
        if not is_whole(value) or value < 1:
            raise CustomError(f"custom instruction: {name}={value!r}; valid: a positive integer")
    for name, value in (("a", a), ("b", b), ("c", c), ("d", d)):
        if value not in FORMATS:
            raise CustomError(f"custom instruction: {name}={value!r} is not a format golden knows; valid: "
                              f"{', '.join(FORMATS)}")
    _check_scales(int(k), scale, block)


def _check_scales(k: int, scale, block) -> None:
    if (scale is None) != (block is None):
        raise CustomError("custom instruction: scale and block go together (a block-scale format and the "
                          "products each scale covers)")
    if scale is None:
        return
    valid = scale_formats()
    if scale not in valid:
        raise CustomError(f"custom instruction: scale={scale!r}; valid: {', '.join(valid)}")
    if not is_whole(block) or block < 1 or k % block:
        raise CustomError(f"custom instruction: block={block!r}; valid: a positive divisor of k={k}")


def _smoke(ins: Instruction) -> None:
    """One all-zero dot-add on golden's numpy path: a design golden cannot run is refused now, not at
    its first vector (a window too wide for exact sums, a NaN pattern that is not a NaN of d, ...)."""
    fa = get_format(ins.a_format)
    zeros = np.zeros((1, ins.k), fa.dtype)
    scales = None
    if ins.scale_format:
        one = get_format(ins.scale_format)
        scales = np.full((1, ins.k // ins.block_size), from_float(one, 1.0), one.dtype)
    try:
        dot_add(ins, zeros, np.zeros((1, ins.k), get_format(ins.b_format).dtype),
                np.zeros(1, get_format(ins.c_format).dtype), scales, scales, backend="numpy")
    except (ValueError, TypeError, NotImplementedError) as e:
        raise CustomError(f"custom instruction {ins.name}: golden cannot run it: {e}") from None


# ---- the spec grammar --------------------------------------------------------------------------------

def spec(ins: Instruction) -> str:
    """The canonical name of ``ins`` as a custom instruction: shape, formats, then every Params field
    that differs from the defaults (``base`` always), in :data:`golden.params.FIELDS` order."""
    items = [f"k={ins.k}"]
    items += [f"{nm}={v}" for nm, v in (("m", ins.m), ("n", ins.n)) if v != 1]
    items += [f"a={ins.a_format}", f"b={ins.b_format}", f"c={ins.c_format}", f"d={ins.d_format}"]
    if ins.scale_format:
        items += [f"scale={ins.scale_format}", f"block={ins.block_size}"]
    p = ins.params
    items.append(format_params({nm: getattr(p, nm) for nm in FIELDS
                                if nm == "base" or getattr(p, nm) != getattr(_DEFAULTS, nm)}))
    return ",".join(items)


def parse(text: str) -> Instruction:
    """The custom instruction a spec names (any order, any spelling :func:`spec` would canonicalise);
    :class:`CustomError` (one line) when it is not one."""
    if not isinstance(text, str) or not text.strip():
        raise CustomError("a custom instruction is a spec k=K,a=FMT,c=FMT,base=ALG,... (golden.custom)")
    shape: dict = {}
    params_items = []
    for item in text.split(","):
        if not item.strip():
            continue
        name, eq, value = (s.strip() for s in item.partition("="))
        if name in SHAPE_FIELDS + FORMAT_FIELDS:
            if not eq or not value:
                raise CustomError(f"custom instruction: {item.strip()!r} is not FIELD=VALUE")
            if name in shape:
                raise CustomError(f"custom instruction: {name!r} given twice in {text!r}")
            shape[name] = _shape_value(name, value)
        else:
            params_items.append(item)
    for need in ("k", "a", "c"):
        if need not in shape:
            raise CustomError(f"custom instruction {text!r}: {need} is missing; a spec is k=K,a=FMT,[b=FMT,]c=FMT,"
                              f"[d=FMT,][scale=FMT,block=N,][m=M,n=N,]base=ALG,FIELD=VALUE,...")
    _check_shape(shape["k"], shape.get("m", 1), shape.get("n", 1), shape["a"], shape.get("b", shape["a"]),
                 shape["c"], shape.get("d", shape["c"]), shape.get("scale"), shape.get("block"))
    try:
        changes = parse_params(",".join(params_items))
    except ParamsSpecError as e:
        raise CustomError(f"custom instruction: {e}") from None
    if "base" not in changes:
        raise CustomError(f"custom instruction {text!r}: base is missing (the algorithm: {', '.join(ALGORITHMS)})")
    try:
        params = Params(**changes)
    except (TypeError, ValueError) as e:
        raise CustomError(f"custom instruction: {e}") from None
    return custom(shape["k"], shape["a"], shape["c"], params, b=shape.get("b"), d=shape.get("d"),
                  m=shape.get("m", 1), n=shape.get("n", 1), scale=shape.get("scale"), block=shape.get("block"))


def _shape_value(name: str, value: str):
    if name in SHAPE_FIELDS + ("block",):
        try:
            return int(value, 0)
        except ValueError:
            raise CustomError(f"custom instruction: {name}={value!r}; valid: a positive integer") from None
    return value


register_custom(parse)
