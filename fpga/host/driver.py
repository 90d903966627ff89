"""The host side of the link: :class:`BoardLink` runs golden's dot_add bit API on a board.

>>> with BoardLink("/dev/ttyUSB0") as board:                          # doctest: +SKIP
...     d = board.dot_add("HMMA.1684.F32.TF32", a, b, c)          # golden.dot_add's bits

A board answers IDENTIFY with what it runs; the driver rebuilds that configuration from its own
golden catalog and hw, and refuses a board whose configuration hash differs (the bitstream was
built from other sources).  Rows travel in batches of the board's depth: LOAD in frames of at
most :data:`FRAME_PAYLOAD_BYTES`, RUN, READ.  A LOAD whose frame arrived damaged may have written
some entries; the driver resends it whole.
"""

from __future__ import annotations

import json
import struct
import time

import numpy as np

from ..board.config import BoardConfig, Operands
from ..board.protocol import (
    COUNTER_NAMES,
    FRAME_OVERHEAD,
    IDEMPOTENT,
    IDENTIFY_MAGIC,
    RESPONSE_SYNC,
    RETRYABLE,
    VERSION,
    Command,
    FrameParser,
    ProtocolError,
    Status,
    capture_request,
    encode_request,
    parse_counters,
    parse_selftest,
    selftest_max_blocks,
    selftest_request,
)
from ..board.selftest.model import check_request

__all__ = ["BoardLink", "BoardError", "LinkTimeout", "BoardMismatch", "BoardBusy", "LinkLost",
           "FRAME_PAYLOAD_BYTES", "MAX_RETRIES"]

FRAME_PAYLOAD_BYTES = 4096      # a LOAD or READ frame carries at most this much (41 ms at 1 Mbaud)
MAX_RETRIES = 3                 # resends of a request the board saw damaged
READ_SLICE_S = 0.05             # one blocking read of the port: the deadline is checked this often
DEFAULT_BAUD = BoardConfig.__dataclass_fields__["baud"].default

_MEANING = {
    Status.BAD_CRC: "the request arrived damaged",
    Status.BAD_COMMAND: "the board does not know the command",
    Status.BAD_LENGTH: "the payload length is not valid for the command",
    Status.BAD_RANGE: "index or count outside the board's buffers",
    Status.TIMEOUT: "the request stopped mid-way",
    Status.OVERFLOW: "bytes arrived while the board was busy",
}


class BoardError(RuntimeError):
    """Anything wrong with the board or the link (one line: what, and what is valid)."""


class LinkTimeout(BoardError):
    """No (complete) response in time."""


class BoardMismatch(BoardError):
    """The board runs another configuration than expected."""


class BoardBusy(BoardError):
    """Another client holds the board (a serial port locked by another program, a simulated board
    serving another connection)."""


class LinkLost(BoardError):
    """The connection went away (the board was reset or unplugged, the simulated board stopped)."""


class _Port:
    """The serial port as the driver uses it: every error of the connection becomes :class:`LinkLost`
    (pyserial's ``SerialException`` is an ``OSError``), so no caller sees pyserial's traceback."""

    def __init__(self, port, url: str):
        self.raw, self.url = port, url

    def _lost(self, e: Exception, doing: str) -> LinkLost:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        return LinkLost(f"the connection to {self.url} was lost while {doing} ({reason}): was the board reset, "
                        f"unplugged, or the simulated board stopped?")

    def write(self, data: bytes) -> None:
        try:
            self.raw.write(data)
        except OSError as e:
            raise self._lost(e, "sending") from None

    def read(self, n: int) -> bytes:
        try:
            return self.raw.read(n)
        except OSError as e:
            raise self._lost(e, "receiving") from None

    def reset_input_buffer(self) -> None:
        try:
            self.raw.reset_input_buffer()
        except OSError as e:
            raise self._lost(e, "clearing its input") from None

    def close(self) -> None:
        close = getattr(self.raw, "close", None)
        if close is not None:
            try:
                close()
            except OSError:
                pass


def _available_ports() -> str:
    from serial.tools import list_ports
    ports = sorted(p.device for p in list_ports.comports())
    return ", ".join(ports) if ports else "none found"


def _open(url: str, baud: int, timeout: float):
    import serial
    try:
        # exclusive: a port another program holds is refused as busy instead of sharing its bytes
        return serial.serial_for_url(url, baudrate=baud, timeout=timeout,
                                     **({} if "://" in url else {"exclusive": True}))
    except (serial.SerialException, ValueError, OSError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        if any(w in reason for w in ("exclusively lock", "Resource temporarily unavailable", "Device or resource busy",
                                     "Access is denied")):            # flock, TIOCEXCL, Windows
            raise BoardBusy(f"the board at {url} is busy: another program holds its port ({reason}); "
                            f"one client at a time (a campaign: one worker per board)") from None
        raise BoardError(f"cannot open {url}: {reason}; available serial ports: {_available_ports()} "
                         f"(or a pyserial URL such as socket://host:port)") from None


def _describe(info: dict) -> str:
    names = ",".join(name for _, name in sorted(info.get("instructions", [])))
    kind = "tensor core" if info.get("core") else f"lanes={info.get('lanes')}"
    return f"{info.get('arch')} {names} ({kind}, depth {info.get('depth')})"


def _round_robin(counts: list) -> list:
    """``(request, row)`` pairs taking one row of each request in turn until all are used."""
    order, longest = [], max(counts, default=0)
    for i in range(longest):
        order.extend((r, i) for r, n in enumerate(counts) if i < n)
    return order


class BoardLink:
    """One board on a serial port (a pyserial URL, or an open port-like object).

    Parameters
    ----------
    url : str or serial-like
        What ``serial.serial_for_url`` takes (``/dev/ttyUSB0``, ``socket://localhost:5555``), or
        an object with pyserial's ``read``, ``write`` and ``reset_input_buffer`` (used as it is).
    baud : int, optional
        The UART rate (default: ``expect.baud``, else :class:`BoardConfig`'s default).
    timeout : float
        Seconds to wait for a response to make progress before :class:`LinkTimeout`.
    expect : BoardConfig, optional
        The configuration the board must run (its hash is compared); default: whatever the board
        says it runs, rebuilt from this checkout's golden and hw and checked the same way.

    Members
    -------
    config : BoardConfig
    info : dict
        The board's identify JSON.
    retries : int
        Requests resent so far (damaged on the way or answered damaged).
    cycles : int or None
        Clock cycles the last RUN took (first issue to last result).
    slowdown : float
        How much slower than its baud rate the link answered the first IDENTIFY (1 or a little
        more for a board; 30 to 100 for the simulated one): the wait for the answer to a long
        request (a LOAD) is its transfer time at the baud rate times this, plus ``timeout``.
    """

    def __init__(self, url, *, baud: int | None = None, timeout: float = 5.0, expect: BoardConfig | None = None):
        if not timeout > 0:
            raise ValueError(f"timeout must be positive seconds, not {timeout!r}")
        if baud is not None and (isinstance(baud, bool) or not isinstance(baud, int) or baud < 1):
            raise ValueError(f"baud must be a positive whole number of bits per second, not {baud!r}")
        self.baud = baud or (expect.baud if expect is not None else DEFAULT_BAUD)
        self.timeout = float(timeout)
        self.retries = 0
        self.cycles = None
        self.slowdown = 1.0
        if isinstance(url, str):
            self.url = url
            port = _open(url, self.baud, min(READ_SLICE_S, self.timeout))
        else:
            self.url = getattr(url, "name", None) or type(url).__name__
            port = url
        self.port = _Port(port, self.url)
        try:
            self.port.reset_input_buffer()
            self.info, self.config = self._identify(expect, measure=True)
        except BaseException:
            self.close()
            raise

    def _measure_link(self, seconds: float, answer_bytes: int) -> None:
        """The slowdown of the link against its baud rate, from the first IDENTIFY's round trip."""
        line_bytes = len(encode_request(Command.IDENTIFY)) + FRAME_OVERHEAD + answer_bytes
        self.slowdown = max(1.0, seconds / (line_bytes * 10 / self.baud))

    # ---- identity --------------------------------------------------------------------------------

    def _identify(self, expect: BoardConfig | None, measure: bool = False):
        started = time.monotonic()
        blob = self.request(Command.IDENTIFY)
        if measure:
            self._measure_link(time.monotonic() - started, len(blob))
        if not blob.startswith(IDENTIFY_MAGIC) or len(blob) < len(IDENTIFY_MAGIC) + 6:
            raise BoardError(f"{self.url} answered IDENTIFY with {blob[:16]!r}, not an identify blob "
                             f"(which starts with {IDENTIFY_MAGIC!r})")
        board_hash, n = struct.unpack_from("<IH", blob, len(IDENTIFY_MAGIC))
        start = len(IDENTIFY_MAGIC) + 6
        try:
            info = json.loads(blob[start:start + n].decode())
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise BoardError(f"{self.url}: the identify JSON does not parse ({e})") from None
        if info.get("protocol") != VERSION:
            raise BoardError(f"{self.url} speaks protocol {info.get('protocol')!r}; this driver speaks {VERSION}")
        runs = f"{self.url} runs {_describe(info)} (config hash 0x{board_hash:08x})"
        if expect is not None and expect.config_hash != board_hash:
            raise BoardMismatch(f"{runs}, expected {expect.describe()} (config hash 0x{expect.config_hash:08x})")
        config = expect if expect is not None else self._rebuild(info, runs)
        if config.config_hash != board_hash:
            raise BoardMismatch(f"{runs}, but this checkout's golden and hw give that configuration config hash "
                                f"0x{config.config_hash:08x}: the bitstream was built from other sources; rebuild it")
        return info, config

    @staticmethod
    def _rebuild(info: dict, runs: str) -> BoardConfig:
        """The board's configuration as this checkout builds it."""
        try:
            return BoardConfig(info["arch"], tuple(name for _, name in sorted(info["instructions"])),
                               lanes=info["lanes"], core=info["core"], depth=info["depth"],
                               clock_hz=info["clock_hz"], baud=info["baud"],
                               pipelining=info.get("pipelining", "0"))   # boards built before the knob: level 0
        except (KeyError, TypeError, ValueError, NotImplementedError) as e:
            raise BoardMismatch(f"{runs}, which this checkout cannot build: {e}") from None

    def describe(self) -> str:
        """One line: where the board is, what it runs, its configuration hash."""
        return f"board at {self.url}: {_describe(self.info)}, config hash 0x{self.config.config_hash:08x}"

    def identify(self) -> dict:
        """IDENTIFY again (the board still answers, and still runs the same configuration)."""
        info, _ = self._identify(self.config)
        return info

    # ---- frames ----------------------------------------------------------------------------------

    def raw_exchange(self, frame: bytes) -> int:
        """Send ``frame`` as it is (a damaged or truncated one, to test the link) and return the
        status of the board's answer; no retries.  :class:`LinkTimeout` if none comes."""
        self.port.reset_input_buffer()
        self.port.write(frame)
        try:
            status, _ = self._response(Command.IDENTIFY, len(frame))
        except ProtocolError as e:
            raise BoardError(f"{self.url}: damaged response to a planted frame ({e})") from None
        return status

    def request(self, cmd, payload: bytes = b"") -> bytes:
        """Send one request, return the OK response's payload; :class:`BoardError` otherwise.

        A request the board saw damaged (BAD_CRC, TIMEOUT, OVERFLOW), or a damaged response to an
        idempotent command, is sent again, up to :data:`MAX_RETRIES` times (counted in ``retries``).
        """
        cmd = Command(cmd)
        frame = encode_request(cmd, payload)
        for attempt in range(MAX_RETRIES + 1):
            self.port.write(frame)
            try:
                status, body = self._response(cmd, len(frame))
            except ProtocolError as e:
                if cmd in IDEMPOTENT and attempt < MAX_RETRIES:
                    self._resend()
                    continue
                raise BoardError(f"{self.url}: damaged response to {cmd.name} ({e}), {attempt} retries") from None
            if status == Status.OK:
                return body
            if status in RETRYABLE and attempt < MAX_RETRIES:
                self._resend()
                continue
            raise BoardError(self._refusal(cmd, status, attempt))
        raise AssertionError("unreachable")

    def _resend(self):
        self.retries += 1
        self.port.reset_input_buffer()

    def _refusal(self, cmd: Command, status: int, attempt: int) -> str:
        try:
            name = Status(status).name
            meaning = _MEANING[Status(status)]
        except ValueError:
            name, meaning = f"status 0x{status:02x}", "a status protocol 1 does not define"
        after = f" after {attempt} retries" if attempt else ""
        return f"{self.url} answered {name} to {cmd.name}{after}: {meaning}"

    def _response(self, cmd: Command, sent: int) -> tuple[int, bytes]:
        """The next response frame; the wait restarts whenever bytes arrive."""
        parser = FrameParser(RESPONSE_SYNC)
        received = 0
        wait = self.timeout + sent * 10 / self.baud * self.slowdown     # the request's own transfer time too
        deadline = time.monotonic() + wait
        while True:
            frame = parser.frame()
            if frame is not None:
                return frame
            chunk = self.port.read(parser.needed())
            if chunk:
                received += len(chunk)
                parser.feed(chunk)
                deadline = time.monotonic() + self.timeout
            elif time.monotonic() > deadline:
                got = f"{received} bytes of a response" if received else "nothing"
                busy = (" or is another client connected to it (a simulated board serves one at a time)?"
                        if cmd == Command.IDENTIFY and not received and self.url.startswith("socket://") else "?")
                raise LinkTimeout(f"no response to {cmd.name} from {self.url} within {self.timeout:g} s "
                                  f"(received {got}); is the board programmed, and at {self.baud} baud{busy}")

    # ---- the dot-add API -------------------------------------------------------------------------

    def dot_add(self, instr, a, b, c, scale_a=None, scale_b=None) -> np.ndarray:
        """``golden.dot_add``'s bit API on the board: any number of rows, any batch shape."""
        ops = self.config.operands(instr, a, b, c, scale_a, scale_b)
        fd = ops.ins.formats[3]
        out = np.empty(ops.rows, fd.dtype)
        rows_per_batch = self.config.depth * self.config.lanes
        for lo in range(0, ops.rows, rows_per_batch):
            hi = min(lo + rows_per_batch, ops.rows)
            out[lo:hi] = self._batch(ops.take(lo, hi))
        return out.reshape(ops.batch)

    def dot_add_mixed(self, requests) -> list:
        """Several instructions' dot-adds interleaved entry by entry through a tensor core, as a GPU
        issues them: ``requests`` is a list of ``(instr, a, b, c[, scale_a, scale_b])``; returns one
        result array per request, each as :meth:`dot_add` would return it."""
        cfg = self.config
        if not cfg.core:
            raise ValueError(f"mixed batches need a tensor core; this board runs one unit ({cfg.describe()})")
        ops = [cfg.operands(*r) for r in requests]
        size = cfg.in_bytes
        entries = [[p[i * size:(i + 1) * size] for i in range(o.rows)] for o, p in zip(ops, map(cfg.pack, ops))]
        order = _round_robin([o.rows for o in ops])           # (request, row) in issue order
        data = b"".join(entries[r][i] for r, i in order)
        got = bytearray()
        for lo in range(0, len(order), cfg.depth):
            n = min(cfg.depth, len(order) - lo)
            self._load(data[lo * size:(lo + n) * size], n)
            (self.cycles,) = struct.unpack("<I", self._expect(Command.RUN, struct.pack("<H", n), 4))
            got += self._read(n)
        width = cfg.out_bytes
        per_request = [bytearray() for _ in ops]
        for k, (r, _) in enumerate(order):
            per_request[r] += got[k * width:(k + 1) * width]
        return [cfg.unpack(o.ins, bytes(raw), o.rows).reshape(o.batch) for o, raw in zip(ops, per_request)]

    def _batch(self, ops: Operands) -> np.ndarray:
        cfg = self.config
        entries = cfg.entries(ops.rows)
        self._load(cfg.pack(ops), entries)
        (self.cycles,) = struct.unpack("<I", self._expect(Command.RUN, struct.pack("<H", entries), 4))
        return cfg.unpack(ops.ins, self._read(entries), ops.rows)

    def _load(self, data: bytes, entries: int) -> None:
        size = self.config.in_bytes
        per_frame = max(1, FRAME_PAYLOAD_BYTES // size)
        for first in range(0, entries, per_frame):
            n = min(per_frame, entries - first)
            body = self._expect(Command.LOAD, struct.pack("<H", first) + data[first * size:(first + n) * size], 2)
            if int.from_bytes(body, "little") != n:
                raise BoardError(f"{self.url} wrote {int.from_bytes(body, 'little')} of {n} entries at {first}")

    def _read(self, entries: int) -> bytes:
        size = self.config.out_bytes
        per_frame = max(1, FRAME_PAYLOAD_BYTES // size)
        return b"".join(self._expect(Command.READ, struct.pack("<HH", first, min(per_frame, entries - first)),
                                     min(per_frame, entries - first) * size)
                        for first in range(0, entries, per_frame))

    def _expect(self, cmd: Command, payload: bytes, nbytes: int) -> bytes:
        body = self.request(cmd, payload)
        if len(body) != nbytes:
            raise BoardError(f"{self.url} answered {cmd.name} with {len(body)} bytes, expected {nbytes}")
        return body

    # ---- the on-board self-test (fpga.host.selftest) ---------------------------------------------------

    def selftest(self, seed: int, kind: int, first: int, blocks: int, block_len: int) -> tuple[list, int, int]:
        """SELFTEST: ``blocks`` blocks of ``block_len`` generated entries from entry ``first``;
        returns ``(signatures [blocks][lanes], cycles, vectors)``."""
        self._selftest_board()
        kind = check_request(seed, kind, first, blocks, block_len)
        if not 1 <= blocks <= selftest_max_blocks(self.config.lanes):
            raise ValueError(f"blocks per SELFTEST must be 1..{selftest_max_blocks(self.config.lanes)}, not {blocks}")
        body = self.request(Command.SELFTEST, selftest_request(seed, kind, 0, first, blocks, block_len))
        try:
            return parse_selftest(body, blocks, self.config.lanes)
        except ProtocolError as e:
            raise BoardError(f"{self.url}: {e}") from None

    def selftest_capture(self, seed: int, kind: int, first: int, count: int) -> np.ndarray:
        """SELFTEST_CAPTURE and READ: the results of ``count`` generated entries from entry ``first``
        (``count * lanes`` results, golden's dtype, in the board's order)."""
        self._selftest_board()
        cfg = self.config
        kind = check_request(seed, kind, first, 1, 1)
        if not 1 <= count <= cfg.depth:
            raise ValueError(f"a capture takes 1..{cfg.depth} entries (the output buffer), not {count}")
        (self.cycles,) = struct.unpack("<I", self._expect(Command.SELFTEST_CAPTURE,
                                                          capture_request(seed, kind, 0, first, count), 4))
        return cfg.unpack(cfg.instruction_objects[0], self._read(count), count * cfg.lanes)

    def _selftest_board(self) -> None:
        if self.config.core:
            raise BoardError(f"{self.url} runs a tensor core ({self.config.describe()}); the on-board self-test "
                             f"runs on a dot-add unit's board only (so far)")

    # ---- housekeeping ----------------------------------------------------------------------------

    def counters(self) -> dict:
        """The board's link counters (``frames_ok`` counts this request too)."""
        return parse_counters(self._expect(Command.COUNTERS, b"", 4 * len(COUNTER_NAMES)))

    def reset(self) -> None:
        """Clear the board's counters (its buffers count as empty)."""
        self._expect(Command.RESET, b"", 0)

    def close(self) -> None:
        self.port.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return f"Board({self.url!r}: {self.config.describe()})"


