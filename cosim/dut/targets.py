"""A description's targets as golden instructions, checked against its operand mapping.

``params = "F=24,out_rounding=RNE"`` in a target is parsed by :func:`params_changes`, the one
place the DUT path reads a golden.Params spec, with the project's one grammar
(:func:`golden.params.parse_params`).  A target of your own (``k``, ``formats``, ``params``) is a
custom instruction (:mod:`golden.custom`), made by ``golden.lookup("custom", spec)`` like any other.
A tile device's targets are checked against its tile: k a whole number of the instruction's K,
each operand's layout fitting its tile.
"""

from __future__ import annotations

import golden
from golden import get_format

from .description import Description, DescriptionError, Target


def params_changes(spec: str) -> dict:
    """``"F=24,out_rounding=RNE"`` as checked golden.Params changes (ValueError, one line, if wrong):
    the project's one params grammar, :func:`golden.params.parse_params`."""
    from golden.params import parse_params
    changes = parse_params(spec)
    if not changes:
        raise ValueError(f"{spec!r} names no field (give FIELD=VALUE,..., e.g. F=24,out_rounding=RNE)")
    return changes


def instruction(desc: Description, t: Target):
    """The golden instruction target ``t`` must match (its Params changed by ``t.params``)."""
    where = f"{desc.path}: [[target]] {t.describe() if not t.custom else t.label or '#' + str(_number(desc, t))}"
    try:
        ins = golden.lookup(t.arch, t.instr)
    except (KeyError, ValueError) as e:
        raise DescriptionError(f"{where}: {e.args[0] if e.args else e}") from None
    if t.params:
        try:
            changes = params_changes(t.params)
        except ValueError as e:
            raise DescriptionError(f"{where}: params: {e}") from None
        try:
            p = ins.params.with_(**changes)
        except (TypeError, ValueError) as e:
            raise DescriptionError(f"{where}: params: {e}") from None
        ins = ins.with_params(p)
    if desc.tile is not None:
        check_tile(desc, ins, where)
    else:
        check_operands(desc, ins, where)
    return ins


def _number(desc: Description, t: Target) -> int:
    return desc.targets.index(t) + 1


def check_tile(desc: Description, ins, where: str) -> None:
    """A tile device's operands against ``ins``: the tile's k in whole k-slices (chainable), each
    operand's elements wide enough, its layout fitting its tile, block scales where ``ins`` has them."""
    from golden.layouts import LayoutError, check_layout
    from golden.tile import slices
    try:
        slices(ins, desc.tile.k)
    except ValueError as e:
        raise DescriptionError(f"{where}: [tile] k: {e}") from None
    widths = dict(zip(("a", "b", "c", "d"), (f.storage_bits for f in ins.formats)))
    if ins.scale_format:
        if desc.tile.k % ins.block_size:
            raise DescriptionError(f"{where}: [tile] k = {desc.tile.k} is not a whole number of {ins.name}'s "
                                   f"blocks of {ins.block_size}")
        widths["scale_a"] = widths["scale_b"] = get_format(ins.scale_format).storage_bits
    for name, bits in widths.items():
        op = desc.operands.get(name)
        if op is None:
            raise DescriptionError(f"{where}: [operands] {name}: missing; {ins.name} is block-scaled "
                                   f"({ins.scale_format} scales, one per {ins.block_size} products)")
        if op.element_bits < bits:
            raise DescriptionError(f"{where}: [operands] {name}.element_bits = {op.element_bits}, but "
                                   f"{ins.name}'s {name} needs {bits} bits")
        rows, cols = desc.tile.shape(name, ins.block_size)
        if (rows * cols) % op.elements:
            raise DescriptionError(f"{where}: [operands] {name}.lanes = {op.elements} does not divide its "
                                   f"{rows} x {cols} tile ({rows * cols} elements) into whole beats")
        try:
            check_layout(op.layout, rows, cols, op.fragment_order)
        except LayoutError as e:
            raise DescriptionError(f"{where}: [operands] {name}: {e}") from None
    for name in set(desc.operands) - set(widths):
        raise DescriptionError(f"{where}: [operands] {name}: {ins.name} is not block-scaled; remove {name}")


def operand_shape(ins) -> dict:
    """``{operand: (elements, bits)}`` the instruction needs (golden's storage bits)."""
    fa, fb, fc, fd = ins.formats
    shape = {"a": (ins.k, fa.storage_bits), "b": (ins.k, fb.storage_bits), "c": (1, fc.storage_bits),
             "d": (1, fd.storage_bits)}
    if ins.scale_format:
        ws = get_format(ins.scale_format).storage_bits
        shape["scale_a"] = shape["scale_b"] = (ins.k // ins.block_size, ws)
    return shape


def check_operands(desc: Description, ins, where: str) -> None:
    """Each operand's element count and width fit ``ins`` (narrow formats may sit in wider elements)."""
    need = operand_shape(ins)
    for name, (count, bits) in need.items():
        op = desc.operands.get(name)
        if op is None:
            raise DescriptionError(f"{where}: [operands] {name}: missing; {ins.name} is block-scaled "
                                   f"({count} scale(s) of {bits} bits per operand)")
        if op.elements != count:
            raise DescriptionError(f"{where}: [operands] {name}.elements = {op.elements}, but {ins.name} has "
                                   f"{count} (K products per dot-add for a and b)")
        if op.element_bits < bits:
            raise DescriptionError(f"{where}: [operands] {name}.element_bits = {op.element_bits}, but "
                                   f"{ins.name}'s {name} needs {bits} bits")
    for name in set(desc.operands) - set(need):
        raise DescriptionError(f"{where}: [operands] {name}: {ins.name} is not block-scaled; remove {name}")


def select(desc: Description, arch: str | None = None, instr: str | None = None) -> list:
    """``[(target, instruction)]`` of the description, those ``arch``/``instr`` name (``golden.select``
    spellings: names, aliases, comma lists, ``all``); a filter that keeps none is a DescriptionError."""
    pairs = [(t, instruction(desc, t)) for t in desc.targets]
    if arch in (None, "", "all") and instr in (None, "", "all"):
        return pairs
    try:
        wanted = {(i.arch, i.name) for i in golden.select(arch or None, instr or None)}
    except ValueError as e:
        raise DescriptionError(f"ARCH={arch or 'all'} INSTR={instr or 'all'}: {e}") from None
    kept = [(t, i) for t, i in pairs if (i.arch, i.name) in wanted]
    if not kept:
        have = ", ".join(t.describe() for t, _ in pairs)
        raise DescriptionError(f"ARCH={arch or 'all'} INSTR={instr or 'all'} keeps none of {desc.path.name}'s "
                               f"targets ({have})")
    return kept
