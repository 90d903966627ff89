// sdotp_split.sv: an expanding two-term dot product with one rounding, d = a0*b0 + a1*b1 + c.
// SPDX-License-Identifier: MIT
//
// mode 0: a, b f16; c, d f32.   mode 1: a, b fp8 e5m2; c, d f16.   (2 and 3 act as mode 0.)
// The products and their sum with c are exact (a fixed-point accumulator covering every term,
// no alignment window); the sum is rounded once, to nearest even, keeping subnormal results;
// a magnitude that rounds past the largest finite value is infinity.  Special values: a NaN
// input, inf * 0, or infinities of both signs give the canonical NaN (0x7fc00000 / 0x7e00);
// otherwise an infinite term wins.  An exact-zero sum is -0 only when all three terms are -0.
//
// Operands are split over the ports: op_a = {b0, a0}, op_b = {b1, a1} (16-bit fields; an e5m2
// element in the low byte of its field, the high byte ignored), op_c = c (f16 in [15:0] in
// mode 1).  In mode 1 res[31:16] is 0.
//
// Stages (registers, all advancing together while the output is free or being taken):
//   1  decode, exact products, special-value summary
//   2  exact two's-complement sum of the three placed terms
//   3  normalisation, RNE rounding, packing (the output register)
// Latency 3 cycles: the result of an input accepted in cycle n (in_valid && in_ready at the
// edge ending it) is presented (out_valid, res) in cycle n + 3 when nothing stalls; one dot-add
// per cycle while out_ready stays high.  The pipeline stalls as a whole while a result waits
// (out_valid && !out_ready): in_ready = !out_valid || out_ready, so a held result stays put.
// Only the three valid flags are reset (synchronous, active-high rst); the data registers
// need none: a stage's data counts only while its valid flag is set.
module sdotp_split (
  input  logic        clk,
  input  logic        rst,        // synchronous, active high
  input  logic [1:0]  mode,       // 0: f16*f16+f32->f32, 1: e5m2*e5m2+f16->f16
  input  logic        in_valid,
  output logic        in_ready,
  input  logic [31:0] op_a,       // a[0] in [15:0], b[0] in [31:16]
  input  logic [31:0] op_b,       // a[1] in [15:0], b[1] in [31:16]
  input  logic [31:0] op_c,       // c: f32 in mode 0; f16 in [15:0] in mode 1
  output logic        out_valid,
  input  logic        out_ready,
  output logic [31:0] res         // d: f32 in mode 0; f16 in [15:0] in mode 1
);
  import sdotp_split_pkg::*;

  logic advance;
  logic v1, v2, v3;

  assign advance   = !v3 || out_ready;
  assign in_ready  = advance;
  assign out_valid = v3;

  // The mode travels with each vector, so a change between runs cannot mix formats in flight.
  logic e5m2_d, e5m2_1, e5m2_2;
  assign e5m2_d = (mode == 2'd1);

  always_ff @(posedge clk) begin
    if (rst) begin
      v1 <= 1'b0;
      v2 <= 1'b0;
      v3 <= 1'b0;
    end else if (advance) begin
      v1 <= in_valid;
      v2 <= v1;
      v3 <= v2;
    end
  end

  // ---------------------------------------------------------------- stage 1: products
  logic [15:0] a0_w, b0_w, a1_w, b1_w;     // operands widened to f16
  term_t       p0_d, p1_d, c_d;
  special_t    spec_d;
  num_t        s1_p0, s1_p1, s1_c;
  special_t    s1_spec;

  always_comb begin
    // an e5m2 byte followed by eight zero mantissa bits is the f16 of the same value
    a0_w   = e5m2_d ? {op_a[7:0],   8'h00} : op_a[15:0];
    b0_w   = e5m2_d ? {op_a[23:16], 8'h00} : op_a[31:16];
    a1_w   = e5m2_d ? {op_b[7:0],   8'h00} : op_b[15:0];
    b1_w   = e5m2_d ? {op_b[23:16], 8'h00} : op_b[31:16];
    p0_d   = multiply(decode_f16(a0_w), decode_f16(b0_w));
    p1_d   = multiply(decode_f16(a1_w), decode_f16(b1_w));
    c_d    = e5m2_d ? decode_f16(op_c[15:0]) : decode_f32(op_c);
    spec_d = add_special(add_special(add_special(SPECIAL_NONE, p0_d), p1_d), c_d);
    spec_d.nan = spec_d.nan | (spec_d.pos_inf & spec_d.neg_inf);
  end

  always_ff @(posedge clk) begin
    if (advance) begin
      s1_p0   <= p0_d.num;
      s1_p1   <= p1_d.num;
      s1_c    <= c_d.num;
      s1_spec <= spec_d;
      e5m2_1  <= e5m2_d;
    end
  end

  // ---------------------------------------------------------------- stage 2: exact sum
  logic signed [ACCW-1:0] sum_d, s2_sum;
  special_t               s2_spec;

  assign sum_d = place(s1_p0) + place(s1_p1) + place(s1_c);

  always_ff @(posedge clk) begin
    if (advance) begin
      s2_sum  <= sum_d;
      s2_spec <= s1_spec;
      e5m2_2  <= e5m2_1;
    end
  end

  // ---------------------------------------------------------------- stage 3: round and pack
  logic            sign;
  logic [MAGW-1:0] mag, one, half, below;
  logic [POSW-1:0] lead;          // position of the leading one of mag
  logic [POSW-1:0] min_pos;       // the destination's subnormal last place
  logic [POSW-1:0] prec_m1;       // significand bits after the leading one: 23 (f32), 10 (f16)
  logic [POSW-1:0] q;             // position of the result's last place
  logic [23:0]     kept;          // at most 24 significant bits: mag >> q
  logic [24:0]     rounded;       // kept after rounding, one more bit for the carry
  logic            guard, sticky;
  logic [33:0]     word;          // exponent field and fraction, before the sign
  logic            overflow;
  logic [31:0]     res_d;

  assign sign = s2_sum[ACCW-1];
  assign mag  = MAGW'(sign ? -s2_sum : s2_sum);
  assign one  = MAGW'(1);

  always_comb begin
    lead = '0;
    for (int i = 0; i < MAGW; i++) begin
      if (mag[i]) lead = POSW'(i);
    end
  end

  always_comb begin
    min_pos = e5m2_2 ? F16_MIN_POS : F32_MIN_POS;
    prec_m1 = e5m2_2 ? 9'd10 : 9'd23;
    // the last place: prec_m1 bits below the leading one, but never below the subnormal lsb
    q       = (lead > min_pos + prec_m1) ? lead - prec_m1 : min_pos;
    kept    = 24'(mag >> q);
    // q = 0 only in mode 0, where nothing lies below the last place (both masks are 0)
    half    = (q == '0) ? '0 : one << (q - 9'd1);
    below   = (q == '0) ? '0 : half - one;
    guard   = |(mag & half);
    sticky  = |(mag & below);
    rounded = 25'(kept) + 25'(guard && (sticky || kept[0]));
    // Exponent field and fraction in one add: (q - min_pos) above the fraction, plus the rounded
    // significand, whose hidden bit (at bit prec_m1 for a normal result) adds the missing 1 and
    // whose rounding carry (2^(prec_m1+1)) moves into the exponent the same way; a subnormal has
    // q = min_pos and no hidden bit, so its exponent field stays 0.
    if (e5m2_2) begin
      word     = 34'({q - F16_MIN_POS, 10'd0}) + 34'(rounded);
      overflow = word >= 34'h7c00;
    end else begin
      word     = 34'({q, 23'd0}) + 34'(rounded);
      overflow = word >= 34'h7f80_0000;
    end

    if (s2_spec.nan)          res_d = e5m2_2 ? F16_NAN : F32_NAN;
    else if (s2_spec.pos_inf) res_d = e5m2_2 ? 32'h0000_7c00 : 32'h7f80_0000;
    else if (s2_spec.neg_inf) res_d = e5m2_2 ? 32'h0000_fc00 : 32'hff80_0000;
    else if (mag == '0)       res_d = e5m2_2 ? {16'd0, s2_spec.neg_zero, 15'd0} : {s2_spec.neg_zero, 31'd0};
    else if (overflow)        res_d = e5m2_2 ? {16'd0, sign, 15'h7c00} : {sign, 31'h7f80_0000};
    else                      res_d = e5m2_2 ? {16'd0, sign, word[14:0]} : {sign, word[30:0]};
  end

  always_ff @(posedge clk) begin
    if (advance) res <= res_d;
  end

endmodule
