"""The board room: what is elaborated into the bitstream, and what both ends of the link share.

- :mod:`fpga.board.top` (:class:`~fpga.board.top.BoardTop`): the unit behind block-RAM buffers, the
  host-link controller (:mod:`fpga.board.link`, speaking :mod:`fpga.board.protocol`) and a UART PHY
  (:mod:`fpga.board.uart`); :mod:`fpga.board.crossing`: the link-to-compute clock crossing, checked
  by :mod:`fpga.board.cdc_check`.
- :mod:`fpga.board.config` (:class:`~fpga.board.config.BoardConfig`): what a board runs, its
  identify blob and configuration hash; the driver reads the same class back from a board.
- :mod:`fpga.board.selftest`: the self-test's gateware (generator, signature engine, CRC) and its
  numpy model, the specification the host recomputes.
- :mod:`fpga.board.dut`: a design of one's own as the unit; :mod:`fpga.board.standin`: the unit alone
  behind an LFSR (what the datapath itself costs).

Nothing here runs a tool or opens a port.  It imports no other room, except that
:class:`~fpga.board.top.BoardTop` asks its platform's FPGA family
(:mod:`fpga.toolchain.families`) for the design clock's PLL and reset.
"""
