"""RTL datapaths of GPU matrix units in Amaranth HDL.

``hw.dot_add_unit(instr, lanes=1)`` builds the pipelined dot-add unit of a
catalog instruction from its algorithm parameters (the golden model's
catalog); every stage states its latency and the unit checks that they add up.
``pipelining=`` (a :class:`hw.Pipelining`, a level 0..``MAX_LEVEL`` or a spec such as
``"2,align=2"``) adds register stages to the long stages without changing a bit.
``hw.TensorCore(arch)`` runs every instruction of an architecture, chosen by an
opcode, on datapaths shared between instructions.
"""

from golden.launch import extra_needed

# a missing [rtl] extra is one line naming it (an error line and exit 2 under python -m hw)
with extra_needed("hw", "rtl"):
    from .pipelining import MAX_LEVEL, Pipelining
    from .tensor_core import TensorCore
    from .unit import SUPPORTED, DotAddUnit, dot_add_unit, lane_layout

__all__ = ["MAX_LEVEL", "SUPPORTED", "DotAddUnit", "Pipelining", "TensorCore", "dot_add_unit", "lane_layout"]
