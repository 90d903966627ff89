"""The adapter of a tile device: a transaction's payload fed to the design beat by beat, D collected.

Generated into ``cosim_unit`` (the module the harness drives, :mod:`cosim.dut.adapter`) for a
description with a ``[tile]``:

* **in**: the harness hands one transaction (its whole payload, :class:`cosim.dut.tile.TileLayout`);
  the adapter holds it and presents beat 0, 1, ... to the design's input handshake, each operand's
  ports carrying the ``lanes`` elements its layout puts at that beat (zeros on beats that carry
  none of it), ``in_last`` on the last beat.  The next transaction is taken as the last beat moves,
  so back-to-back transactions have no bubble.  Between beats the adapter leaves random gaps: it
  withholds a beat on cycles where the harness's output-ready was low three cycles before (the
  harness's own stall generator, so no gaps in the calibration batch and none with ``STALL=0``).
* **out**: the design's D beats, taken while the harness's output-ready is high (its random stalls
  reach the design's ``out_ready``), are written into a collecting register in D's layout; a complete
  D moves to the result register the harness takes.  With ``out_last`` the adapter checks the design
  marks exactly the last beat: otherwise the result's framing bit is set.

Latency as the harness measures it is :data:`TILE_DELAY` cycles more than the design's own, from its
first input beat to its last output beat (reports take it off).
"""

from __future__ import annotations

from golden.layouts import positions

from .description import Description, Operand, beats_of

TILE_DELAY = 3          # harness -> first beat (1), last beat -> collected (1), collected -> result (1)
GAP_HISTORY = 3         # the input gaps follow the harness's output-ready this many cycles before


def in_beats(desc: Description, block: int | None) -> int:
    """Input beats of one transaction: the last beat any input operand occupies, plus one."""
    return max(op.first_beat + beats_of(desc, op, block) for op in desc.operands.values() if op.name != "d")


def out_beats(desc: Description) -> int:
    return beats_of(desc, desc.operands["d"])


def _placement(desc: Description, op: Operand, layout, block):
    """``[(beat, port, port offset, payload offset, width)]`` of every element of ``op``."""
    rows, cols = desc.tile.shape(op.name, block)
    pos = positions(op.layout, rows, cols, op.fragment_order)
    width = layout.widths[op.name]
    out = []
    for p, (r, c) in enumerate(pos):
        beat, lane = divmod(p, op.elements)
        port, off = op.element_port(lane)
        out.append((op.first_beat + beat, port, off, layout.offset(op.name, int(r), int(c)), width))
    return out


def _counter_bits(n: int) -> int:
    return max(1, (max(n - 1, 1)).bit_length())


def generate_body(desc: Description, ports: dict, layout) -> tuple[list, dict]:
    """The adapter's tile logic (SystemVerilog lines) and ``{design port: expression}`` connections."""
    block = layout.ins.block_size
    n_in, n_out = in_beats(desc, block), out_beats(desc)
    bi, bo = _counter_bits(n_in), _counter_bits(n_out)
    lines = [f"    // a transaction in over {n_in} beats, D out over {n_out} (cosim.dut.adapter_tile)",
             f"    logic [{layout.in_width - 1}:0] txn;",
             "    logic busy = 1'b0;",
             f"    logic [{bi - 1}:0] beat = '0;",
             f"    logic [{GAP_HISTORY - 1}:0] ready_history = '1;",
             f"    wire gap = !ready_history[{GAP_HISTORY - 1}];",
             "    wire hs_in_valid = busy && !gap && !dut_rst;",
             "    wire hs_in_ready;",
             "    wire beat_fire = hs_in_valid && hs_in_ready;",
             f"    wire last_beat = beat == {bi}'d{n_in - 1};",
             "    wire hs_in_last = last_beat;",
             "    assign i__ready = (!busy || (beat_fire && last_beat)) && !dut_rst;",
             "    always_ff @(posedge clk) begin",
             f"        ready_history <= {{ready_history[{GAP_HISTORY - 2}:0], o__ready || !busy}};",
             "        if (rst) begin busy <= 1'b0; beat <= '0; end",
             "        else if (i__valid && i__ready) begin txn <= i__payload; busy <= 1'b1; beat <= '0; end",
             "        else if (beat_fire) begin",
             "            if (last_beat) busy <= 1'b0;",
             "            beat <= beat + 1'b1;",
             "        end",
             "    end"]
    conns: dict = {}
    by_port: dict = {}
    for op in desc.operands.values():
        if op.name == "d":
            continue
        for beat, port, off, poff, w in _placement(desc, op, layout, block):
            by_port.setdefault(port, {}).setdefault(beat, []).append((off, poff, w))
    for port, beats in by_port.items():
        lines.append(f"    logic [{ports[port].width - 1}:0] op_{port};")
        lines.append(f"    always_comb begin op_{port} = '0; case (beat)")
        for beat in sorted(beats):
            body = " ".join(f"op_{port}[{o} +: {w}] = txn[{po} +: {w}];" for o, po, w in beats[beat])
            lines.append(f"        {bi}'d{beat}: begin {body} end")
        lines.append("        default: ;\n    endcase end")
        conns[port] = f"op_{port}"
    lines += _collect(desc, ports, layout, n_out, bo, conns)
    return lines, conns


def _collect(desc: Description, ports: dict, layout, n_out: int, bo: int, conns: dict) -> list:
    """D's beats into the collecting register, a complete D to the result register."""
    d = desc.operands["d"]
    placement = _placement(desc, d, layout, layout.ins.block_size)
    lines = []
    for port in d.port_names():
        lines.append(f"    wire [{ports[port].width - 1}:0] res_{port};")
        conns[port] = f"res_{port}"
    out_w = layout.out_width
    lines += [f"    logic [{out_w - 1}:0] collect = '0, result = '0;",
              f"    logic [{bo - 1}:0] obeat = '0;",
              "    logic collected = 1'b0, held = 1'b0;",
              "    wire hs_out_valid;",
              "    wire hs_out_ready = !collected && o__ready && !dut_rst;",
              "    wire out_fire = hs_out_valid && hs_out_ready;",
              f"    wire out_done = obeat == {bo}'d{n_out - 1};",
              "    wire take = held && o__ready;",
              "    assign o__valid = held && !dut_rst;",
              "    assign o__payload = result;"]
    framing = (f"if (hs_out_last != out_done) collect[{layout.framing_bit}] <= 1'b1;"
               if desc.handshake.out_last else "")
    if desc.handshake.out_last:
        lines.append("    wire hs_out_last;")
    lines += ["    always_ff @(posedge clk) begin",
              "        if (rst) begin obeat <= '0; collected <= 1'b0; held <= 1'b0; end",
              "        else begin",
              "            if (out_fire) begin",
              f"                {framing}",
              "                case (obeat)"]
    by_beat: dict = {}
    for beat, port, off, poff, w in placement:
        by_beat.setdefault(beat, []).append(f"collect[{poff} +: {w}] <= res_{port}[{off} +: {w}];")
    for beat in sorted(by_beat):
        lines.append(f"                    {bo}'d{beat}: begin {' '.join(by_beat[beat])} end")
    lines += ["                    default: ;",
              "                endcase",
              "                obeat <= out_done ? '0 : obeat + 1'b1;",
              "                if (out_done) collected <= 1'b1;",
              "            end",
              "            if (collected && (!held || take)) begin",
              "                result <= collect; held <= 1'b1; collected <= 1'b0;",
              f"                collect[{layout.framing_bit}] <= 1'b0;",
              "            end else if (take) held <= 1'b0;",
              "        end",
              "    end"]
    return lines
