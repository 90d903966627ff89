"""What the host link's parts share: the frame's phase and position, the CRC step, their signatures.

The link is half-duplex: one frame at a time is received, executed and answered, so one phase
register (:class:`Phase`) sequences the three parts, and the byte counters, the CRC register and
the entry pointer serve both directions (they are :class:`FrameCursor`'s).  Each part acts in its
own phases and asks the cursor for its steps through a :class:`CursorControl`.
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import enum, stream, wiring
from amaranth.lib.wiring import In, Out

from ..protocol import COUNTER_NAMES

__all__ = ["Phase", "CorePhase", "phases", "Source", "crc16_step", "times", "CursorControl", "CursorView",
           "FrameCursor", "FrameSignature", "LoadSignature", "AnswerSignature", "PARAM_BYTES"]

PARAM_BYTES = 18            # the longest fixed payload kept (SELFTEST's)


# The phases in the order the single frame FSM of before the split named them first: their codes
# are its state codes, so the hardware is the same bits (a tensor core's board has no CAPTURE).
_PHASES = ("HUNT", "HEADER", "SEND_HEADER", "CHECK_HEADER", "PAYLOAD", "CRC", "LOAD_CHECK", "EXEC", "RUN",
           "CAPTURE", "SEND_PAYLOAD", "SEND_CRC")
#: Where the frame is, on a dot-add unit's board (CAPTURE: the self-test engine's results captured).
Phase = enum.Enum("Phase", [(name, code) for code, name in enumerate(_PHASES)])
#: Where the frame is, on a tensor core's board.
CorePhase = enum.Enum("CorePhase", [(name, code) for code, name in enumerate(n for n in _PHASES if n != "CAPTURE")])


def phases(config):
    """The phase enum of a board: :data:`Phase` with the self-test engine, else :data:`CorePhase`."""
    return CorePhase if config.core else Phase


class Source(enum.Enum, shape=3):
    """What a response's payload bytes come from."""
    SMALL = 0                # LOAD's count, RUN's cycles
    ROM = 1                  # the identify blob
    OUTBUF = 2               # results
    COUNTERS = 3
    SIGS = 4                 # the self-test's signatures, then its trailer


def _crc16_int(crc: int, byte: int) -> int:
    crc ^= byte << 8
    for _ in range(8):
        crc = ((crc << 1) ^ 0x1021 if crc & 0x8000 else crc << 1) & 0xFFFF
    return crc


# The update is linear over GF(2): bit i of the new CRC is the XOR of the (crc, byte) input bits
# whose column has bit i set.  A flat XOR per bit, not eight nested multiplexers.
_CRC_COLUMNS = [_crc16_int(1 << j, 0) for j in range(16)] + [_crc16_int(0, 1 << j) for j in range(8)]


def crc16_step(crc, byte):
    """CRC-16/CCITT-FALSE (:func:`fpga.board.protocol.crc16`) after one more byte: 16 XORs of input bits."""
    bits = Cat(crc, byte)
    return Cat(*[_xor([bits[j] for j, col in enumerate(_CRC_COLUMNS) if col >> i & 1]) for i in range(16)])


def _xor(values):
    total = values[0]
    for v in values[1:]:
        total = total ^ v
    return total


def times(value, k: int):
    """``value * k`` for a constant ``k`` as shifts and adds (no multiplier, no DSP block)."""
    terms = [value << n for n in range(k.bit_length()) if k >> n & 1]
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


def _entry_shapes(config):
    return range(config.depth + 1), range(max(config.in_bytes, config.out_bytes))


class CursorControl(wiring.Signature):
    """What a part asks of the :class:`FrameCursor` in a cycle (members from the part's side).

    ``goto``/``next``: the next phase.  ``count_*``: the header and CRC byte counter; ``p_*``: the
    payload byte counter; ``crc_*``: the CRC register (``crc_step`` takes ``crc_byte``);
    ``entry_*``: the entry pointer and the byte within the entry (``entry_set`` moves to
    ``entry_at``, ``entry_step`` goes one byte on, wrapping at the part's entry size).
    """

    def __init__(self, config):
        ptr, _ = _entry_shapes(config)
        super().__init__({
            "goto": Out(1), "next": Out(phases(config)),
            "count_clear": Out(1), "count_step": Out(1), "p_clear": Out(1), "p_step": Out(1),
            "crc_init": Out(1), "crc_step": Out(1), "crc_byte": Out(8),
            "entry_clear": Out(1), "entry_set": Out(1), "entry_at": Out(ptr), "entry_step": Out(1),
        })


class CursorView(wiring.Signature):
    """The cursor's registers, as the parts see them."""

    def __init__(self, config):
        ptr, ebyte = _entry_shapes(config)
        super().__init__({"phase": Out(phases(config)), "count": Out(2), "p": Out(16), "p_inc": Out(16, init=1),
                          "crc": Out(16), "ptr": Out(ptr), "ebyte": Out(ebyte)})


class FrameSignature(wiring.Signature):
    """A received frame, from :class:`fpga.board.link.receive.Receive` to :class:`fpga.board.link.execute.Execute`.

    ``cmd``, ``length``, ``param`` (the first :data:`PARAM_BYTES` payload bytes), ``bad`` (a status
    the header or LOAD's index decided), ``crc_bad``, ``lost`` (a byte was dropped since the last
    response), ``loaded`` (LOAD's whole entries); the counters' events (``timeouts`` and
    ``bad_header``, a length over the maximum, also end the frame with that error); and back from
    the executor, ``responding`` (a response starts: ``lost`` is cleared).
    """

    def __init__(self):
        super().__init__({
            "cmd": Out(8), "length": Out(16), "param": Out(8 * PARAM_BYTES), "bad": Out(8),
            "crc_bad": Out(1), "lost": Out(1), "loaded": Out(16),
            "skipped_bytes": Out(1), "timeouts": Out(1), "bad_header": Out(1), "rx_overflows": Out(1),
            "framing_errors": Out(1),
            "responding": In(1),
        })


class LoadSignature(wiring.Signature):
    """LOAD's payload bytes into the input buffer: a write port with byte enables."""

    def __init__(self, config):
        super().__init__({"addr": Out(range(config.depth)), "data": Out(config.in_bytes * 8),
                          "en": Out(config.in_bytes)})


class AnswerSignature(wiring.Signature):
    """What a response is made of, from the executor to :class:`fpga.board.link.transmit.Transmit`.

    The response's ``status``, ``length`` and ``source`` (registers, set as it starts); its bytes come from
    ``small``, the ROM and the output buffer (``*_addr`` in, the registered ``*_data`` out), the
    ``counters``, and on a self-test board the signature stream and the engine's counts.
    """

    def __init__(self, config, selftest: bool):
        members = {
            "status": Out(8), "length": Out(16), "source": Out(Source),
            "small": Out(32), "counters": Out(32 * len(COUNTER_NAMES)),
            "rom_addr": In(range(len(config.identify_blob))), "rom_data": Out(8),
            "out_addr": In(range(config.depth)), "out_data": Out(config.out_bits),
        }
        if selftest:
            from ..selftest.engine import SIGNATURE_BITS
            members.update({"sigs": Out(stream.Signature(config.lanes * SIGNATURE_BITS)),
                            "cycles": Out(32), "vectors": Out(32), "engine_busy": Out(1)})
        super().__init__(members)


class FrameCursor(wiring.Component):
    """The phase and the frame's position, stepped by the three parts (``rx``, ``ex``, ``tx``).

    The parts act in disjoint phases, so at most one asks for a given step in a cycle.
    """

    def __init__(self, config):
        self.config = config
        super().__init__({"rx": In(CursorControl(config)), "ex": In(CursorControl(config)),
                          "tx": In(CursorControl(config)), "view": Out(CursorView(config))})

    def elaborate(self, platform):
        m, cfg = Module(), self.config
        ptr, ebyte = _entry_shapes(cfg)
        v = _Registers(phase=Signal(phases(cfg), name="phase"), count=Signal(2, name="count"), p=Signal(16, name="p"),
                       p_inc=Signal(16, init=1, name="p_inc"), crc=Signal(16, name="crc"),
                       ptr=Signal(ptr, name="ptr"), ebyte=Signal(ebyte, name="ebyte"))
        m.d.comb += [getattr(self.view, name).eq(reg) for name, reg in v.__dict__.items()]
        parts = (self.rx, self.ex, self.tx)
        for part in parts:
            with m.If(part.goto):
                m.d.sync += v.phase.eq(part.next)
        with m.If(_any(parts, "count_clear")):
            m.d.sync += v.count.eq(0)
        with m.Elif(_any(parts, "count_step")):
            m.d.sync += v.count.eq(v.count + 1)
        with m.If(_any(parts, "p_clear")):
            m.d.sync += [v.p.eq(0), v.p_inc.eq(1)]
        with m.Elif(_any(parts, "p_step")):
            m.d.sync += [v.p.eq(v.p_inc), v.p_inc.eq(v.p_inc + 1)]
        with m.If(_any(parts, "crc_init")):
            m.d.sync += v.crc.eq(0xFFFF)
        with m.Elif(_any(parts, "crc_step")):
            m.d.sync += v.crc.eq(crc16_step(v.crc, Mux(self.tx.crc_step, self.tx.crc_byte, self.rx.crc_byte)))
        for part, entry_bytes in zip(parts, (cfg.in_bytes, None, cfg.out_bytes)):
            self._entry(m, v, part, entry_bytes)
        return m

    @staticmethod
    def _entry(m, v, part, entry_bytes):
        """The entry pointer and the byte within the entry, as one part asks."""
        with m.If(part.entry_clear):
            m.d.sync += v.ebyte.eq(0)
        with m.If(part.entry_set):
            m.d.sync += v.ptr.eq(part.entry_at)
        if entry_bytes is not None:
            with m.If(part.entry_step):
                with m.If(v.ebyte == entry_bytes - 1):
                    m.d.sync += [v.ebyte.eq(0), v.ptr.eq(v.ptr + 1)]
                with m.Else():
                    m.d.sync += v.ebyte.eq(v.ebyte + 1)


class _Registers:
    def __init__(self, **regs):
        self.__dict__.update(regs)


def _any(parts, name):
    return Cat(*(getattr(part, name) for part in parts)).any()
