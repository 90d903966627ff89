// fda_normalize.sv: the exact fixed-point sum of a dot-add, normalised and rounded to f32.
// SPDX-License-Identifier: MIT
//
// The sum is `sum * 2^(e_max - F)`.  The result keeps 24 significant bits (fewer when it is
// subnormal: its last place is 2^-149), drops the rest toward zero (RM_RZ) or rounds to
// nearest even (RM_RNE); a result >= 2^128 is infinity; a zero result is +0.
// Combinational: the caller registers the output.
//
// PLANT_TIES_UP:         the sticky bit is forced on, so an exact tie rounds up (RNE only).
// PLANT_FLUSH_SUBNORMAL: a subnormal result becomes +0.
`include "fda_defs.svh"

module fda_normalize #(
  parameter int unsigned SUMW = 31                 // width of the signed sum
) (
  input  logic signed [SUMW-1:0] sum,
  input  fda_pkg::exp_t          e_max,
  input  fda_pkg::special_t      special,
  input  fda_pkg::rm_e           rm,
  output logic [31:0]            d
);
  import fda_pkg::*;

  localparam int unsigned MAGW = SUMW - 1;
  localparam int unsigned POSW = $clog2(MAGW) + 1;

  logic [MAGW-1:0] mag;
  logic            sign;
  logic [POSW-1:0] msb;              // position of the leading one of mag
  exp_t            exp_lsb, e_top, q, shift;
  logic [MAGW-1:0] one, below_guard;
  logic [23:0]     kept;             // 24 significant bits (q keeps the leading one at bit 23 at most)
  logic            guard, sticky, round_up;
  logic [30:0]     word;             // exponent field and fraction, before the sign

  assign sign = sum[SUMW-1];
  assign mag  = sign ? MAGW'(-sum) : MAGW'(sum);
  assign one  = MAGW'(1);

  always_comb begin
    msb = '0;
    for (int i = 0; i < MAGW; i++) begin
      if (mag[i]) msb = POSW'(i);
    end
  end

  always_comb begin
    exp_lsb = exp_t'(e_max - exp_t'(F));
    e_top   = exp_t'(exp_lsb + exp_t'({1'b0, msb}));
    // last place of the result: 23 bits below the leading one, never below 2^-149
    q       = (e_top - exp_t'(23) > exp_t'(-149)) ? exp_t'(e_top - exp_t'(23)) : exp_t'(-149);
    shift   = exp_t'(q - exp_lsb);
    if (shift > 0) begin
      kept        = 24'(mag >> shift);
      // both masks are 0 / all ones once shift - 1 >= MAGW: the whole sum lies below the guard
      guard       = |(mag & (one << (shift - 1)));
      below_guard = (one << (shift - 1)) - one;
      sticky      = |(mag & below_guard);
    end else begin
      kept        = 24'(mag) << (-shift);
      guard       = 1'b0;
      below_guard = '0;
      sticky      = 1'b0;
    end
`ifdef PLANT_TIES_UP
    sticky   = 1'b1;
`endif
    round_up = (rm == RM_RNE) && guard && (sticky || kept[0]);
    // a normal result has its leading one at bit 23 of kept; a subnormal one has exponent field 0
    word     = kept[23] ? {8'(q + exp_t'(150)), kept[22:0]} : {8'd0, kept[22:0]};
    word     = word + 31'(round_up);                     // a carry moves into the exponent (or to inf)
`ifdef PLANT_FLUSH_SUBNORMAL
    if (word[30:23] == 8'd0) word = '0;
`endif
    if (special.nan || special.pos_inf || special.neg_inf) d = special_result(special);
    else if (e_top > exp_t'(127) && mag != '0)             d = {sign, F32_POS_INF[30:0]};
    else if (word == '0)                                   d = 32'd0;
    else                                                   d = {sign, word};
  end

endmodule
