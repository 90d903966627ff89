"""The source files a description names: a plain list, a ``.f`` file list or a FuseSoC ``.core``.

:func:`resolve` returns a :class:`SourceSet` (files in compile order, include folders, defines,
parameters from a core) with every path checked to exist; anything wrong is one
:class:`~cosim.dut.description.DescriptionError` line naming the file (and line) and what is valid.

``.f`` files (the syntax simulators share): one token after another, ``//`` and ``#`` comments,
``+incdir+DIR[+DIR...]``, ``+define+NAME[=VALUE][+...]``, ``-f FILE`` / ``-F FILE`` (nested, relative
to the list that names it), ``$VAR`` / ``${VAR}`` from the environment; paths relative to the list's folder.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from .description import Description, DescriptionError

HDL_SUFFIXES = (".v", ".sv", ".vh", ".svh", ".vlt")
CORE_HDL_TYPES = ("systemVerilogSource", "verilogSource", "verilogSource-2001", "verilogSource-2005",
                  "systemVerilogSource-2005", "systemVerilogSource-2009", "systemVerilogSource-2012",
                  "systemVerilogSource-2017", "vlt")
MAX_DEPTH = 16


@dataclass
class SourceSet:
    files: list = field(default_factory=list)         # compile order
    include_dirs: list = field(default_factory=list)
    defines: dict = field(default_factory=dict)
    parameters: dict = field(default_factory=dict)    # defaults a .core gives the top (the description's win)

    def add_include(self, d: Path) -> None:
        if d not in self.include_dirs:
            self.include_dirs.append(d)


def resolve(desc: Description) -> SourceSet:
    """Everything the description's sources say, paths checked (see the module docstring)."""
    if desc.filelist is not None:
        s = SourceSet()
        read_filelist(desc.filelist, s, where=f"{desc.path}: [dut] filelist")
    elif desc.core is not None:
        s = read_core(desc.core, desc.top, where=f"{desc.path}: [dut] core")
    else:
        s = SourceSet()
        for f in desc.sources:
            _exists(f, f"{desc.path}: [dut] sources", "file")
            s.files.append(f)
        for d in desc.include_dirs:
            _exists(d, f"{desc.path}: [dut] include_dirs", "folder")
            s.add_include(d)
    s.defines.update(desc.defines)
    return s


def _exists(p: Path, where: str, kind: str) -> None:
    ok = p.is_dir() if kind == "folder" else p.is_file()
    if not ok:
        raise DescriptionError(f"{where}: {kind} {p} does not exist" if not p.exists()
                               else f"{where}: {p} is not a {kind}")


_VAR = re.compile(r"\$(\w+)|\$\{(\w+)\}")


def _expand(token: str, where: str) -> str:
    def sub(m):
        name = m.group(1) or m.group(2)
        if name not in os.environ:
            raise DescriptionError(f"{where}: ${name} is not set in the environment")
        return os.environ[name]
    return _VAR.sub(sub, token)


def _tokens(path: Path):
    """``(line number, token)`` of a .f file, comments removed."""
    for no, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        line = re.split(r"//|(?:^|\s)#", line, maxsplit=1)[0]
        try:
            for tok in shlex.split(line, posix=True):
                yield no, tok
        except ValueError as e:
            raise DescriptionError(f"{path}:{no}: {e}") from None


def read_filelist(path: Path, s: SourceSet, where: str, depth: int = 0) -> None:
    """Add what the .f file ``path`` lists to ``s`` (nested lists recursively)."""
    _exists(path, where, "file")
    if depth > MAX_DEPTH:
        raise DescriptionError(f"{where}: -f nesting deeper than {MAX_DEPTH} (a list that includes itself?)")
    base = path.parent
    toks = list(_tokens(path))
    i = 0
    while i < len(toks):
        no, tok = toks[i]
        at = f"{path}:{no}"
        tok = _expand(tok, at)
        if tok in ("-f", "-F"):
            if i + 1 >= len(toks):
                raise DescriptionError(f"{at}: {tok} needs a file list after it")
            i += 1
            read_filelist(base / _expand(toks[i][1], at), s, f"{at}: {tok}", depth + 1)
        elif tok.startswith("+incdir+"):
            for d in filter(None, tok[len("+incdir+"):].split("+")):
                _exists(base / d, f"{at}: +incdir+", "folder")
                s.add_include((base / d).resolve())
        elif tok.startswith("+define+"):
            for item in filter(None, tok[len("+define+"):].split("+")):
                k, eq, v = item.partition("=")
                s.defines[k] = v if eq else True
        elif tok.startswith(("+", "-")):
            raise DescriptionError(f"{at}: {tok!r} is not supported in a file list; valid: source files, "
                                   "+incdir+DIR, +define+NAME[=VALUE], -f FILE, -F FILE, // comments")
        else:
            _exists(base / tok, at, "file")
            s.files.append((base / tok).resolve())
        i += 1


def read_core(path: Path, top: str, where: str) -> SourceSet:
    """The files of a FuseSoC CAPI2 core: the filesets of its ``default`` target (all filesets when it
    has none), include files' folders, its ``vlogdefine`` and ``vlogparam`` parameter defaults."""
    _exists(path, where, "file")
    import yaml
    try:
        core = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise DescriptionError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(core, dict) or "filesets" not in core:
        raise DescriptionError(f"{path}: not a FuseSoC CAPI2 core (no filesets); a core starts with "
                               "'CAPI=2:' and lists filesets and targets")
    filesets, targets = core.get("filesets") or {}, core.get("targets") or {}
    default = targets.get("default") or {}
    toplevel = default.get("toplevel")
    if isinstance(toplevel, list):
        toplevel = toplevel[0] if toplevel else None
    if toplevel and toplevel != top:
        raise DescriptionError(f"{path}: targets.default.toplevel is {toplevel!r} but the description's "
                               f"[dut] top is {top!r}")
    s = SourceSet()
    for name in default.get("filesets") or list(filesets):
        if name not in filesets:
            raise DescriptionError(f"{path}: targets.default names fileset {name!r}, which filesets lacks")
        _add_fileset(path, name, filesets[name] or {}, s)
    for pname in default.get("parameters") or []:
        p = (core.get("parameters") or {}).get(pname, {})
        if not isinstance(p, dict) or "default" not in p:
            continue
        if p.get("paramtype") == "vlogdefine":
            s.defines[pname] = p["default"]
        elif p.get("paramtype") == "vlogparam":
            s.parameters[pname] = p["default"]
    return s


def _add_fileset(path: Path, name: str, fs: dict, s: SourceSet) -> None:
    if fs.get("depend"):
        raise DescriptionError(f"{path}: fileset {name} depends on other cores ({', '.join(map(str, fs['depend']))}); "
                               "the DUT path reads one core: list their files in it, or use a filelist")
    kind = fs.get("file_type", "systemVerilogSource")
    for entry in (fs.get("files") or []) + [{f: {"is_include_file": True}} if isinstance(f, str) else f
                                           for f in fs.get("include_files") or []]:
        rel, opts = (entry, {}) if isinstance(entry, str) else next(iter(entry.items()))
        opts = opts or {}
        f = path.parent / rel
        _exists(f, f"{path}: fileset {name}", "file")
        if opts.get("is_include_file"):
            s.add_include((path.parent / (opts.get("include_path") or Path(rel).parent)).resolve())
        elif opts.get("file_type", kind) in CORE_HDL_TYPES:
            s.files.append(f.resolve())
