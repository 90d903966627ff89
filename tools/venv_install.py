"""Install the pinned dependencies and the checkout into a fresh venv (the Makefile's first step).

uv installs them when it can be had: 22.4 s for the whole venv, its bytecode compiled, against
50.2 s with pip on a fresh clone here (README, "On a fresh clone"; docs/verification.md), most of
what a fresh clone's ``make test`` spent before its first test.  The bytecode is compiled by one
``compileall`` pass over site-packages (:func:`compile_bytecode`) rather than uv's
``--compile-bytecode``, which compiles every file: the packages' own test suites (``tests/``
folders, 2,250 of the venv's 10,414 files, which nothing here imports) are left out, 16-17 s
against 21 s for every file and about 22 s for uv's pass.  uv does not read pip's
configuration, so the package sources pip would use (``pip config list``: index-url,
extra-index-url, find-links, constraint, no-index, cert) are passed to it; the same pins then give
the same packages.  Where uv cannot be installed or fails, pip
installs everything as before, after one line saying why.

Usage: python tools/venv_install.py VENV_PYTHON   (standard library only)
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

UV = "uv==0.13.9"
ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "requirements.txt"
LIST_KEYS = ("extra-index-url", "find-links", "constraint")     # pip splits these on whitespace
SECTIONS = ("global", "install", ":env:")                      # lowest precedence first


def pip_config(python: str) -> dict[str, str]:
    """pip's effective settings for ``pip install``: ``{key: value}``, the environment over the
    install section over the global one (``pip config list`` lines: ``section.key='value'``)."""
    out = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    found: dict[str, dict[str, str]] = {s: {} for s in SECTIONS}
    for line in out.splitlines():
        name, sep, value = line.partition("=")
        section, _, key = name.rpartition(".")
        if sep and section in found:
            found[section][key] = value.strip().strip("'\"")
    merged: dict[str, str] = {}
    for section in SECTIONS:
        merged.update(found[section])
    return merged


def uv_source_args(config: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """uv flags and environment that name the package sources pip's ``config`` names."""
    args = ["--index-strategy", "unsafe-best-match"]           # pip's rule: the best match over all indexes
    if config.get("index-url"):
        args += ["--index-url", config["index-url"]]
    for key in LIST_KEYS:
        for value in config.get(key, "").split():
            args += [f"--{key}", value]
    if config.get("no-index", "").lower() in ("1", "true", "yes", "on"):
        args.append("--no-index")
    env = {"SSL_CERT_FILE": config["cert"]} if config.get("cert") else {}
    return args, env


def run(cmd: list[str], env: dict[str, str] | None = None) -> bool:
    return subprocess.run(cmd, env={**os.environ, **(env or {})}).returncode == 0


SKIP_BYTECODE = r"/tests?/"       # the packages' own test suites: never imported here


def compile_bytecode(python: str, site: str | None = None) -> None:
    """Compile the venv's site-packages to bytecode, every core at once, but :data:`SKIP_BYTECODE`
    (where ``PYTHONDONTWRITEBYTECODE`` is set, every process would otherwise compile each module it
    imports again).  Best effort, as uv's pass is: a file that does not compile under this Python
    (torch ships one written for 3.12) or is left out still imports, compiled in memory when it is."""
    if site is None:                            # the venv's site-packages
        site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True).stdout.strip()
    if site:
        subprocess.run([python, "-m", "compileall", "-q", "-j", "0", "-x", SKIP_BYTECODE, site],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def with_uv(python: str) -> str | None:
    """Install with uv, then compile the bytecode (:func:`compile_bytecode`); None when done, else
    why not."""
    if not run([python, "-m", "pip", "install", "--quiet", UV]):
        return f"pip could not install {UV}"
    uv = str(Path(python).parent / "uv")
    args, env = uv_source_args(pip_config(python))
    base = [uv, "pip", "install", "--quiet", "--python", python, *args]
    if not run([*base, "-r", str(REQUIREMENTS)], env):
        return f"{shlex.join(base[:3])} -r requirements.txt failed"
    if not run([*base, "--no-deps", "-e", str(ROOT)], env):
        return f"{shlex.join(base[:3])} -e . failed"
    compile_bytecode(python)
    return None


def with_pip(python: str) -> bool:
    pip = [python, "-m", "pip", "install", "--quiet"]
    return (run([*pip, "--upgrade", "pip"]) and run([*pip, "-r", str(REQUIREMENTS)])
            and run([*pip, "--no-deps", "-e", str(ROOT)]))


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_file():
        print("usage: python tools/venv_install.py VENV_PYTHON (the venv's python, which must exist)",
              file=sys.stderr)
        return 2
    python = argv[0]
    why = with_uv(python)
    if why is None:
        return 0
    print(f"venv_install: {why}; installing with pip instead", file=sys.stderr)
    return 0 if with_pip(python) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
