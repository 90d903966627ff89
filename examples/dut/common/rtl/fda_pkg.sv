// fda_pkg.sv: types and combinational steps of a fused dot-add (FDA) with an f32 result.
// SPDX-License-Identifier: MIT
//
// d = c + sum_k a_k * b_k, computed the way the ISA's FDA describes it:
//   1. special values first (NaN, 0 x inf, inf - inf give NaN; else an infinity wins);
//   2. exact products s_a * s_b with exponent e_a + e_b, not renormalised; a subnormal
//      operand keeps the format's minimum exponent and no hidden bit;
//   3. e_max over the products and c, a zero product or zero c counting as E_ZERO;
//   4. every term shifted right by e_max - e_k keeping F fraction bits (truncated);
//   5. exact two's-complement sum;
//   6. normalised to f32, rounded toward zero (RZ) or to nearest even (RNE);
//      a result >= 2^128 is infinity, a zero result is +0.
`include "fda_defs.svh"

package fda_pkg;

  // Operand formats the decoder knows.  TF32 sits in a 32-bit word whose low 13 bits are ignored.
  typedef enum logic [1:0] {
    FMT_F16  = 2'd0,
    FMT_BF16 = 2'd1,
    FMT_TF32 = 2'd2
  } fmt_e;

  typedef enum logic {
    RM_RZ  = 1'b0,
    RM_RNE = 1'b1
  } rm_e;

  localparam int unsigned F      = `FDA_F;
  localparam int          E_ZERO = `FDA_E_ZERO;
  localparam int unsigned FRAC   = 10;            // every operand significand is widened to 10 fraction bits
  localparam int unsigned PFRAC  = 2 * FRAC;      // fraction bits of an exact product
  localparam int unsigned EXPW   = 12;            // signed exponents: products reach -252 .. 254
  localparam int unsigned TERMW  = F + 3;         // aligned term: 2 integer bits, F fraction bits, sign

  typedef logic signed [EXPW-1:0] exp_t;

  // A decoded narrow operand (value = (-1)^sign * sig * 2^(exp - FRAC), sig < 2^(FRAC+1)),
  // an exact product (value = (-1)^sign * sig * 2^(exp - PFRAC), sig < 2^(PFRAC+2)),
  // or c (value = (-1)^sign * sig * 2^(exp - 23), a 24-bit significand).
  typedef struct packed {
    logic        sign;
    logic        zero;
    logic        inf;
    logic        nan;
    exp_t        exp;
    logic [23:0] sig;
  } term_t;

  // Special-value summary of one dot-add.
  typedef struct packed {
    logic nan;
    logic pos_inf;
    logic neg_inf;
  } special_t;

  localparam logic [31:0] F32_NAN     = `FDA_NAN_BITS;
  localparam logic [31:0] F32_POS_INF = 32'h7f80_0000;
  localparam logic [31:0] F32_NEG_INF = 32'hff80_0000;

  // Fields of a narrow operand.  The word holds f16/bf16 in bits 15:0 and tf32 in bits 31:13.
  function automatic term_t decode(logic [31:0] word, fmt_e fmt);
    term_t      o;
    logic [7:0] efield;
    logic [9:0] mfield;
    logic [7:0] emask;
    int         bias;
    unique case (fmt)
      FMT_F16: begin
        o.sign = word[15];
        efield = {3'b0, word[14:10]};
        mfield = word[9:0];
        emask  = 8'h1f;
        bias   = 15;
      end
      FMT_BF16: begin
        o.sign = word[15];
        efield = word[14:7];
        mfield = {word[6:0], 3'b0};
        emask  = 8'hff;
        bias   = 127;
      end
      default: begin  // FMT_TF32
        o.sign = word[31];
        efield = word[30:23];
        mfield = word[22:13];
        emask  = 8'hff;
        bias   = 127;
      end
    endcase
    o.zero = (efield == 8'd0) && (mfield == 10'd0);
    o.inf  = (efield == emask) && (mfield == 10'd0);
    o.nan  = (efield == emask) && (mfield != 10'd0);
    if (efield == 8'd0) begin       // subnormal (or zero): minimum exponent, no hidden bit
      o.exp = exp_t'(1 - bias);
      o.sig = {14'b0, mfield};
    end else begin
      o.exp = exp_t'(int'(efield) - bias);
      o.sig = {13'b0, 1'b1, mfield};
    end
    return o;
  endfunction

  // c as a term (its own fraction grid: 23 bits).
  function automatic term_t decode_c(logic [31:0] c);
    term_t t;
    logic [7:0]  efield;
    logic [22:0] mfield;
    efield = c[30:23];
    mfield = c[22:0];
    t.sign = c[31];
    t.zero = (efield == 8'd0) && (mfield == 23'd0);
    t.inf  = (efield == 8'hff) && (mfield == 23'd0);
    t.nan  = (efield == 8'hff) && (mfield != 23'd0);
    t.exp  = t.zero ? exp_t'(E_ZERO) : (efield == 8'd0) ? exp_t'(-126) : exp_t'(int'(efield) - 127);
    t.sig  = {efield != 8'd0, mfield};
    return t;
  endfunction

  // Shift a magnitude right by `shift` (anything >= its width gives 0) and attach the sign.
  function automatic logic signed [TERMW-1:0] signed_shift(logic [TERMW-2:0] mag, exp_t shift, logic sign);
    logic [TERMW-2:0] m;
    m = (shift >= exp_t'(TERMW - 1)) ? '0 : mag >> shift;
    return sign ? -$signed({1'b0, m}) : $signed({1'b0, m});
  endfunction

  // The helpers below take a whole term and read only the fields their step needs.
  /* verilator lint_off UNUSEDSIGNAL */

  // Exact product, exponent e_a + e_b; a zero product takes E_ZERO.
  function automatic term_t multiply(term_t a, term_t b);
    term_t p;
    p.sign = a.sign ^ b.sign;
    p.nan  = a.nan | b.nan | (a.inf & b.zero) | (a.zero & b.inf);
    p.inf  = (a.inf | b.inf) & ~p.nan;
    p.zero = (a.zero | b.zero) & ~p.nan & ~p.inf;
    p.sig  = 24'(a.sig[FRAC:0] * b.sig[FRAC:0]);
    p.exp  = p.zero ? exp_t'(E_ZERO) : exp_t'(a.exp + b.exp);
    return p;
  endfunction

  // A product aligned to F fraction bits below 2^e_max (truncated: RZ on the magnitude).
  function automatic logic signed [TERMW-1:0] align_product(term_t p, exp_t e_max);
    logic [TERMW-2:0] mag;
    mag = {p.sig[PFRAC+1:0], {(F - PFRAC){1'b0}}};
    return signed_shift(mag, exp_t'(e_max - p.exp), p.sign);
  endfunction

  // c (24-bit significand, 23 fraction bits) aligned the same way.
  function automatic logic signed [TERMW-1:0] align_c(term_t c, exp_t e_max);
    logic [TERMW-2:0] mag;
    mag = {1'b0, c.sig, {(F - 23){1'b0}}};
    return signed_shift(mag, exp_t'(e_max - c.exp), c.sign);
  endfunction

  // Special values of the whole dot-add (IEEE sum semantics over the products and c).
  function automatic special_t add_special(special_t s, term_t t);
    special_t r;
    r.nan     = s.nan | t.nan;
    r.pos_inf = s.pos_inf | (t.inf & ~t.sign);
    r.neg_inf = s.neg_inf | (t.inf & t.sign);
    return r;
  endfunction

  /* verilator lint_on UNUSEDSIGNAL */

  function automatic logic [31:0] special_result(special_t s);
    if (s.nan || (s.pos_inf && s.neg_inf)) return F32_NAN;
    if (s.pos_inf) return F32_POS_INF;
    return F32_NEG_INF;
  endfunction

endpackage
