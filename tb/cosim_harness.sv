// Co-simulation harness around one dot-add unit (module `cosim_unit`).
//
// Generic: the unit is any Amaranth lib.stream component elaborated with
// ports clk, rst, i__payload/i__valid/i__ready, o__payload/o__valid/o__ready;
// IN_W and OUT_W are its payload widths.  Python does no per-cycle work.
//
// A batch, started by a rising edge of `go`:
//   1. the `n` input payloads of the batch are loaded from the +COSIM_IN file
//      (DPI cosim_load, tb/cosim_dpi.cpp: raw 32-bit words, LSB word first);
//   2. they are fed to the unit in order with valid/ready handshakes: before
//      presenting each new payload the input side stalls with probability
//      stall_in/65536, and the output side drops o__ready with probability
//      stall_out/65536 every cycle (two xorshift32 generators seeded from
//      `seed`); a presented payload is held until accepted (stream rule);
//   3. every accepted output is stored in arrival order (DPI cosim_put);
//   4. when n outputs are in, they are written to the +COSIM_OUT file (same
//      format) and `done` rises.  If no handshake happens for `watchdog`
//      cycles, `done` rises with `timeout` set (and the outputs received so
//      far are written).
// `done` stays high until `go` falls.  Outputs beyond n (during the flush
// and while idle, when o__ready stays high) are counted in `extra`.
//
// Under Icarus Verilog, which has no DPI-C, the build defines COSIM_FILE_IO (cosim/icarus.py): the
// same five routines are then module tasks and functions moving the payloads through Verilog file I/O
// in the same file format (one beat after another, ceil(width/32) little-endian 32-bit words each,
// least significant word first); everything else is the same text for both simulators.
//
// Cycle statistics (cycle numbers count from the start of the batch):
// first_in / last_in: cycles of the first and last input handshakes,
// first_out / last_out: same for outputs, cycles: batch length.  With no
// stalls, first_out - first_in is the unit's latency and
// (last_in - first_in) / (n - 1) its initiation interval.
`timescale 1ns/1ps
`default_nettype none

module cosim_harness #(
    parameter int IN_W  = 32,      // input payload width (all lanes)
    parameter int OUT_W = 32       // output payload width (all lanes)
) (
    input  wire         clk /*verilator public_flat_rw*/,
    input  wire         go /*verilator public_flat_rw*/,
    input  wire  [31:0] n /*verilator public_flat_rw*/,
    input  wire  [31:0] seed /*verilator public_flat_rw*/,
    input  wire  [15:0] stall_in /*verilator public_flat_rw*/,
    input  wire  [15:0] stall_out /*verilator public_flat_rw*/,
    input  wire  [31:0] watchdog /*verilator public_flat_rw*/,
    input  wire         unit_rst /*verilator public_flat_rw*/,  // held high by the testbench to reset the unit
    output logic        done /*verilator public_flat_rd*/,
    output logic        timeout /*verilator public_flat_rd*/,
    output logic        load_error /*verilator public_flat_rd*/,
    output logic [31:0] n_in /*verilator public_flat_rd*/,
    output logic [31:0] n_out /*verilator public_flat_rd*/,
    output logic [31:0] extra /*verilator public_flat_rd*/,
    output logic [63:0] cycles /*verilator public_flat_rd*/,
    output logic [63:0] first_in /*verilator public_flat_rd*/,
    output logic [63:0] last_in /*verilator public_flat_rd*/,
    output logic [63:0] first_out /*verilator public_flat_rd*/,
    output logic [63:0] last_out /*verilator public_flat_rd*/
);
    localparam int IN_WORDS  = (IN_W + 31) / 32;
    localparam int OUT_WORDS = (OUT_W + 31) / 32;

    string in_file, out_file;
    initial begin
        if (!$value$plusargs("COSIM_IN=%s", in_file)) in_file = "cosim_in.bin";
        if (!$value$plusargs("COSIM_OUT=%s", out_file)) out_file = "cosim_out.bin";
    end

    // the unit
    logic              i_valid, i_ready, o_valid, o_ready;
    logic [IN_W-1:0]   i_payload;
    logic [OUT_W-1:0]  o_payload;

    // Nothing inside depends combinationally on a top-level input but clk: Verilator evaluates
    // logic that does in its input-combo region on every clock toggle, which (Amaranth's reset
    // being a mux in front of each register) would be the whole datapath, twice per cycle.
    logic        rst_q;
    logic [31:0] n_q, watchdog_q;
    logic [15:0] stall_in_q, stall_out_q;

    cosim_unit unit (
        .clk        (clk),
        .rst        (rst_q),
        .i__payload (i_payload),
        .i__valid   (i_valid),
        .i__ready   (i_ready),
        .o__payload (o_payload),
        .o__valid   (o_valid),
        .o__ready   (o_ready)
    );

    // the batch's payloads in and out: DPI-C (tb/cosim_dpi.cpp), or file I/O under Icarus
`ifndef COSIM_FILE_IO
    import "DPI-C" function int  cosim_load(input string path, input int beats, input int words);
    import "DPI-C" function void cosim_get(input int idx, output bit [IN_W-1:0] payload);
    import "DPI-C" function void cosim_begin_out(input int beats, input int words);
    import "DPI-C" function void cosim_put(input int idx, input bit [OUT_W-1:0] payload);
    import "DPI-C" function int  cosim_save(input string path, input int beats);
`else
    localparam int IN_BYTES  = 4 * IN_WORDS;
    integer in_fd = 0, out_fd = 0, in_len = 0;
    logic [7:0]              in_buf [0:IN_BYTES-1];
    logic [32*IN_WORDS-1:0]  in_word;
    logic [32*OUT_WORDS-1:0] out_word;

    // opens the input file for the batch: the beats it holds, at most `beats` (-1: it cannot be opened)
    function automatic integer cosim_load(input string path, input integer beats, input integer words);
        integer r;
        if (in_fd != 0) $fclose(in_fd);
        in_fd = $fopen(path, "rb");
        if (in_fd == 0) return -1;
        r = $fseek(in_fd, 0, 2);
        in_len = $ftell(in_fd);
        return (in_len / (4 * words) < beats) ? in_len / (4 * words) : beats;
    endfunction

    // payload idx of the open input file (zeros past its end)
    task automatic cosim_get(input integer idx, output logic [IN_W-1:0] payload);
        integer r, j;
        for (j = 0; j < IN_BYTES; j = j + 1) in_buf[j] = 8'h00;
        if (in_fd != 0 && idx >= 0 && (idx + 1) * IN_BYTES <= in_len) begin
            r = $fseek(in_fd, idx * IN_BYTES, 0);
            r = $fread(in_buf, in_fd, 0, IN_BYTES);
        end
        for (j = 0; j < IN_BYTES; j = j + 1) in_word[8*j +: 8] = in_buf[j];
        payload = in_word[IN_W-1:0];
    endtask

    task automatic cosim_begin_out(input integer beats, input integer words);
        if (out_fd != 0) $fclose(out_fd);
        out_fd = $fopen(out_file, "wb");
    endtask

    // appends output idx (the first n_q only, as tb/cosim_dpi.cpp keeps)
    task automatic cosim_put(input integer idx, input logic [OUT_W-1:0] payload);
        out_word = '0;
        out_word[OUT_W-1:0] = payload;
        if (idx < n_q && out_fd != 0) $fwrite(out_fd, "%u", out_word);
    endtask

    // closes the batch's files: 0, or -1 when the output file could not be opened
    function automatic integer cosim_save(input string path, input integer beats);
        integer ok;
        ok = (out_fd == 0) ? -1 : 0;
        if (out_fd != 0) begin $fclose(out_fd); out_fd = 0; end
        if (in_fd != 0) begin $fclose(in_fd); in_fd = 0; end
        return ok;
    endfunction
`endif

    // stall generators: xorshift32, never zero
    logic [31:0] r_in, r_out;
    function automatic logic [31:0] xorshift32(input logic [31:0] x);
        logic [31:0] y;
        y = x ^ (x << 13);
        y = y ^ (y >> 17);
        y = y ^ (y << 5);
        return y;
    endfunction
    wire [31:0] r_in_next  = xorshift32(r_in);
    wire [31:0] r_out_next = xorshift32(r_out);
    wire stall_in_now  = r_in_next[31:16]  < stall_in_q;
    wire stall_out_now = r_out_next[31:16] < stall_out_q;

    // batch state: IDLE (waiting for go), RUN (feeding and collecting), FLUSH (write the outputs)
    typedef enum logic [1:0] {IDLE, RUN, FLUSH} state_t;
    state_t      state;
    logic        go_q, stuck;
    logic [31:0] idle;
    logic [31:0] n_in_next;
    wire in_fire  = i_valid && i_ready;
    wire out_fire = o_valid && o_ready;
    wire present  = (!i_valid || i_ready) && (n_in_next < n_q) && !stall_in_now;

    always_comb n_in_next = n_in + {31'd0, in_fire};

    // DPI scratch: results of the DPI calls, used only within the statement sequence that makes them
    int               loaded, saved;
    bit [IN_W-1:0]    next_payload;

    initial begin
        state = IDLE; done = 1'b0; timeout = 1'b0; load_error = 1'b0; go_q = 1'b0; stuck = 1'b0;
        i_valid = 1'b0; o_ready = 1'b1; i_payload = '0;
        n_in = '0; n_out = '0; extra = '0; idle = '0; cycles = '0;
        first_in = '0; last_in = '0; first_out = '0; last_out = '0;
        r_in = 32'h1; r_out = 32'h2;
        rst_q = 1'b1; n_q = '0; watchdog_q = '0; stall_in_q = '0; stall_out_q = '0;
    end

    // Inputs the testbench drives (go, n, seed) can hold random values at the first edge when a build
    // randomises X and initial values (--x-initial unique: the DUT path's X check); nothing starts
    // before the second edge, by when the testbench's first writes are in place.
    logic armed;
    initial armed = 1'b0;
    always_ff @(posedge clk) armed <= 1'b1;

    /* verilator lint_off BLKSEQ */
    always_ff @(posedge clk) begin
        go_q <= go;
        rst_q <= unit_rst;
        case (state)
        IDLE: begin
            o_ready <= 1'b1;                       // drain anything spurious, and count it
            if (out_fire) extra <= extra + 1;
            if (!go) begin done <= 1'b0; timeout <= 1'b0; load_error <= 1'b0; end
            if (armed && go && !go_q && !done && n != 0) begin
                loaded = cosim_load(in_file, n, IN_WORDS);
                cosim_begin_out(n, OUT_WORDS);
                if (loaded != n) begin
                    load_error <= 1'b1;
                    done <= 1'b1;
                end else begin
                    state <= RUN;
                end
                n_q <= n; watchdog_q <= watchdog; stall_in_q <= stall_in; stall_out_q <= stall_out;
                n_in <= '0; n_out <= '0; extra <= '0; idle <= '0; stuck <= 1'b0;
                cycles <= '0; first_in <= '0; last_in <= '0; first_out <= '0; last_out <= '0;
                r_in  <= (seed == 0) ? 32'h9e3779b9 : seed;
                r_out <= ((seed ^ 32'h5bd1e995) == 0) ? 32'h7f4a7c15 : (seed ^ 32'h5bd1e995);
                i_valid <= 1'b0;
                o_ready <= 1'b0;
            end
        end
        RUN: begin
            cycles <= cycles + 1;
            r_in <= r_in_next;
            r_out <= r_out_next;
            // input side: a presented payload is held until accepted
            if (in_fire) begin
                if (n_in == 0) first_in <= cycles;
                last_in <= cycles;
            end
            n_in <= n_in_next;
            if (!i_valid || i_ready) i_valid <= present;
            if (present) begin
                cosim_get(n_in_next, next_payload);
                i_payload <= next_payload;
            end
            // output side
            o_ready <= !stall_out_now;
            if (out_fire) begin
                cosim_put(n_out, o_payload);
                if (n_out == 0) first_out <= cycles;
                last_out <= cycles;
                n_out <= n_out + 1;
            end
            idle <= (in_fire || out_fire) ? 32'd0 : idle + 1;
            if ((out_fire && n_out + 1 == n_q) || idle >= watchdog_q) begin
                stuck <= !(out_fire && n_out + 1 == n_q);
                state <= FLUSH;
                i_valid <= 1'b0;
                o_ready <= 1'b1;
            end
        end
        FLUSH: begin
            o_ready <= 1'b1;
            if (out_fire) extra <= extra + 1;
            saved = cosim_save(out_file, n_out);
            timeout <= stuck;
            load_error <= (saved != 0);
            done <= 1'b1;
            state <= IDLE;
        end
        default: state <= IDLE;
        endcase
    end
    /* verilator lint_on BLKSEQ */
endmodule

`default_nettype wire
