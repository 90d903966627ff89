// warp_tile.sv: a test tile device that takes mma.m16n8k16 (f16 -> f32) operands as a warp holds them.
// SPDX-License-Identifier: MIT
//
// Beat t (t = 0..31, a lane id) carries thread t's fragments: A's a0..a7 on a_frag (16 bits each,
// element i in bits [16i +: 16]), B's b0..b3 on b_frag, C's c0..c3 on c_frag (32 bits each), each
// element at the row and column the PTX ISA's fragment formulas give (groupID = t >> 2,
// threadID_in_group = t % 4).  The 128 dot-adds of D then run one at a time through one lane,
// mma_unit (the project's own ampere HMMA.16816.F32 unit exported to Verilog by the test), and D
// leaves as thread t's d0..d3 on beat t.  in_last is ignored (the beats are counted).
//
// PLANT_FRAGMENT_HALVES: A's a2, a3 are taken for a4, a5 and the other way round (rows g + 8 and
// columns + 8 confused), the fragment bug the structure probe must name.
module warp_tile (
  input  logic         clk,
  input  logic         rst,
  input  logic         in_valid,
  output logic         in_ready,
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic         in_last,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic [127:0] a_frag,
  input  logic [63:0]  b_frag,
  input  logic [127:0] c_frag,
  output logic         out_valid,
  input  logic         out_ready,
  output logic [127:0] d_frag
);
  logic [15:0] A [16][16];
  logic [15:0] B [16][8];
  logic [31:0] C [16][8];
  logic [31:0] D [16][8];

  typedef enum logic [1:0] {LOAD, COMPUTE, DRAIN} state_t;
  state_t     state;
  logic [4:0] beat;
  logic [7:0] issued, taken;

  // the fragment element a register holds (the planted fault crosses a2, a3 with a4, a5)
  function automatic int a_elem(int i);
`ifdef PLANT_FRAGMENT_HALVES
    return (i == 2 || i == 3) ? i + 2 : (i == 4 || i == 5) ? i - 2 : i;
`else
    return i;
`endif
  endfunction
  function automatic int a_row(int t, int i);
    return (t >> 2) + (((a_elem(i) >> 1) & 1) != 0 ? 8 : 0);
  endfunction
  function automatic int a_col(int t, int i);
    return (t % 4) * 2 + (a_elem(i) & 1) + ((a_elem(i) >> 2) != 0 ? 8 : 0);
  endfunction
  function automatic int b_row(int t, int i);
    return (t % 4) * 2 + (i & 1) + ((i >> 1) != 0 ? 8 : 0);
  endfunction
  function automatic int acc_row(int t, int i);
    return (t >> 2) + ((i >> 1) != 0 ? 8 : 0);
  endfunction
  function automatic int acc_col(int t, int i);
    return (t % 4) * 2 + (i & 1);
  endfunction

  // the lane: payload a[0..15], b[0..15] (16 bits each), c (32 bits), LSB first
  logic [543:0] payload;
  logic         u_valid, u_ready, r_valid;
  logic [31:0]  r_payload;
  mma_unit u_lane (.clk(clk), .rst(rst), .i__payload(payload), .i__valid(u_valid), .i__ready(u_ready),
                   .o__payload(r_payload), .o__valid(r_valid), .o__ready(1'b1));

  always_comb begin
    payload = '0;
    for (int k = 0; k < 16; k++) begin
      payload[16 * k +: 16]       = A[issued[6:3]][k];
      payload[256 + 16 * k +: 16] = B[k][issued[2:0]];
    end
    payload[512 +: 32] = C[issued[6:3]][issued[2:0]];
  end

  assign in_ready  = state == LOAD;
  assign u_valid   = state == COMPUTE && !issued[7];
  assign out_valid = state == DRAIN;
  always_comb for (int l = 0; l < 4; l++) d_frag[32 * l +: 32] = D[acc_row(beat, l)][acc_col(beat, l)];

  always_ff @(posedge clk) begin
    if (rst) begin
      state <= LOAD; beat <= '0; issued <= '0; taken <= '0;
    end else begin
      case (state)
        LOAD: if (in_valid) begin
          for (int i = 0; i < 8; i++) A[a_row(beat, i)][a_col(beat, i)] <= a_frag[16 * i +: 16];
          for (int i = 0; i < 4; i++) B[b_row(beat, i)][beat >> 2] <= b_frag[16 * i +: 16];
          for (int i = 0; i < 4; i++) C[acc_row(beat, i)][acc_col(beat, i)] <= c_frag[32 * i +: 32];
          beat <= beat + 1'b1;
          if (beat == 5'd31) begin state <= COMPUTE; issued <= '0; taken <= '0; end
        end
        COMPUTE: begin
          if (u_valid && u_ready) issued <= issued + 1'b1;
          if (r_valid) begin
            D[taken[6:3]][taken[2:0]] <= r_payload;
            taken <= taken + 1'b1;
            if (taken == 8'd127) state <= DRAIN;
          end
        end
        DRAIN: if (out_ready) begin
          beat <= beat + 1'b1;
          if (beat == 5'd31) state <= LOAD;
        end
        default: state <= LOAD;
      endcase
    end
  end
endmodule
