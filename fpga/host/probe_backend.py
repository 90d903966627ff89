"""The board as a backend of the dissection suite: ``python -m probe ARCH INSTR --backend fpga:URL``.

probe finds this through the ``mma_rtl.probe_backends`` entry point (pyproject.toml), so probe
never imports fpga.  Instructions the board does not run are :class:`golden.device.Unavailable` (probed
as "skipped"); a port that cannot be opened or a board that does not answer is an error.
"""

from __future__ import annotations

from golden.device import Device, DeviceError, Unavailable

from .driver import BoardError, BoardLink


class FPGABackend(Device):
    """:func:`golden.dot_add`'s bit API on a connected board (see :class:`fpga.BoardLink`): a
    :class:`golden.device.Device` whose ``close`` releases the port.

    Parameters
    ----------
    url : str
        The board's serial port (``/dev/ttyUSB0``, ``COM3``) or any pyserial URL
        (``socket://127.0.0.1:5555`` for the simulated board of ``python -m fpga sim --serve``).
    **board_options
        Passed to :class:`fpga.BoardLink` (``timeout``, ``baud``).
    """

    def __init__(self, url: str, **board_options):
        try:
            self.board = BoardLink(url, **board_options)
        except BoardError as e:
            raise DeviceError(f"fpga backend: {e}") from None
        self.name = f"fpga {url}"

    def __call__(self, ins, a, b, c, scale_a=None, scale_b=None):
        cfg = self.board.config
        if ins.arch != cfg.arch or ins.name not in cfg.instructions:
            raise Unavailable(f"the board at {self.board.url} runs {cfg.arch} {', '.join(cfg.instructions)}, "
                              f"not {ins.arch} {ins.name}")
        try:
            return self.board.dot_add(ins, a, b, c, scale_a, scale_b)
        except BoardError as e:
            raise DeviceError(f"fpga backend: {e}") from None

    def close(self) -> None:
        self.board.close()


def from_url(url: str, **board_options) -> FPGABackend:
    """The entry point ``fpga`` of the group ``mma_rtl.probe_backends``."""
    return FPGABackend(url, **board_options)
