"""Failing vectors of a co-simulation: the report, the replay file, the waveform rerun.

On a mismatch :func:`report_failure` prints golden's trace of the first failing vector (or its
operands, for another reference), saves the failing vectors to an ``.npz``
(:func:`save_failures`, read back by :func:`load_failures`) for ``python -m cosim replay FILE``
(:func:`cosim.run.replay`), and reruns the first of them on an FST-tracing build without stalls, printing
the waveform's path.
"""

from __future__ import annotations

import json
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

import golden
from golden.streams import ArrayStream

from . import build as bld
from . import scoring
from .payload import PayloadLayout
from .session import OPERANDS
from .status import Status
from .units import FixedReference, describe_unit

FAILURES_DIR = bld.BUILD_ROOT / "failures"


def report_failure(res, cfg, provider, reference, component_for_waves, out=None, component=None) -> None:
    """Print what failed in ``res`` (a MISMATCH result), save the failing vectors, rerun them with waves.

    ``component_for_waves()`` makes a fresh unit for the waveform build; ``component``: the unit
    that failed (described in the replay file, :func:`cosim.units.describe_unit`).
    """
    out = out or sys.stdout
    ins, f = res.ins, res.failing
    print(f"\n{ins.arch} {ins.name}: {res.message}", file=out)
    if f is None or not len(f["index"]):
        if f is None:
            print("(no failing vectors were kept)", file=out)
        return
    print_first(ins, f, reference, out)
    res.failures_file = save_failures(res, cfg, provider, component)
    print(f"failing vectors ({len(f['index'])} of {res.mismatches}) saved: {res.failures_file}\n"
          f"  replay: python -m cosim replay {res.failures_file}", file=out)
    if cfg.rerun_with_waves and not cfg.waves:
        rerun_with_waves(res, cfg, lambda: bld.build_unit(component_for_waves(), ins.arch, ins.name, waves=True,
                                                          root=cfg.build_root), out)


def print_first(ins, f: dict, reference, out) -> None:
    """The first failing vector of ``f`` (a Result's ``failing``): golden's trace, or its operands."""
    width = max(ins.formats[3].storage_bits // 4, 1)
    print(f"first failing vector #{int(f['index'][0])}: got 0x{int(f['got'][0]):0{width}x}, "
          f"expected 0x{int(f['expected'][0]):0{width}x}", file=out)
    if reference is golden.dot_add:
        sa = None if f["scale_a"] is None else f["scale_a"][0]
        sb = None if f["scale_b"] is None else f["scale_b"][0]
        print(golden.trace(ins, f["a"][0], f["b"][0], f["c"][0], sa, sb), file=out)
    else:
        print(f"  a={_hex(f['a'][0])}\n  b={_hex(f['b'][0])}\n  c=0x{int(f['c'][0]):x}", file=out)


def rerun_with_waves(res, cfg, waves_build, out, plusargs: tuple = (), layout=None, stream=None,
                     reference=None, score=None) -> None:
    """Rerun the first failing vectors of ``res`` without stalls on ``waves_build()`` (a waveform-tracing
    :class:`cosim.build.Build`), printing the waveform's path.  ``layout``, ``stream(ops)``, ``reference``
    and ``score``: a device whose transfers are not one dot-add per lane (a tile device's), scored
    against ``reference`` by ``score`` (a :class:`cosim.session.Score` of its layout's kind)."""
    ins, f = res.ins, res.failing
    k = min(cfg.rerun_max, len(f["index"]))
    ops = tuple(None if f[x] is None else f[x][:k] for x in OPERANDS)
    print(f"rerunning {k} failing transfer(s) with waveforms (no stalls)...", file=out, flush=True)
    try:
        b = waves_build()
    except bld.BuildError as e:
        print(f"  the waveform build failed: {e}", file=out)
        return
    scoring.note_wave_format(b)
    if layout is None:
        layout, source, ref, score = PayloadLayout(ins, cfg.lanes), ArrayStream(ins, *ops), \
            FixedReference(f["expected"][:k]), None
    else:
        source, ref = stream(ops), reference
    wres = scoring.simulate_and_score(b, layout, source, ref, score=score, n=k, seed=cfg.seed,
                                      batch_vectors=cfg.batch_vectors, keep_run_dir=True, plusargs=plusargs)
    res.waves_file = wres.waves_file
    if wres.status == Status.ERROR:
        print(f"  waveform run failed: {wres.message}", file=out)
    else:
        again = (f"{wres.mismatches} of {k} mismatch again" if score is None else
                 f"{wres.mismatches} result(s) of the {k} mismatch again")
        print(f"  {again}" +
              ("" if wres.mismatches else ": the failure depends on the stall pattern or on earlier "
               "vectors; rerun the whole run with WAVES=1 and the same SEED and N"), file=out)
    print(f"  waves: {wres.waves_file}", file=out)


def _hex(x) -> str:
    return "[" + ", ".join(f"0x{int(v):x}" for v in np.asarray(x).reshape(-1)) + "]"


def save_failures(res, cfg, provider, component=None) -> Path:
    """The failing vectors of ``res`` as an .npz that ``python -m cosim replay`` reads; it names the
    unit that failed (``unit``: a spec string, or None and ``unit_description``) and its build key."""
    return write_failures(res, cfg.failures_dir or FAILURES_DIR, seed=cfg.seed, lanes=cfg.lanes, vectors=cfg.vectors,
                          unit=getattr(provider, "spec", None), unit_description=describe_unit(provider, component),
                          build_key=getattr(res, "build_key", None), stall=cfg.stall)


def write_failures(res, directory, *, seed: int, lanes: int, vectors, **meta) -> Path:
    """``res.failing`` as an .npz in ``directory``, named after the instruction, seed and time, with its
    meta data (the replay format; ``meta``: anything more the writer wants recorded)."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    ins = res.ins
    path = d / f"{ins.arch}_{bld.safe_name(ins.name)}_seed{seed}_{time.strftime('%Y%m%d-%H%M%S')}.npz"
    meta = {"arch": ins.arch, "instr": ins.name, "lanes": lanes, "seed": seed, "mismatches": res.mismatches,
            "vectors": res.vectors, "vectors_kind": vectors if isinstance(vectors, str) else repr(vectors), **meta}
    arrays = {k: v for k, v in res.failing.items() if v is not None}
    np.savez_compressed(path, meta=json.dumps(meta), **arrays)
    return path


class FailureFileError(ValueError):
    """A replay file that cannot be read or is not what :func:`write_failures` writes."""


def load_failures(path) -> tuple[dict, dict]:
    """``(meta, arrays)`` of a saved failure file; :class:`FailureFileError` (one line) for
    anything else: a folder, an empty or damaged file, missing meta data or operands, no vectors,
    operands that are not bit patterns."""
    path = Path(path)
    what = f"replay file {path}"
    if path.is_dir():
        raise FailureFileError(f"{what} is a folder; give one .npz file (saved failures are in {FAILURES_DIR})")
    try:
        with np.load(path, allow_pickle=False) as z:
            files = set(z.files)
            if "meta" not in files:
                raise FailureFileError(f"{what} has no meta data: not a failure file written by cosim")
            meta_text = str(z["meta"])
            arrays = {k: z[k] for k in files if k != "meta"}
    except FileNotFoundError:
        raise FailureFileError(f"{what} does not exist") from None
    except FailureFileError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as e:
        # np.load calls anything that is not .npy/.npz "pickled data"; say what it is not
        why = "empty" if path.stat().st_size == 0 else f"not a readable .npz ({type(e).__name__})"
        raise FailureFileError(f"{what} is {why}: failure files are .npz written by a failing run") from None
    try:
        meta = json.loads(meta_text)
    except ValueError:
        raise FailureFileError(f"{what}: its meta data is not JSON ({meta_text[:40]!r})") from None
    if not isinstance(meta, dict) or not {"arch", "instr"} <= set(meta):
        raise FailureFileError(f"{what}: its meta data names no instruction (arch, instr)")
    missing = [k for k in ("a", "b", "c") if k not in arrays]
    if missing:
        raise FailureFileError(f"{what} lacks the operand array(s) {', '.join(missing)}")
    for k in OPERANDS:
        x = arrays.get(k)
        if x is not None and x.dtype.kind != "u":
            raise FailureFileError(f"{what}: operand {k} holds {x.dtype} values, not bit patterns (unsigned integers)")
    if arrays["c"].ndim not in (1, 3) or len(arrays["c"]) == 0:      # dot-adds: c [n]; tiles: C [n, M, N]
        raise FailureFileError(f"{what} holds no vectors (c has shape {arrays['c'].shape})")
    for k in ("scale_a", "scale_b"):
        arrays.setdefault(k, None)
    return meta, arrays
