// tile_engine.sv: a 4x4x8 tf32 tile MMA, D = C + A @ B (f32), on four fused dot-add lanes.
// SPDX-License-Identifier: MIT
//
// Bit for bit ampere HMMA.1684.F32.TF32 chained twice along k, as a GPU issues a k = 8 tile:
//   D[i][j] = dot4(A[i][4:8], B[4:8][j], dot4(A[i][0:4], B[0:4][j], C[i][j]))
// where dot4 is the K = 4 fused dot-add (tf32 x tf32 + f32 -> f32, FDA, F=24, e_zero=-132, RZ)
// of examples/dut/common/rtl/fda_core.sv.
//
// Input: eight beats per instruction (valid/ready).  Beat t carries column t of A
// (lane l = A[l][t]), row t of B (lane l = B[t][l]) and, for t < 4, row t of C (lane l =
// C[t][l]); lane l sits in bits [32*l +: 32].  in_last marks beat 7.  Output: four beats, beat
// r = row r of D (lane l = D[r][l]), out_last on beat 3; instructions are answered in order.
//
// Design: double-buffered (ping-pong).  One buffer holds a whole instruction (A, B, C); the
// next instruction loads into the other buffer while this one computes.  Computing is eight
// issue steps p = 0..7, row i = p % 4, k-slice s = p / 4: lane j gets A[i][4s +: 4],
// B[4s +: 4][j] and, for s = 0, C[i][j].  Slice 1 of row i issues exactly LATENCY (4) enabled
// cycles after slice 0 of row i, so the slice-0 result is on the lane's d register just then
// and feeds straight back in as the accumulator: no result store, the four lanes busy every
// step.  A buffer is freed after its step 7 (the operands are in the pipeline then).
//
// Back-pressure stops everything at once, as dotp_vr does: while a D row waits at the output
// (out_valid && !out_ready) the lanes' enable is low and the step counter holds, so the
// slice-0 to slice-1 distance, counted in enabled cycles, never changes.  Input gaps are
// harmless because computing only starts once all eight beats are in.  No stalls: one
// instruction per 8 cycles, the first D row 16 cycles after the first input beat
// (8 beats, 4 slice-0 cycles, 4 pipeline cycles).  Reset is synchronous, active low.
//
// Planted faults (each off unless its define is given):
//   PLANT_SWAP_LANES:  lanes 1 and 2 of d_data are swapped (lane 1 carries D[r][2]).
//   PLANT_TRANSPOSE_B: each k-slice's 4x4 block of B is used transposed (lane j's product k
//                      in slice s takes B[4s+j][k] instead of B[4s+k][j]).
//   PLANT_NO_CARRY:    the accumulator is not carried from slice 0 to slice 1: slice 1 starts
//                      from C[i][j] again, so D = C + A[:,4:8] @ B[4:8,:].
module tile_engine (
  input  logic         clk,
  input  logic         rst_n,      // active low, synchronous
  input  logic         in_valid,
  output logic         in_ready,
  input  logic         in_last,    // high on the last input beat of an instruction (beat 7)
  input  logic [127:0] a_data,     // 4 lanes x 32 bits, lane l in [32*l +: 32]
  input  logic [127:0] b_data,
  input  logic [127:0] c_data,
  output logic         out_valid,
  input  logic         out_ready,
  output logic         out_last,   // high on the last output beat of an instruction (beat 3)
  output logic [127:0] d_data
);
  import fda_pkg::*;

  localparam int unsigned LANES = 4;      // = rows of A and C, columns of B, C and D
  localparam int unsigned KT    = 8;      // k of the tile: input beats per instruction
  localparam int unsigned KS    = 4;      // k of one dot-add (HMMA.1684): a k-slice

  // ---------------------------------------------------------------- operand buffers
  // [buffer][row][column], as the matrices are written.  Full 32-bit words: the TF32 decoder
  // reads a/b bits 31:13 only, and c needs all 32.
  logic [31:0] a_buf [2][LANES][KT];
  logic [31:0] b_buf [2][KT][LANES];
  logic [31:0] c_buf [2][LANES][LANES];
  logic [1:0]  full;                      // buffer holds a complete instruction not yet issued

  // ---------------------------------------------------------------- loading
  logic       wsel;                       // buffer being loaded
  logic [2:0] beat;                       // next input beat of that buffer
  logic       take;
  logic       close;

  assign in_ready = !full[wsel];
  assign take     = in_valid && in_ready;
  // in_last ends an instruction; an eighth beat without it ends one too, so a stream that
  // breaks the rule still gets one answer per eight beats instead of overwriting beat 0.
  assign close    = in_last || (beat == 3'(KT - 1));

  always_ff @(posedge clk) begin
    if (take) begin
      for (int l = 0; l < LANES; l++) begin
        a_buf[wsel][l][beat] <= a_data[32*l +: 32];
        b_buf[wsel][beat][l] <= b_data[32*l +: 32];
        if (!beat[2]) c_buf[wsel][beat[1:0]][l] <= c_data[32*l +: 32];   // rows 0..3 only
      end
    end
  end

  // ---------------------------------------------------------------- issuing
  logic       rsel;                       // buffer being computed
  logic [2:0] step;                       // {slice, row} of the next issue
  logic       advance;                    // the lanes' enable: low only while a D row waits
  logic       issue;
  logic       slice;
  logic [1:0] row;

  assign advance = !out_valid || out_ready;
  assign issue   = advance && full[rsel];
  assign slice   = step[2];
  assign row     = step[1:0];

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      full <= '0;
      wsel <= 1'b0;
      beat <= '0;
      rsel <= 1'b0;
      step <= '0;
    end else begin
      // The loader only sets a bit that is clear and the issuer only clears one that is set,
      // so the two never touch the same buffer in one cycle.
      full <= (full | ((take && close) ? (2'b01 << wsel) : 2'b00))
                    & ~(( issue && step == 3'(KT - 1)) ? (2'b01 << rsel) : 2'b00);
      if (take) begin
        beat <= close ? '0 : beat + 3'd1;
        if (close) wsel <= !wsel;
      end
      if (issue) begin
        step <= step + 3'd1;              // wraps to 0 after step 7
        if (step == 3'(KT - 1)) rsel <= !rsel;
      end
    end
  end

  // A[i][4s + k] is the same for every lane.
  logic [31:0] a_op [KS];
  always_comb begin
    for (int k = 0; k < KS; k++) a_op[k] = a_buf[rsel][row][{slice, 2'(k)}];
  end

  // ---------------------------------------------------------------- lanes
  logic [31:0] lane_d     [LANES];
  logic        lane_valid [LANES];

  for (genvar j = 0; j < LANES; j++) begin : g_lane
    logic [31:0] b_op [KS];
    logic [31:0] c_op;

    always_comb begin
      for (int k = 0; k < KS; k++) begin
`ifdef PLANT_TRANSPOSE_B
        b_op[k] = b_buf[rsel][{slice, 2'(j)}][k];
`else
        b_op[k] = b_buf[rsel][{slice, 2'(k)}][j];
`endif
      end
`ifdef PLANT_NO_CARRY
      c_op = c_buf[rsel][row][j];
`else
      // Slice 1 of row i issues LATENCY enabled cycles after slice 0 of row i: lane_d holds
      // D0[i][j] now.
      c_op = slice ? lane_d[j] : c_buf[rsel][row][j];
`endif
    end

    // Only slice-1 issues are marked valid: those results are the D rows.
    fda_core #(.K(KS), .EB(32)) u_core (
      .clk       (clk),
      .rst_n     (rst_n),
      .en        (advance),
      .in_valid  (full[rsel] && slice),
      .fmt       (FMT_TF32),
      .rm        (RM_RZ),
      .a         (a_op),
      .b         (b_op),
      .c         (c_op),
      .out_valid (lane_valid[j]),
      .d         (lane_d[j])
    );
  end

  // ---------------------------------------------------------------- output
  // The four lanes advance in lockstep, so lane 0's valid stands for all of them.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [LANES-1:1] spare_valid;
  /* verilator lint_on UNUSEDSIGNAL */
  always_comb begin
    for (int j = 1; j < LANES; j++) spare_valid[j] = lane_valid[j];
  end
  assign out_valid = lane_valid[0];

  // D rows leave in order, four per instruction: a count of rows taken says which is last.
  logic [1:0] out_row;
  always_ff @(posedge clk) begin
    if (!rst_n)                      out_row <= '0;
    else if (out_valid && out_ready) out_row <= out_row + 2'd1;
  end
  assign out_last = (out_row == 2'd3);

`ifdef PLANT_SWAP_LANES
  assign d_data = {lane_d[3], lane_d[1], lane_d[2], lane_d[0]};
`else
  assign d_data = {lane_d[3], lane_d[2], lane_d[1], lane_d[0]};
`endif

endmodule
