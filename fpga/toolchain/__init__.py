"""The toolchain room: from a board top to a bitstream, and the records of what builds closed.

- :mod:`fpga.toolchain.boards` (:class:`~fpga.toolchain.boards.BoardSpec`): the development boards
  (platform, FPGA family, loader); :mod:`fpga.toolchain.families`: the FPGA families (ECP5, Gowin
  GW5A) behind one interface; :mod:`fpga.toolchain.multipliers`: DSP or LUT multipliers.
- :mod:`fpga.toolchain.build`: bitstream, utilisation and Fmax with the open toolchain, its
  progress shown (:mod:`fpga.toolchain.progress`); :mod:`fpga.toolchain.builds`: a command line's
  build, its defaults resolved; :mod:`fpga.toolchain.fit`: how many lanes fit.
- :mod:`fpga.toolchain.records` (``records.toml``, package data here), :mod:`~fpga.toolchain.records_check`,
  :mod:`~fpga.toolchain.records_table`: the builds the project vouches for, rechecked and tabled.
"""
