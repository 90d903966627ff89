// fda_core.sv: a four-stage pipelined fused dot-add, d = c + sum_k a_k * b_k (f32 result).
// SPDX-License-Identifier: MIT
//
// Stages (each a register, all advancing together while `en` is 1):
//   1  decode, exact products, special values
//   2  e_max, alignment to F fraction bits (truncated)
//   3  fixed-point sum
//   4  normalisation and rounding (fda_normalize)
// The format and rounding mode are sampled with the operands, so they may change per vector.
// `in_valid` rides along and comes out as `out_valid` LATENCY enabled cycles later.
//
// PLANT_X_AFTER_RESET: the valid flags have no reset (uninitialised state reaches out_valid).
`include "fda_defs.svh"

module fda_core #(
  parameter int unsigned K  = 8,          // products per dot-add
  parameter int unsigned EB = 16          // bits per a/b element (16: f16/bf16, 32: tf32)
) (
  input  logic            clk,
  input  logic            rst_n,
  input  logic            en,
  input  logic            in_valid,
  input  fda_pkg::fmt_e   fmt,
  input  fda_pkg::rm_e    rm,
  input  logic [EB-1:0]   a [K],
  input  logic [EB-1:0]   b [K],
  input  logic [31:0]     c,
  output logic            out_valid,
  output logic [31:0]     d
);
  import fda_pkg::*;

  localparam int unsigned LATENCY = 4;
  localparam int unsigned SUMW    = TERMW + $clog2(K + 1) - `FDA_ACC_SHORT;

  logic [LATENCY-1:0] valid;

  // ---------------------------------------------------------------- stage 1: products
  term_t    prod_d [K];
  term_t    c_d;
  special_t spec_d;
  term_t    s1_prod [K];
  term_t    s1_c;
  special_t s1_spec;
  rm_e      s1_rm;

  always_comb begin
    spec_d = '0;
    for (int k = 0; k < K; k++) begin
      prod_d[k] = multiply(decode(32'(a[k]), fmt), decode(32'(b[k]), fmt));
      spec_d    = add_special(spec_d, prod_d[k]);
    end
    c_d    = decode_c(c);
    spec_d = add_special(spec_d, c_d);
  end

  always_ff @(posedge clk) begin
    if (en) begin
      s1_prod <= prod_d;
      s1_c    <= c_d;
      s1_spec <= spec_d;
      s1_rm   <= rm;
    end
  end

  // ---------------------------------------------------------------- stage 2: alignment
  exp_t                    e_max_d;
  logic signed [TERMW-1:0] term_d [K+1];
  logic signed [TERMW-1:0] s2_term [K+1];
  exp_t                    s2_e_max;
  special_t                s2_spec;
  rm_e                     s2_rm;

  always_comb begin
    e_max_d = s1_c.exp;                    // a zero c (and a zero product) already carries E_ZERO
    for (int k = 0; k < K; k++) begin
      if (s1_prod[k].exp > e_max_d) e_max_d = s1_prod[k].exp;
    end
    for (int k = 0; k < K; k++) term_d[k] = align_product(s1_prod[k], e_max_d);
    term_d[K] = align_c(s1_c, e_max_d);
  end

  always_ff @(posedge clk) begin
    if (en) begin
      s2_term  <= term_d;
      s2_e_max <= e_max_d;
      s2_spec  <= s1_spec;
      s2_rm    <= s1_rm;
    end
  end

  // ---------------------------------------------------------------- stage 3: exact sum
  logic signed [SUMW-1:0] sum_d;
  logic signed [SUMW-1:0] s3_sum;
  exp_t                   s3_e_max;
  special_t               s3_spec;
  rm_e                    s3_rm;

  always_comb begin
    sum_d = '0;
    for (int k = 0; k <= K; k++) sum_d = sum_d + SUMW'(s2_term[k]);
  end

  always_ff @(posedge clk) begin
    if (en) begin
      s3_sum   <= sum_d;
      s3_e_max <= s2_e_max;
      s3_spec  <= s2_spec;
      s3_rm    <= s2_rm;
    end
  end

  // ---------------------------------------------------------------- stage 4: normalise, round
  logic [31:0] d_d;

  fda_normalize #(.SUMW(SUMW)) u_normalize (
    .sum     (s3_sum),
    .e_max   (s3_e_max),
    .special (s3_spec),
    .rm      (s3_rm),
    .d       (d_d)
  );

  always_ff @(posedge clk) begin
    if (en) d <= d_d;
  end

  // ---------------------------------------------------------------- valid flags
`ifdef PLANT_X_AFTER_RESET
  always_ff @(posedge clk) begin
    if (en) valid <= {valid[LATENCY-2:0], in_valid};
  end
`else
  always_ff @(posedge clk) begin
    if (!rst_n)  valid <= '0;
    else if (en) valid <= {valid[LATENCY-2:0], in_valid};
  end
`endif

  assign out_valid = valid[LATENCY-1];

endmodule
