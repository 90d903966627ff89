"""Cover points of the arithmetic's corners, one module per algorithm family.

:mod:`golden.cover.model` is the model (:class:`~golden.cover.model.Bin`,
:class:`~golden.cover.model.CoverPoint`, :class:`~golden.cover.model.Batch`,
:class:`~golden.cover.model.Coverage`); :mod:`golden.cover.common` holds the points every algorithm
shares (the result's class, the final rounding, special values by operand position, the chained
forms' intermediate roundings); the others hold each algorithm's own.  golden.algorithms attaches
each algorithm's tuple to its descriptor (``cover_points``), so nothing here imports golden.algorithms
or golden.api: :mod:`golden.coverage` measures, :mod:`golden.cover.directed` solves for operands.
"""
