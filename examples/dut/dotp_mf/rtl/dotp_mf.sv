// dotp_mf.sv: a multi-format 8-term fused dot product, valid in / valid out, no backpressure.
// SPDX-License-Identifier: MIT
//
// fmt selects the operand format (0: f16, 1: bf16), rm the result rounding (0: toward zero,
// 1: to nearest even); both are sampled with each vector.  With fmt = 0, rm = 0 it matches
// ampere HMMA.1688.F32, with fmt = 1, rm = 0 HMMA.1688.F32.BF16; rm = 1 is the same FDA with
// out_rounding = RNE.  a and b are packed msb first: element 0 in the top 16 bits.
// The pipeline is held (not clocked) during reset.  Latency 4, or 5 with DOTP_MF_OUTPUT_REG.
//
// PLANT_TIES_UP (fda_normalize.sv): RNE rounds a tie up (the sticky bit is forced on).
// PLANT_X_AFTER_RESET (fda_core.sv): the valid flags have no reset.
module dotp_mf #(
  parameter int unsigned K = 8
) (
  input  logic            clk,
  input  logic            rst_n,
  input  logic            in_valid,
  input  logic            fmt,
  input  logic            rm,
  input  logic [16*K-1:0] a,
  input  logic [16*K-1:0] b,
  input  logic [31:0]     c,
  output logic            out_valid,
  output logic [31:0]     d
);
  import fda_pkg::*;

  logic [15:0] a_el [K];
  logic [15:0] b_el [K];
  logic        core_valid;
  logic [31:0] core_d;
  fmt_e        fmt_sel;
  rm_e         rm_sel;

  always_comb begin
    for (int k = 0; k < K; k++) begin
      a_el[k] = a[16*(K-1-k) +: 16];
      b_el[k] = b[16*(K-1-k) +: 16];
    end
  end

  assign fmt_sel = fmt ? FMT_BF16 : FMT_F16;
  assign rm_sel  = rm ? RM_RNE : RM_RZ;

  fda_core #(.K(K), .EB(16)) u_core (
    .clk       (clk),
    .rst_n     (rst_n),
    .en        (rst_n),              // no clock enable during reset
    .in_valid  (in_valid),
    .fmt       (fmt_sel),
    .rm        (rm_sel),
    .a         (a_el),
    .b         (b_el),
    .c         (c),
    .out_valid (core_valid),
    .d         (core_d)
  );

`ifdef DOTP_MF_OUTPUT_REG
  always_ff @(posedge clk) begin
    if (!rst_n) out_valid <= 1'b0;
    else        out_valid <= core_valid;
  end

  always_ff @(posedge clk) begin
    d <= core_d;
  end
`else
  assign out_valid = core_valid;
  assign d         = core_d;
`endif

endmodule
