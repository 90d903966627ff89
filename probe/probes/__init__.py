"""The probes: black-box experiments on a backend, after MMA-Sim section III and Fasi et al.

Every probe takes a :class:`~probe.rig.Rig` (one instruction's interface on one
backend) and returns plain data (a dict).  Summands are numbered ``0..K-1`` for the
products and ``K`` for ``c``.  Nothing here reads the catalog's algorithm parameters.

One module per thing probed:

* :mod:`.tree`: how the sum is built: element independence (III-B), the summation tree
  (III-C), fused-pass membership and the resulting structure.
* :mod:`.precision`: what each addition keeps (III-D): result precision, bits kept after
  alignment per summand, and the alignment facts (e_zero, small-c drop, block-scale reference).
* :mod:`.rounding`: Tables I and II (III-E) and the result's rounding.
* :mod:`.specials`: special values (III-F).
* :mod:`.disputed`: CDNA3's disputed special-value rules (the paper's reading or the later model's).
* :mod:`.fasi`: the tests of Fasi, Higham, Mikaitis and Pranesh.
* :mod:`.common`: what they share (rows from summand values, scan bookkeeping).
"""

from .disputed import disputed_specials
from .fasi import fasi
from .precision import alignment_reference, binary_precision, c_drop, fused_precision, output_precision, zero_exponent
from .rounding import classify_rounding, final_rounding, output_rounding, rounding_name
from .specials import special_values
from .tree import independence, pass_membership, structure, summation_tree

__all__ = ["alignment_reference", "binary_precision", "c_drop", "classify_rounding", "disputed_specials", "fasi",
           "final_rounding",
           "fused_precision",
           "independence", "output_precision", "output_rounding", "pass_membership", "rounding_name",
           "special_values", "structure", "summation_tree", "zero_exponent"]
