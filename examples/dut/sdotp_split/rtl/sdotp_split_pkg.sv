// sdotp_split_pkg.sv: types and combinational steps of sdotp_split (exact two-term dot-add).
// SPDX-License-Identifier: MIT
//
// Every finite term (product or c) is kept as (-1)^sign * sig * 2^(pos - 149): `pos` is the bit
// of a fixed-point accumulator whose last place is 2^-149 (the f32 subnormal lsb), so placing a
// term is one left shift and the sum of the three terms is exact.
//
// An e5m2 byte is the top byte of the f16 with the same value (same sign, exponent field and
// bias, two of the ten mantissa bits; subnormals, inf and NaN line up too), so mode 1 widens
// its operands to f16 and shares the f16 multiplier.
package sdotp_split_pkg;

  localparam int unsigned POSW = 9;            // accumulator bit positions 0 .. 277
  // Widest magnitude: |c| < 2^128 (bit 277) plus two products < 2^32 each stays below 2^129,
  // so 278 magnitude bits and a sign bit hold every sum without wrapping.
  localparam int unsigned MAGW = 278;
  localparam int unsigned ACCW = MAGW + 1;

  // Destination-format constants, as accumulator positions (last place 2^-149).
  localparam logic [POSW-1:0] F32_MIN_POS = 9'd0;      // f32 subnormal lsb 2^-149
  localparam logic [POSW-1:0] F16_MIN_POS = 9'd125;    // f16 subnormal lsb 2^-24
  localparam logic [31:0]     F32_NAN     = 32'h7fc0_0000;
  localparam logic [31:0]     F16_NAN     = 32'h0000_7e00;

  // A finite number (-1)^sign * sig * 2^(pos - 149).
  typedef struct packed {
    logic            sign;
    logic [23:0]     sig;
    logic [POSW-1:0] pos;
  } num_t;

  // A decoded operand or product: class flags plus its finite value (meaningless for inf/NaN).
  typedef struct packed {
    logic zero;
    logic inf;
    logic nan;
    num_t num;
  } term_t;

  // What the special-value rules need from the three terms.
  typedef struct packed {
    logic nan;        // a NaN input, inf * 0, or infinities of both signs
    logic pos_inf;
    logic neg_inf;
    logic neg_zero;   // every term is a zero with its sign set: an exact-zero sum gives -0
  } special_t;

  // The summary before any term is folded in: neg_zero starts set, and any term but a -0 clears it.
  localparam special_t SPECIAL_NONE = '{nan: 1'b0, pos_inf: 1'b0, neg_inf: 1'b0, neg_zero: 1'b1};

  // An f16 operand: 11-bit significand, last place at position e + 124 (e = 1 for subnormals).
  function automatic term_t decode_f16(logic [15:0] x);
    term_t      t;
    logic [4:0] e;
    e           = x[14:10];
    t.zero      = (e == 5'd0) && (x[9:0] == 10'd0);
    t.inf       = (e == 5'h1f) && (x[9:0] == 10'd0);
    t.nan       = (e == 5'h1f) && (x[9:0] != 10'd0);
    t.num.sign  = x[15];
    t.num.sig   = {13'd0, e != 5'd0, x[9:0]};
    t.num.pos   = POSW'(e == 5'd0 ? 5'd1 : e) + 9'd124;
    return t;
  endfunction

  // c as f32: 24-bit significand, last place 2^(e - 150) is position e - 1.
  function automatic term_t decode_f32(logic [31:0] x);
    term_t      t;
    logic [7:0] e;
    e           = x[30:23];
    t.zero      = (e == 8'd0) && (x[22:0] == 23'd0);
    t.inf       = (e == 8'hff) && (x[22:0] == 23'd0);
    t.nan       = (e == 8'hff) && (x[22:0] != 23'd0);
    t.num.sign  = x[31];
    t.num.sig   = {e != 8'd0, x[22:0]};
    t.num.pos   = POSW'(e == 8'd0 ? 8'd0 : e - 8'd1);
    return t;
  endfunction

  // The exact product of two f16 operands: a 22-bit significand, positions add (-149 once more).
  // An f16 operand's significand is at most 11 bits, so the high bits of sig are not read.
  function automatic term_t multiply(term_t a, term_t b);
    term_t p;
    p.zero     = a.zero | b.zero;
    p.inf      = a.inf | b.inf;
    p.nan      = a.nan | b.nan | (a.inf & b.zero) | (a.zero & b.inf);
    p.num.sign = a.num.sign ^ b.num.sign;
    p.num.sig  = 24'(a.num.sig[10:0] * b.num.sig[10:0]);
    // (pa - 149) + (pb - 149) + 149: in range 101 .. 159 for finite operands
    p.num.pos  = a.num.pos + b.num.pos - 9'd149;
    return p;
  endfunction

  // Fold one term into the special-value summary.
  function automatic special_t add_special(special_t s, term_t t);
    special_t r;
    r.nan      = s.nan | t.nan;
    r.pos_inf  = s.pos_inf | (t.inf & ~t.num.sign);
    r.neg_inf  = s.neg_inf | (t.inf & t.num.sign);
    r.neg_zero = s.neg_zero & t.zero & t.num.sign;
    return r;
  endfunction

  // A term as a two's-complement accumulator value.
  function automatic logic signed [ACCW-1:0] place(num_t n);
    logic [ACCW-1:0] m;
    m = ACCW'(n.sig) << n.pos;
    return n.sign ? -$signed(m) : $signed(m);
  endfunction

endpackage
