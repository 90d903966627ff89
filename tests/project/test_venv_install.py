"""tools/venv_install.py: uv is given the package sources pip would use, and pip takes over when uv
cannot install (the Makefile's first step on a fresh clone)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tool_scripts import load_tool

REPO = Path(__file__).resolve().parents[2]


def load():
    return load_tool("venv_install")


PIP_CONFIG_LIST = """\
:env:.cert='/etc/ssl/certs/ca.crt'
:env:.find-links='/opt/wheels'
global.cert='/etc/ssl/certs/other.crt'
global.constraint='/etc/pip/constraints.txt'
global.extra-index-url='file:///opt/pypi/simple file:///opt/more/simple'
global.find-links='/ignored/by/the/environment'
install.index-url='https://mirror.example/simple'
"""


def test_pips_sources_become_uvs_flags_with_pips_precedence(monkeypatch):
    vi = load()
    monkeypatch.setattr(vi.subprocess, "run",
                        lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout=PIP_CONFIG_LIST))
    args, env = vi.uv_source_args(vi.pip_config(sys.executable))
    pairs = list(zip(args[::2], args[1::2]))
    assert ("--index-strategy", "unsafe-best-match") in pairs
    assert ("--index-url", "https://mirror.example/simple") in pairs
    assert [v for k, v in pairs if k == "--extra-index-url"] == ["file:///opt/pypi/simple", "file:///opt/more/simple"]
    assert [v for k, v in pairs if k == "--find-links"] == ["/opt/wheels"]       # the environment wins
    assert [v for k, v in pairs if k == "--constraint"] == ["/etc/pip/constraints.txt"]
    assert env == {"SSL_CERT_FILE": "/etc/ssl/certs/ca.crt"}


def test_no_index_is_passed_on_and_an_empty_config_adds_nothing():
    vi = load()
    assert vi.uv_source_args({}) == (["--index-strategy", "unsafe-best-match"], {})
    assert "--no-index" in vi.uv_source_args({"no-index": "true"})[0]


def test_pip_installs_everything_when_uv_cannot(monkeypatch, capsys):
    vi = load()
    calls = []
    monkeypatch.setattr(vi, "run", lambda cmd, env=None: calls.append(cmd) or "uv==" not in " ".join(cmd))
    assert vi.main([sys.executable]) == 0
    assert "pip could not install uv==" in capsys.readouterr().err
    installed = [c[c.index("install") + 1:] for c in calls[1:]]
    assert installed == [["--quiet", "--upgrade", "pip"], ["--quiet", "-r", str(vi.REQUIREMENTS)],
                         ["--quiet", "--no-deps", "-e", str(vi.ROOT)]]


def test_a_missing_python_is_one_line_and_status_2():
    r = subprocess.run([sys.executable, str(REPO / "tools" / "venv_install.py"), "/no/such/python"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "VENV_PYTHON" in r.stderr


def test_bytecode_is_compiled_but_for_the_packages_test_suites(tmp_path):
    """One compileall pass over site-packages: a package's modules get their bytecode, its tests/
    folder none, and a file that does not compile under this Python stops nothing."""
    vi = load()
    pkg = tmp_path / "pkg"
    for rel, text in (("__init__.py", ""), ("mod.py", "X = 1\n"), ("tests/test_mod.py", "Y = 2\n"),
                      ("sub/test/__init__.py", ""), ("bad.py", "def f(:\n")):
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    vi.compile_bytecode(sys.executable, str(tmp_path))
    compiled = {p.parent.parent.relative_to(pkg).as_posix() + "/" + p.name.split(".")[0]
                for p in pkg.rglob("*.pyc")}
    assert compiled == {"./__init__", "./mod"}
