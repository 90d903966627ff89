"""A shape kernel's first compile in a child process, so that this process runs the cached code.

The kernels of one shape (:mod:`fda_float`, :mod:`fda_fp8`, :mod:`fdrda_float`, :mod:`amd_fp8`) call a
row function with their shape's constants (``f16_rows(..., 16, 8)``); numba compiles that callee on
its own too, and the kernel's machine code calls it by name. In the process that compiled them, that
name binds to the callee's own copy, compiled without the constants (the loop across rows scalar: 8
against 40-60 M dot-adds/s on Hopper's f16 shape); in a process that loads the kernel from numba's
cache, it binds to the copy inside the kernel's code, which LLVM specialised to the constants. The
object code is the same bytes either way; a kernel reloaded from the cache in the compiling process
stays slow. So a shape kernel missing from the cache is compiled by ``python -m
golden.kernels.apart`` in a child process, and this process loads it from the cache as any later one
does. Where that cannot be done (no cache directory, a failed child) the kernel compiles here as
before: the same bits.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

_DONE: set = set()


def ensure(kernel, args) -> None:
    """Before ``kernel``'s first call in this process: where numba's cache lacks its compile for the
    types of ``args``, compile it in a child process; then load it from the cache."""
    if id(kernel) in _DONE:
        return
    _DONE.add(id(kernel))
    cache = getattr(kernel, "_cache", None)
    if cache is None or not hasattr(cache, "load_overload"):     # NUMBA_DISABLE_JIT, or no cache
        return
    sig = tuple(kernel.typeof_pyval(a) for a in args)
    if sig in kernel.overloads:
        return
    if cache.load_overload(sig, kernel.targetctx) is None:
        compile_in_child(kernel, sig)
    cres = cache.load_overload(sig, kernel.targetctx)
    if cres is not None:
        kernel.add_overload(cres)


def compile_in_child(kernel, sig) -> bool:
    """``kernel.compile(sig)`` in a child Python (numba's cache keeps it); whether it succeeded."""
    import golden
    root = os.path.dirname(os.path.dirname(os.path.abspath(golden.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    job = pickle.dumps((kernel.py_func.__module__, kernel.py_func.__name__, sig))
    try:
        done = subprocess.run([sys.executable, "-m", "golden.kernels.apart"], input=job, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    except OSError:
        return False
    return done.returncode == 0


def main() -> int:
    """The child: read ``(module, function, signature)`` pickled on stdin and compile it."""
    import importlib
    module, name, sig = pickle.loads(sys.stdin.buffer.read())
    getattr(importlib.import_module(module), name).compile(sig)
    return 0


if __name__ == "__main__":
    sys.exit(main())
