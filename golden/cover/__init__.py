"""Cover points of the arithmetic's corners, one module per algorithm family.

:mod:`golden.cover.model` is the model (:class:`~golden.cover.model.Bin`,
:class:`~golden.cover.model.CoverPoint`, :class:`~golden.cover.model.Batch`,
:class:`~golden.cover.model.Coverage`); :mod:`golden.cover.common` holds the points every algorithm
shares (the result's class, the final rounding, special values by operand position, the chained
forms' intermediate roundings); the others hold each algorithm's own.  This package registers each
algorithm's tuple as its descriptor's ``golden.cover`` part (:data:`COVER_POINTS`; ``import golden``
imports it).  golden.algorithms does not import it (the compiled kernels' cache key covers every file
golden.algorithms imports: an edit of a cover point must not recompile them), and the point modules
import neither golden.algorithms nor golden.api: :mod:`golden.coverage` measures,
:mod:`golden.cover.directed` solves for operands.
"""

from ..descriptors import Part, register
from .amd import FDRDA_COVER_POINTS, GFDRDA_COVER_POINTS
from .fda import FDA_COVER_POINTS
from .gdfs import GDFS_COVER_POINTS
from .sequential import GPS_COVER_POINTS, SFMA_COVER_POINTS

# each algorithm's points, registered as its descriptor's golden.cover part (golden.descriptors.Part.COVER)
COVER_POINTS = {"FDA": FDA_COVER_POINTS, "GDFS": GDFS_COVER_POINTS, "FDRDA": FDRDA_COVER_POINTS,
                "GFDRDA": GFDRDA_COVER_POINTS, "SFMA": SFMA_COVER_POINTS, "GPS": GPS_COVER_POINTS}
for _name, _points in COVER_POINTS.items():
    register(_name, Part.COVER, _points)
