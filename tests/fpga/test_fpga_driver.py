"""The host side: protocol frames, BoardConfig (identity, packing) and the driver fpga.host.driver.BoardLink.

The driver talks to :class:`FakeBoard`, a board in Python that unpacks entries with cosim's
payload packer (an implementation independent of fpga.board.config's) and computes with golden; faults
are planted in it (damaged requests and responses, silence, a wrong result, another bitstream).
The driver against the simulated gateware is in test_fpga_link.py.
"""

from __future__ import annotations

import json
import struct
import time
from collections import deque

import numpy as np
import pytest

import fpga.host.driver as driver
import golden
from cosim.payload import PayloadLayout
from fpga.board.config import BoardConfig
from fpga.board.protocol import (
    FRAME_OVERHEAD,
    IDENTIFY_MAGIC,
    REQUEST_SYNC,
    RESPONSE_SYNC,
    Command,
    FrameParser,
    ProtocolError,
    Status,
    decode_frame,
    encode_request,
    encode_response,
)
from fpga.host.driver import BoardError, BoardLink, BoardMismatch, LinkTimeout
from golden.vectors import random_operands

TF32 = ("hopper", "HMMA.1684.F32.TF32")
SCALED = ("blackwell", "UTCQMMA.SF.F32.E4M3.E4M3.E8")


def config(name=TF32, **kw) -> BoardConfig:
    return BoardConfig.from_names(*name, **{"depth": 4, **kw})


def operands(ins, rows, seed=0):
    return random_operands(ins, rows, np.random.default_rng(seed))


def reference_pack(cfg, ins, ops) -> bytes:
    """Entries by cosim's packer (rows padded with zero dot-adds to whole entries)."""
    rows = ops[2].shape[0]
    pad = cfg.entries(rows) * cfg.lanes - rows
    padded = [None if x is None else np.concatenate([np.asarray(x, np.uint64),
                                                     np.zeros((pad,) + np.shape(x)[1:], np.uint64)]) for x in ops]
    words = PayloadLayout(ins, cfg.lanes).pack(*padded)
    return _bytes(words, cfg.in_bytes)


def _bytes(words, nbytes):
    return np.ascontiguousarray(words, "<u8").view(np.uint8).reshape(len(words), -1)[:, :nbytes].tobytes()


class FakeBoard:
    """A board in Python behind pyserial's read/write/reset_input_buffer.

    ``faults``: one-shot faults, taken one per request in order (None: behave): "bad_crc" (answer
    BAD_CRC without executing), "damage_response", "silence".  ``flip_result``: flip bit 0 of
    result 0 of every RUN (a wrong datapath).  ``blob``: another identify blob.
    """

    name = "fake://board"

    def __init__(self, cfg: BoardConfig, faults=(), flip_result=False, blob=None):
        self.cfg = cfg
        self.ins = cfg.instruction_objects[0]
        self.layout = PayloadLayout(self.ins, cfg.lanes)
        self.inbuf = [bytes(cfg.in_bytes)] * cfg.depth
        self.outbuf = [bytes(cfg.out_bytes)] * cfg.depth
        self.parser = FrameParser(REQUEST_SYNC)
        self.out = bytearray()
        self.faults = deque(faults)
        self.flip_result = flip_result
        self.blob = blob if blob is not None else cfg.identify_blob
        self.log = []                                  # (cmd, payload length) of each request

    def write(self, data):
        self.parser.feed(data)
        while True:
            try:
                frame = self.parser.frame()
            except ProtocolError:
                self.out += encode_response(Status.BAD_CRC)
                continue
            if frame is None:
                return len(data)
            self.log.append((frame[0], len(frame[1])))
            fault = self.faults.popleft() if self.faults else None
            if fault == "silence":
                continue
            if fault == "bad_crc":
                self.out += encode_response(Status.BAD_CRC)
                continue
            response = bytearray(encode_response(*self.handle(*frame)))
            if fault == "damage_response":
                response[-3] ^= 0x08
            self.out += response

    def read(self, n):
        got = bytes(self.out[:n])
        del self.out[:n]
        return got

    def reset_input_buffer(self):
        self.out.clear()

    def close(self):
        pass

    def handle(self, cmd, payload):
        cfg = self.cfg
        if cmd == Command.IDENTIFY:
            return Status.OK, self.blob
        if cmd == Command.LOAD:
            (index,) = struct.unpack_from("<H", payload)
            body = payload[2:]
            n = len(body) // cfg.in_bytes
            for k in range(n):
                self.inbuf[index + k] = body[k * cfg.in_bytes:(k + 1) * cfg.in_bytes]
            return Status.OK, struct.pack("<H", n)
        if cmd == Command.RUN:
            (count,) = struct.unpack("<H", payload)
            self.run(count)
            return Status.OK, struct.pack("<I", count + cfg.latency)
        if cmd == Command.READ:
            index, count = struct.unpack("<HH", payload)
            return Status.OK, b"".join(self.outbuf[index:index + count])
        if cmd == Command.COUNTERS:
            return Status.OK, bytes(28)
        return Status.BAD_COMMAND, b""

    def run(self, count):
        words = np.zeros((count, self.layout.in_words), np.uint64)
        for k in range(count):
            raw = self.inbuf[k] + bytes(self.layout.in_words * 8 - self.cfg.in_bytes)
            words[k] = np.frombuffer(raw, "<u8")
        a, b, c, sa, sb = self.layout.unpack_in(words)
        d = golden.dot_add(self.ins, a, b, c, sa, sb)
        if self.flip_result:
            d[0] ^= d.dtype.type(1)
        out = self.layout.pack_out(d)
        for k in range(count):
            self.outbuf[k] = _bytes(out[k:k + 1], self.cfg.out_bytes)


# ---- protocol ------------------------------------------------------------------------------------

def test_frames_round_trip_and_damage_is_detected():
    frame = encode_request(Command.READ, struct.pack("<HH", 1, 2))
    assert frame[0] == REQUEST_SYNC and decode_frame(frame, REQUEST_SYNC) == (Command.READ, b"\x01\x00\x02\x00")
    parser = FrameParser(RESPONSE_SYNC)
    parser.feed(b"\x00\xff" + encode_response(Status.OK, b"abc")[:5])
    assert parser.frame() is None and parser.skipped == 2 and parser.needed() == 4
    parser.feed(encode_response(Status.OK, b"abc")[5:])
    assert parser.frame() == (Status.OK, b"abc")
    damaged = bytearray(encode_response(Status.OK, b"abc"))
    damaged[5] ^= 1
    with pytest.raises(ProtocolError, match="CRC"):
        decode_frame(bytes(damaged))


# ---- configuration -------------------------------------------------------------------------------

@pytest.mark.parametrize("name, lanes", [(TF32, 1), (TF32, 3), (SCALED, 2)], ids=["tf32", "tf32-3-lanes", "scaled"])
def test_pack_matches_cosims_packer_and_unpack_inverts(name, lanes):
    cfg = config(name, lanes=lanes)
    ins = cfg.instruction_objects[0]
    ops = operands(ins, 7, seed=lanes)
    raw = cfg.pack(ins, *ops)
    assert len(raw) == cfg.entries(7) * cfg.in_bytes and raw == reference_pack(cfg, ins, ops)
    d = golden.dot_add(ins, *ops)
    words = PayloadLayout(ins, lanes).pack_out(np.concatenate([d, np.zeros(cfg.entries(7) * lanes - 7, d.dtype)]))
    got = cfg.unpack(ins, _bytes(words, cfg.out_bytes), 7)
    assert got.dtype == d.dtype and np.array_equal(got, d)


def test_tensor_core_entries_carry_the_opcode():
    cfg = BoardConfig("hopper", ("HMMA.1684.F32.TF32", "HMMA.1688.F16"), core=True, depth=4)
    ins = cfg.instruction_objects[1]
    ops = operands(ins, 3)
    value = int.from_bytes(cfg.pack(ins, *ops)[:cfg.in_bytes], "little")
    layout = dict(iter(cfg.in_shape))
    assert value & 1 == cfg.opcodes["HMMA.1688.F16"] == 1
    assert value >> layout["c"].offset & 0xFFFF == int(ops[2][0])
    with pytest.raises(ValueError, match="bits set above the 16-bit f16 result"):
        cfg.unpack(ins, (0x10000).to_bytes(cfg.out_bytes, "little"), 1)


def test_identify_blob_and_what_the_hash_covers():
    cfg = config()
    blob = cfg.identify_blob
    config_hash, n = struct.unpack_from("<IH", blob, 8)
    info = json.loads(blob[14:14 + n])
    assert blob[:8] == IDENTIFY_MAGIC and config_hash == cfg.config_hash and 14 + n == len(blob)
    assert blob[14:].decode() == json.dumps(info, sort_keys=True, separators=(",", ":"))
    assert info == {"protocol": 2, "arch": "hopper", "instructions": [[0, "HMMA.1684.F32.TF32"]], "core": False,
                    "lanes": 1, "latency": cfg.latency, "in_bits": 288, "in_bytes": 36, "out_bits": 32,
                    "out_bytes": 4, "depth": 4, "clock_hz": 25_000_000, "baud": 1_000_000,
                    "layout": {"a": [0, 128], "b": [128, 128], "c": [256, 32]}, "pipelining": "0"}
    assert config(baud=115200, clock_hz=50_000_000).config_hash == cfg.config_hash      # not the arithmetic
    assert len({config(depth=8).config_hash, config(lanes=2).config_hash, cfg.config_hash,
                config(("hopper", "HMMA.1688.F32.BF16")).config_hash}) == 4


def test_the_pipelining_is_shown_and_only_its_latency_is_hashed():
    deep = config(pipelining="2,align=2")
    assert deep.pipelining == "2,align=2" and config().pipelining == "0"
    info = json.loads(deep.identify_json)
    assert info["pipelining"] == "2,align=2" and info["latency"] == deep.latency > config().latency
    assert "pipelining 2,align=2" in deep.describe() and deep.name.endswith("_p2_align2")
    assert "_p" not in config().name
    with pytest.raises(ValueError, match="level must be 0..3"):
        config(pipelining="7")
    # a pipelined board is rebuilt as it is from its identify JSON (its latency is in the hash)
    assert BoardLink(FakeBoard(deep)).config == deep


def test_configuration_errors_say_what_is_valid():
    with pytest.raises(ValueError, match=r"depth 2000 does not fit .* valid depths: 1\.\.1820"):
        config(depth=2000)
    with pytest.raises(ValueError, match="need core=True"):
        BoardConfig("hopper", ("HMMA.1684.F32.TF32", "HMMA.1688.F16"))
    with pytest.raises(ValueError, match="lanes must be 1"):
        BoardConfig("hopper", ("HMMA.1684.F32.TF32",), core=True, lanes=2)
    with pytest.raises(ValueError, match="name one, or pass core=True"):
        BoardConfig.from_names("hopper", "HMMA")
    with pytest.raises(ValueError, match="HMMA.1688.F16 is not on this board; it runs hopper HMMA.1684"):
        config().pack("HMMA.1688.F16", [[0] * 8], [[0] * 8], [0])
    with pytest.raises(ValueError, match="K=4"):
        config().pack(TF32[1], [[0] * 8], [[0] * 8], [0])


# ---- the driver ----------------------------------------------------------------------------------

def test_dot_add_in_batches_and_bounded_frames_matches_golden(monkeypatch):
    monkeypatch.setattr(driver, "FRAME_PAYLOAD_BYTES", 250)       # 2 entries a LOAD frame, several READs
    cfg = config(lanes=3)
    ins = cfg.instruction_objects[0]
    a, b, c, _, _ = operands(ins, 25, seed=4)
    fake = FakeBoard(cfg)
    with BoardLink(fake) as board:
        got = board.dot_add(ins.name, a.reshape(5, 5, 4), b.reshape(5, 5, 4), c.reshape(5, 5))
        want = golden.dot_add(ins, a, b, c).reshape(5, 5)
        assert got.shape == (5, 5) and got.dtype == want.dtype and np.array_equal(got, want)
        assert board.retries == 0 and board.cycles == 1 + cfg.latency     # the last batch: 1 of 12 rows
    cmds = [Command(c).name for c, _ in fake.log]
    assert cmds.count("RUN") == 3                                 # 12 + 12 + 1 rows
    assert cmds.count("LOAD") == 2 + 2 + 1
    assert max(n for _, n in fake.log) <= 2 + 2 * cfg.in_bytes


def test_a_wrong_result_on_the_board_is_not_hidden():
    """Planted fault: the board's first result of each run has its last bit flipped."""
    cfg = config()
    ins = cfg.instruction_objects[0]
    a, b, c, _, _ = operands(ins, 6, seed=5)
    got = BoardLink(FakeBoard(cfg, flip_result=True)).dot_add(ins, a, b, c)
    want = golden.dot_add(ins, a, b, c)
    assert list(np.nonzero(got != want)[0]) == [0, 4]             # one per batch of depth 4


@pytest.mark.parametrize("fault", ["bad_crc", "damage_response"])
def test_damage_either_way_is_retried(fault):
    cfg = config()
    ins = cfg.instruction_objects[0]
    a, b, c, _, _ = operands(ins, 4, seed=6)
    fake = FakeBoard(cfg, faults=[None, fault])                   # IDENTIFY fine, then LOAD hit
    board = BoardLink(fake)
    assert np.array_equal(board.dot_add(ins, a, b, c), golden.dot_add(ins, a, b, c))
    assert board.retries == 1 and [Command(c).name for c, _ in fake.log][:3] == ["IDENTIFY", "LOAD", "LOAD"]


def test_persistent_damage_gives_up_with_the_status():
    cfg = config()
    board = BoardLink(FakeBoard(cfg, faults=[None] + ["bad_crc"] * 4))
    with pytest.raises(BoardError, match="answered BAD_CRC to COUNTERS after 3 retries: the request arrived damaged"):
        board.counters()


def test_silence_is_a_link_timeout_naming_what_and_where():
    board = BoardLink(FakeBoard(config(), faults=[None, "silence"]), timeout=0.2)
    with pytest.raises(LinkTimeout,
                       match=r"^no response to COUNTERS from fake://board within 0.2 s \(received nothing\)"):
        board.counters()


def test_another_configuration_is_refused():
    cfg = config()
    with pytest.raises(BoardMismatch, match=r"runs hopper HMMA.1684.F32.TF32 \(lanes=1, depth 4\) .* expected "
                                            r"hopper HMMA.1684.F32.TF32 \(lanes=2, depth 4\)"):
        BoardLink(FakeBoard(cfg), expect=config(lanes=2))
    blob = bytearray(cfg.identify_blob)
    blob[8] ^= 1                                                  # built from other golden/hw sources
    with pytest.raises(BoardMismatch, match="this checkout's golden and hw give that configuration config hash"):
        BoardLink(FakeBoard(cfg, blob=bytes(blob)))
    with pytest.raises(BoardError, match="not an identify blob"):
        BoardLink(FakeBoard(cfg, blob=b"hello"))
    assert BoardLink(FakeBoard(cfg), expect=cfg).config == cfg


def test_a_missing_port_lists_the_available_ones():
    with pytest.raises(BoardError, match=r"^cannot open /dev/ttyNOSUCHPORT0: .*; available serial ports: "):
        BoardLink("/dev/ttyNOSUCHPORT0")


def test_bad_arguments_are_one_line_errors():
    board = BoardLink(FakeBoard(config()))
    with pytest.raises(ValueError, match="HMMA.1688.F16 is not on this board"):
        board.dot_add("HMMA.1688.F16", [[0] * 8], [[0] * 8], [0])
    with pytest.raises(ValueError, match="timeout must be positive"):
        BoardLink(FakeBoard(config()), timeout=0)


class SlowLink(FakeBoard):
    """A fake board whose answers trickle in, as the simulated board's do (its UART is slower
    than its baud rate says)."""

    def read(self, n):
        time.sleep(0.002)
        return super().read(min(n, 16))


def test_the_driver_measures_how_slow_the_link_is():
    """The wait for the answer to a long LOAD scales with the link's measured slowdown, so a simulated
    board gets time for its slow UART and a real one is not waited on needlessly."""
    cfg = config()
    assert 1.0 <= BoardLink(FakeBoard(cfg)).slowdown < 3             # instant: never below the baud rate
    slow = BoardLink(SlowLink(cfg))
    line_s = (len(encode_request(Command.IDENTIFY)) + FRAME_OVERHEAD + len(cfg.identify_blob)) * 10 / slow.baud
    reads = -(-(FRAME_OVERHEAD + len(cfg.identify_blob)) // 16)
    assert slow.slowdown >= reads * 0.002 / line_s > 2
