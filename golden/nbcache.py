"""numba's on-disk cache for this project's kernels, keyed by every source file they compile from.

numba's ``cache=True`` checks only the file that defines the cached function: a kernel calling a
function of another module (``fused.py`` calling ``fused_int.py`` and ``_common.py``), or reading
a global that numba freezes into the machine code (a table of ``golden.formats``, a constant of
``golden.kernels.spec``), kept its old code after an edit of that other file: a stale golden.

:func:`njit` is numba's ``njit`` for this project: with ``cache=True`` the index of each cached
function is stamped with a hash of its own file *and* of every project file it imports,
transitively (found from the import statements, :func:`closure`), and of numba's version.  Any
edit of any of them makes the index stale, so numba compiles afresh and overwrites it.  The cache
stays where numba keeps it (``$NUMBA_CACHE_DIR``, else ``__pycache__`` beside the source, else the
user's cache directory on a read-only install), and loads as fast (one hash of a dozen files per
process).  Only the dispatchers made here are affected: the user's other numba code keeps numba's
own cache.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os

import numba
from numba.core import caching


def _root(path: str) -> str:
    """The directory the top package of ``path`` is in (where its absolute imports start)."""
    d = os.path.dirname(path)
    while os.path.isfile(os.path.join(d, "__init__.py")):
        d = os.path.dirname(d)
    return d


def _module_file(root: str, parts: list[str]) -> str | None:
    """The file of a dotted module name (``golden.formats``) under ``root``, or None (numpy, numba)."""
    base = os.path.join(root, *parts)
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return path
    return None


@functools.cache
def _imports(path: str) -> frozenset[str]:
    """The files of the package tree ``path`` is in that it imports, anywhere in it (functions' lazy
    imports too); modules outside that tree (numpy, numba) are numba's own business.  Kept per
    process: the closures of a dozen kernel files share most of their files, and parsing each
    again per closure cost about 2 s of every process that imports golden.kernels."""
    with open(path, "rb") as f:
        tree = ast.parse(f.read(), path)
    root = _root(path)
    package = os.path.relpath(path, root).split(os.sep)[:-1]      # golden/kernels/fused.py -> golden, kernels
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name.split(".") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            mod = base + (node.module.split(".") if node.module else [])
            names = ([mod] if node.module else []) + [mod + [a.name] for a in node.names]
        else:
            continue
        found.update(p for p in (_module_file(root, n) for n in names if n) if p is not None)
    return frozenset(found)


@functools.cache
def closure(path: str) -> tuple[str, ...]:
    """``path`` and every file of its package tree it imports, transitively, sorted."""
    seen, todo = set(), [os.path.abspath(path)]
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo.extend(_imports(p) - seen)
    return tuple(sorted(seen))


@functools.cache
def source_key(path: str) -> str:
    """sha256 of numba's version and of the files of :func:`closure` (names and contents)."""
    h = hashlib.sha256(numba.__version__.encode())
    for p in closure(path):
        h.update(os.path.relpath(p, _root(path)).encode() + b"\0")
        with open(p, "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()


class _ClosureStamp:
    """A locator mixin: the source stamp covers the whole import closure, not one file."""

    def get_source_stamp(self):
        return source_key(self._py_file)


class _UserProvided(_ClosureStamp, caching.UserProvidedCacheLocator):
    pass


class _InTree(_ClosureStamp, caching.InTreeCacheLocator):
    pass


class _UserWide(_ClosureStamp, caching.UserWideCacheLocator):
    pass


class _Impl(caching.CompileResultCacheImpl):
    _locator_classes = (_UserProvided, _InTree, _UserWide)    # numba's order, its fallbacks


class ClosureCache(caching.FunctionCache):
    """numba's function cache with the closure-wide source stamp."""
    _impl_class = _Impl


def njit(*args, cache: bool = False, **options):
    """``numba.njit``; with ``cache=True`` the cache is :class:`ClosureCache` (module docstring)."""
    def wrap(func):
        disp = numba.njit(**options)(func)
        if cache and isinstance(disp, numba.core.dispatcher.Dispatcher):   # not so under NUMBA_DISABLE_JIT
            try:
                disp._cache = ClosureCache(disp.py_func)
            except (RuntimeError, OSError):    # no writable place, sources in a zip: compile, never stale
                pass
        return disp
    if args and callable(args[0]):
        return wrap(args[0])
    if args:
        raise TypeError("golden.nbcache.njit takes options only, no signatures")
    return wrap
