"""The file protocol between the co-simulation driver (``cosim/``) and the testbench (``tb/``).

Both sides import this module, so every file name, JSON field and plusarg is written down once.
The testbench runs inside the simulator's Python: this module imports nothing heavy (numpy only
inside the two functions that pack payload words, which the testbench never calls).

The driver writes, into the run directory (the ``COSIM_RUN_DIR`` environment variable):

``job.json``        before the simulator starts: :class:`Job`
``in_<i>.bin``      batch i's input payloads, raw little-endian 32-bit words (:func:`to_words32`)
``in_<i>.json``     written after ``in_<i>.bin``: batch i is ready, :class:`BatchControl`
``end.json``        :class:`End`: no batch after ``batches - 1``
``abort``           stop now

The testbench writes:

``out_<i>.bin``     batch i's output payloads in arrival order (:func:`from_words32` reads them)
``out_<i>.json``    written after ``out_<i>.bin``: :class:`BatchStats`
``final.json``      the run ended cleanly: :class:`Final`

The harness (``tb/cosim_harness.sv``) loads each batch's inputs from the file named by the
``+COSIM_IN`` plusarg and saves its outputs to the ``+COSIM_OUT`` file (:func:`plusargs`); the
testbench moves ``in_<i>.bin`` there before a batch and ``out_<i>.bin`` away after it.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

RUN_DIR_ENV = "COSIM_RUN_DIR"
TEST_MODULE = "tb.cosim_tb"
JOB = "job.json"
END = "end.json"
FINAL = "final.json"
ABORT = "abort"
CURRENT_IN = "cur_in.bin"          # the +COSIM_IN file: the batch being simulated
CURRENT_OUT = "cur_out.bin"        # the +COSIM_OUT file
PLUSARG_IN = "COSIM_IN"            # tb/cosim_harness.sv: $value$plusargs("COSIM_IN=%s", ...)
PLUSARG_OUT = "COSIM_OUT"


def in_payloads(i: int) -> str:
    return f"in_{i}.bin"


def in_control(i: int) -> str:
    return f"in_{i}.json"


def out_payloads(i: int) -> str:
    return f"out_{i}.bin"


def out_stats(i: int) -> str:
    return f"out_{i}.json"


def plusargs(run_dir: Path) -> list[str]:
    """The simulator's plusargs: where the harness reads and writes the current batch's payloads."""
    return [f"+{PLUSARG_IN}={Path(run_dir) / CURRENT_IN}", f"+{PLUSARG_OUT}={Path(run_dir) / CURRENT_OUT}"]


# ---- the JSON records ----------------------------------------------------------------------------------

class _Record:
    """A dataclass written as, and read from, one JSON object with its field names."""

    def write(self, path: Path) -> None:
        write_json(path, asdict(self))

    @classmethod
    def read(cls, path: Path):
        obj = json.loads(Path(path).read_text())
        return cls(**{f.name: obj[f.name] for f in fields(cls) if f.name in obj})


@dataclass
class Job(_Record):
    """The whole run: handshake watchdog and drain (cycles), the clock, how long to wait for a batch."""

    watchdog: int
    drain_cycles: int
    clock_impl: str = "gpi"
    give_up_s: float = 600.0


@dataclass
class BatchControl(_Record):
    """One batch: ``beats`` payloads, the stall generator's seed and stall probabilities (x 65536)."""

    beats: int
    seed: int
    stall_in: int
    stall_out: int


# the harness's counters of a batch, read from its ports of the same names
STAT_PORTS = ("n_in", "n_out", "extra", "cycles", "first_in", "last_in", "first_out", "last_out",
              "timeout", "load_error")


@dataclass
class BatchStats(_Record):
    """The harness's counters after a batch (:data:`STAT_PORTS`) and the batch's wall-clock seconds."""

    n_in: int
    n_out: int
    extra: int
    cycles: int
    first_in: int
    last_in: int
    first_out: int
    last_out: int
    timeout: int
    load_error: int
    wall: float


@dataclass
class End(_Record):
    batches: int


@dataclass
class Final(_Record):
    """The run ended cleanly after ``batches`` batches; ``extra`` outputs came that no input asked for."""

    batches: int
    extra: int


def write_json(path: Path, obj) -> None:
    """Write atomically: the other side polls for the file and must never read half of it."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj))
    os.replace(tmp, path)


def stall16(p: float) -> int:
    """A stall probability as the harness takes it: ``p * 65536``, at most 65535."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"stall probability must be in [0, 1), got {p}")
    return min(int(round(p * 65536)), 65535)


# ---- payload files (tb/cosim_dpi.cpp) -----------------------------------------------------------------

def words32(width: int) -> int:
    """32-bit words per payload of ``width`` bits in the payload files."""
    return (width + 31) // 32


def to_words32(words, width: int) -> bytes:
    """Rows of 64-bit words as the harness's DPI loader reads them: ``ceil(width / 32)`` little-endian
    32-bit words each."""
    import numpy as np
    words = np.ascontiguousarray(words, np.uint64)
    rows = words.shape[0]
    w32 = words.astype("<u8", copy=False).view("<u4").reshape(rows, -1)
    return np.ascontiguousarray(w32[:, :words32(width)]).tobytes()


def from_words32(data: bytes, width: int, rows: int | None = None):
    """Rows of 64-bit words from the harness's output file (the inverse of :func:`to_words32`)."""
    import numpy as np
    nw32 = words32(width)
    w32 = np.frombuffer(data, "<u4")
    if w32.size % nw32 or (rows is not None and w32.size != rows * nw32):
        raise ValueError(f"output file holds {w32.size} 32-bit words; expected "
                         f"{'a multiple of ' if rows is None else f'{rows} x '}{nw32}")
    w32 = w32.reshape(-1, nw32)
    if nw32 % 2:
        w32 = np.concatenate([w32, np.zeros((w32.shape[0], 1), "<u4")], axis=1)
    return np.ascontiguousarray(w32).view("<u8").astype(np.uint64)
