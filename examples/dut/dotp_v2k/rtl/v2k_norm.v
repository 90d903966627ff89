// v2k_norm.v: the exact sum of a fused dot-add normalised to f32, rounded toward zero.
// SPDX-License-Identifier: MIT
//
// The value is sum * 2^(e_max - 24) (sum: 32-bit two's complement; e_max biased by 256).
// The result keeps 24 significant bits, or fewer when it is subnormal (its last place is
// 2^-149), the rest dropped (RZ).  A value >= 2^128 is infinity; a zero result is +0.
// Special values win: NaN (0x7fffffff) for a NaN, 0 x inf or +inf + -inf, else the infinity.
// Combinational: the caller registers d.
module v2k_norm (
  input  wire [31:0] sum,
  input  wire [9:0]  e_max,
  input  wire        nan,
  input  wire        pos_inf,
  input  wire        neg_inf,
  output reg  [31:0] d
);
  wire        sign = sum[31];
  wire [30:0] mag  = sign ? (31'd0 - sum[30:0]) : sum[30:0];

  reg  [4:0]  lead;        // position of the leading one of mag
  reg  [10:0] e_top;       // exponent of that one, biased by 256
  reg  [10:0] q;           // exponent of the result's last place, biased by 256
  reg  [10:0] t;           // right shift of {mag, 23 zeros} that puts the last place at bit 0
  /* verilator lint_off UNUSEDSIGNAL */
  reg  [53:0] wide;        // only its low 24 bits are kept: the rest lies above the leading one
  /* verilator lint_on UNUSEDSIGNAL */
  reg  [23:0] kept;
  reg  [7:0]  field;
  reg  [30:0] word;
  integer     i;

  always @* begin
    lead = 5'd0;
    for (i = 0; i < 31; i = i + 1)
      if (mag[i]) lead = i[4:0];
    e_top = {1'b0, e_max} - 11'd24 + {6'd0, lead};
    // last place 23 bits below the leading one, never below 2^-149 (107 biased)
    q     = (e_top >= 11'd130) ? (e_top - 11'd23) : 11'd107;
    // last place of the sum is e_max - 24; t = 23 + (q - (e_max - 24)), 0 .. 30 for a nonzero sum
    t     = q + 11'd47 - {1'b0, e_max};
    wide  = {mag, 23'd0} >> t;
    kept  = wide[23:0];
    // a normal result has its leading one at bit 23 of kept: field = q + 150 (unbiased q)
    field = kept[23] ? (q[7:0] - 8'd106) : 8'd0;
    word  = {field, kept[22:0]};
    if (nan || (pos_inf && neg_inf)) d = 32'h7fff_ffff;
    else if (pos_inf)                d = 32'h7f80_0000;
    else if (neg_inf)                d = 32'hff80_0000;
    else if (mag != 31'd0 && e_top >= 11'd384) d = {sign, 31'h7f80_0000};
    else if (word == 31'd0)          d = 32'd0;
    else                             d = {sign, word};
  end
endmodule
