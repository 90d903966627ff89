// v2k_f16_mul.v: one exact f16 x f16 product of a fused dot-add, in plain Verilog-2005.
// SPDX-License-Identifier: MIT
//
// The product is (-1)^p_sign * p_sig * 2^(p_exp - 20), p_sig < 2^22, never renormalised.
// Exponents are biased by 256 (unsigned, 10 bits) so that every compare and difference of the
// datapath is unsigned: p_exp = e_x + e_y + 256.  A subnormal operand takes the minimum
// exponent (-14) and no hidden bit; a zero product takes e_zero = -132 (124 biased).
// The special-value flags follow IEEE: NaN for a NaN operand or 0 x inf.
module v2k_f16_mul (
  input  wire [15:0] x,
  input  wire [15:0] y,
  output wire        p_sign,
  output wire        p_inf,
  output wire        p_nan,
  output wire [9:0]  p_exp,
  output wire [21:0] p_sig
);
  wire [4:0] xe = x[14:10];
  wire [4:0] ye = y[14:10];
  wire [9:0] xm = x[9:0];
  wire [9:0] ym = y[9:0];

  wire x_zero = (xe == 5'd0) && (xm == 10'd0);
  wire y_zero = (ye == 5'd0) && (ym == 10'd0);
  wire x_inf  = (xe == 5'd31) && (xm == 10'd0);
  wire y_inf  = (ye == 5'd31) && (ym == 10'd0);
  wire x_nan  = (xe == 5'd31) && (xm != 10'd0);
  wire y_nan  = (ye == 5'd31) && (ym != 10'd0);

  // field of the exponent as used: a subnormal's field counts as 1 (exponent 1 - 15)
  wire [9:0] xf = (xe == 5'd0) ? 10'd1 : {5'd0, xe};
  wire [9:0] yf = (ye == 5'd0) ? 10'd1 : {5'd0, ye};
  wire [10:0] xs = {xe != 5'd0, xm};
  wire [10:0] ys = {ye != 5'd0, ym};

  assign p_sign = x[15] ^ y[15];
  assign p_nan  = x_nan | y_nan | (x_inf & y_zero) | (x_zero & y_inf);
  assign p_inf  = (x_inf | y_inf) & ~p_nan;
  wire   p_zero = (x_zero | y_zero) & ~p_nan & ~p_inf;
  assign p_sig  = xs * ys;
  // (xf - 15) + (yf - 15) + 256 = xf + yf + 226
  assign p_exp  = p_zero ? 10'd124 : (xf + yf + 10'd226);
endmodule
