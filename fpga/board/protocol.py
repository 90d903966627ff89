"""The host-link protocol, version 2: frames, CRC-16, command and status codes (the Python side).

Request (host -> board): ``0xA5, cmd:u8, length:u16, payload[length], crc:u16``.
Response (board -> host): ``0x5A, status:u8, length:u16, payload[length], crc:u16``.
Integers are little-endian.  The CRC is CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no
reflection, no xor-out) over every byte after the sync byte up to the end of the payload.
Every request gets exactly one response; an error response has an empty payload.  Version 2
adds the on-board self-test (SELFTEST, SELFTEST_CAPTURE; :mod:`fpga.host.selftest`): a version-1
driver refuses a version-2 board, and the other way round, by the version in IDENTIFY.  The gateware
side of the same format is :class:`fpga.board.link.HostLink`.
"""

from __future__ import annotations

import struct
from enum import IntEnum

__all__ = ["VERSION", "REQUEST_SYNC", "RESPONSE_SYNC", "HEADER_BYTES", "FRAME_OVERHEAD", "Command", "Status",
           "COUNTER_NAMES", "IDENTIFY_MAGIC", "RETRYABLE", "IDEMPOTENT", "ProtocolError", "crc16",
           "encode_request", "encode_response", "FrameParser", "decode_frame", "max_length",
           "parse_counters", "selftest_request", "capture_request", "parse_selftest", "SELFTEST_TRAILER_BYTES",
           "selftest_max_blocks"]

VERSION = 2
REQUEST_SYNC = 0xA5
RESPONSE_SYNC = 0x5A
HEADER_BYTES = 4                  # sync, code, length:u16
FRAME_OVERHEAD = HEADER_BYTES + 2  # ... and the CRC
IDENTIFY_MAGIC = b"MMAFPGA1"


class Command(IntEnum):
    IDENTIFY = 0x01   # -> the identify blob
    LOAD = 0x02       # index:u16, whole entries -> count:u16
    RUN = 0x03        # count:u16 -> cycles:u32
    READ = 0x04       # index:u16, count:u16 -> count * out_bytes bytes
    COUNTERS = 0x05   # -> the COUNTER_NAMES, u32 each
    RESET = 0x06      # -> nothing; counters cleared
    SELFTEST = 0x07   # seed:u64, kind:u8, opcode:u8, first entry:u32, blocks:u16, block_len:u16
    #                   -> blocks * lanes signatures:u32 (streamed as the blocks finish), cycles:u32, vectors:u32
    SELFTEST_CAPTURE = 0x08   # seed:u64, kind:u8, opcode:u8, first entry:u32, count:u16 -> cycles:u32;
    #                           the count results are in the output buffer (READ)


class Status(IntEnum):
    OK = 0x00
    BAD_CRC = 0x01
    BAD_COMMAND = 0x02
    BAD_LENGTH = 0x03
    BAD_RANGE = 0x04
    TIMEOUT = 0x05    # the request stopped mid-way; the partial frame was dropped
    OVERFLOW = 0x06   # bytes arrived while the board could not take them


COUNTER_NAMES = ("frames_ok", "crc_errors", "bad_frames", "timeouts", "rx_overflows", "framing_errors",
                 "skipped_bytes")
# statuses that say the request did not arrive intact: resending it is right
RETRYABLE = frozenset({Status.BAD_CRC, Status.TIMEOUT, Status.OVERFLOW})
# commands whose response may be asked for again: a second LOAD writes the same entries, a second
# RUN computes the same results, a second RESET clears the same counters
IDEMPOTENT = frozenset(Command)


class ProtocolError(ValueError):
    """A frame that breaks the format (bad CRC, wrong sync byte, truncated)."""


def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021 if crc & 0x8000 else crc << 1) & 0xFFFF
        table.append(crc)
    return tuple(table)


_CRC_TABLE = _crc_table()


def crc16(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE of ``data`` (``crc16(b"123456789") == 0x29B1``)."""
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE[(crc >> 8) ^ byte]
    return crc


def max_length(depth: int, in_bytes: int) -> int:
    """The longest payload a board of ``depth`` entries of ``in_bytes`` takes; longer is BAD_LENGTH."""
    return 4 + depth * in_bytes


def _encode(sync: int, code: int, payload: bytes) -> bytes:
    if len(payload) > 0xFFFF:
        raise ValueError(f"payload of {len(payload)} bytes does not fit a frame (at most 65535)")
    body = struct.pack("<BH", code, len(payload)) + bytes(payload)
    return bytes([sync]) + body + struct.pack("<H", crc16(body))


def encode_request(cmd: int, payload: bytes = b"") -> bytes:
    """A request frame (the host's side)."""
    return _encode(REQUEST_SYNC, int(cmd), payload)


def encode_response(status: int, payload: bytes = b"") -> bytes:
    """A response frame (what the board sends)."""
    return _encode(RESPONSE_SYNC, int(status), payload)


class FrameParser:
    """Frames out of a byte stream, fed in pieces: bytes before a sync byte are skipped (counted).

    Parameters
    ----------
    sync : int
        :data:`RESPONSE_SYNC` to read responses, :data:`REQUEST_SYNC` to read requests.

    Members
    -------
    skipped : int
        Bytes skipped while looking for a sync byte.
    """

    def __init__(self, sync: int = RESPONSE_SYNC):
        self.sync = sync
        self.buffer = bytearray()
        self.skipped = 0

    def feed(self, data: bytes) -> None:
        self.buffer += data

    def needed(self) -> int:
        """Bytes still missing from the frame under way (at least 1 when none has started)."""
        if not self.buffer or self.buffer[0] != self.sync:
            return HEADER_BYTES
        if len(self.buffer) < HEADER_BYTES:
            return HEADER_BYTES - len(self.buffer)
        length = int.from_bytes(self.buffer[2:4], "little")
        return max(FRAME_OVERHEAD + length - len(self.buffer), 0)

    def frame(self) -> tuple[int, bytes] | None:
        """The next whole frame as ``(code, payload)``, or None while it is incomplete.

        Raises :class:`ProtocolError` for a frame whose CRC does not match (the frame is consumed).
        """
        start = self.buffer.find(self.sync)
        if start < 0:
            self.skipped += len(self.buffer)
            self.buffer.clear()
            return None
        self.skipped += start
        del self.buffer[:start]
        if self.needed():
            return None
        length = int.from_bytes(self.buffer[2:4], "little")
        raw = bytes(self.buffer[:FRAME_OVERHEAD + length])
        del self.buffer[:len(raw)]
        return decode_frame(raw, self.sync)


def decode_frame(raw: bytes, sync: int = RESPONSE_SYNC) -> tuple[int, bytes]:
    """``(code, payload)`` of one whole frame; :class:`ProtocolError` when it is malformed."""
    if len(raw) < FRAME_OVERHEAD or raw[0] != sync:
        raise ProtocolError(f"not a frame: {raw[:8].hex()} (a frame starts with 0x{sync:02X} and has "
                            f"at least {FRAME_OVERHEAD} bytes)")
    code, length = struct.unpack_from("<BH", raw, 1)
    if len(raw) != FRAME_OVERHEAD + length:
        raise ProtocolError(f"frame of {len(raw)} bytes, its header says {FRAME_OVERHEAD + length}")
    sent = int.from_bytes(raw[-2:], "little")
    computed = crc16(raw[1:-2])
    if sent != computed:
        raise ProtocolError(f"frame CRC 0x{sent:04X} does not match its contents (0x{computed:04X})")
    return code, raw[HEADER_BYTES:-2]


def parse_counters(payload: bytes) -> dict[str, int]:
    """The COUNTERS response payload as ``{name: value}``."""
    if len(payload) != 4 * len(COUNTER_NAMES):
        raise ProtocolError(f"COUNTERS payload of {len(payload)} bytes, expected {4 * len(COUNTER_NAMES)}")
    return dict(zip(COUNTER_NAMES, struct.unpack(f"<{len(COUNTER_NAMES)}I", payload)))


# ---- the self-test (version 2) ----------------------------------------------------------------------

SELFTEST_TRAILER_BYTES = 8        # cycles:u32, vectors:u32 after the signatures


def selftest_max_blocks(lanes: int) -> int:
    """The most blocks one SELFTEST answers (their signatures and the trailer fit a frame)."""
    return (0xFFFF - SELFTEST_TRAILER_BYTES) // (4 * lanes)


def selftest_request(seed: int, kind: int, opcode: int, first: int, blocks: int, block_len: int) -> bytes:
    """SELFTEST's payload."""
    return struct.pack("<QBBIHH", seed, kind, opcode, first, blocks, block_len)


def capture_request(seed: int, kind: int, opcode: int, first: int, count: int) -> bytes:
    """SELFTEST_CAPTURE's payload."""
    return struct.pack("<QBBIH", seed, kind, opcode, first, count)


def parse_selftest(payload: bytes, blocks: int, lanes: int) -> tuple[list, int, int]:
    """SELFTEST's answer: ``(signatures [blocks][lanes], cycles, vectors)``."""
    n = blocks * lanes
    if len(payload) != 4 * n + SELFTEST_TRAILER_BYTES:
        raise ProtocolError(f"SELFTEST payload of {len(payload)} bytes, expected {4 * n + SELFTEST_TRAILER_BYTES} "
                            f"({blocks} blocks of {lanes} lanes)")
    sigs = struct.unpack(f"<{n}I", payload[:4 * n])
    cycles, vectors = struct.unpack("<II", payload[4 * n:])
    return [list(sigs[b * lanes:(b + 1) * lanes]) for b in range(blocks)], cycles, vectors
