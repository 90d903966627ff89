// v2k_align.v: one term of a fused dot-add placed on the grid 2^(e_max - F), F = 24.
// SPDX-License-Identifier: MIT
//
// mag is the term's magnitude already on the grid of its own exponent (26 bits, two integer
// bits and 24 fraction bits); it is shifted right by e_max - e (truncated: the bits below the
// grid are dropped, the magnitude rounds toward zero) and then takes its sign (two's complement).
//
// PLANT_SHORT_ALIGN: one fraction bit short (F = 23), the fault a board run must catch.
module v2k_align (
  input  wire [25:0] mag,
  input  wire [9:0]  shift,
  input  wire        sign,
  output wire [26:0] term
);
`ifdef PLANT_SHORT_ALIGN
  // planted fault (faults/short_align.toml): the term keeps 23 fraction bits, its last one dropped
  wire [25:0] m = ((shift >= 10'd26) ? 26'd0 : (mag >> shift)) & ~26'd1;
`else
  wire [25:0] m = (shift >= 10'd26) ? 26'd0 : (mag >> shift);
`endif
  assign term = sign ? (27'd0 - {1'b0, m}) : {1'b0, m};
endmodule
