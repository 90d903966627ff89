// dotp_v2k.v: an 8-term fused dot product d = c + a . b behind valid/ready, in Verilog-2005.
// SPDX-License-Identifier: MIT
//
// Matches ampere HMMA.1688.F32 (f16 x f16 + f32 -> f32, FDA, F = 24, e_zero = -132, RZ).
// Written in the plain style generators emit (modules, wires, regs, always blocks; no
// packages, structs or SystemVerilog functions), so Yosys reads it and it goes on the board.
// a and b are packed buses, element k in bits [16k +: 16].  Three stages:
//   1  exact products, c decoded, special values
//   2  e_max, alignment to 24 fraction bits below 2^e_max (truncated), exact sum
//   3  normalised to f32 (v2k_norm)
// The pipeline moves while its last stage is empty or taken (in_ready = !out_valid || out_ready);
// rst is synchronous, active high, and clears the valid flags only.
module dotp_v2k #(
  parameter K = 8                        // products per dot-add (at most 31: the sum is 32 bits)
) (
  input  wire            clk,
  input  wire            rst,
  input  wire            in_valid,
  output wire            in_ready,
  input  wire [16*K-1:0] a,
  input  wire [16*K-1:0] b,
  input  wire [31:0]     c,
  output wire            out_valid,
  input  wire            out_ready,
  output reg  [31:0]     d
);
  wire advance = !out_valid || out_ready;
  assign in_ready = advance;

  reg [2:0] valid;
  always @(posedge clk) begin
    if (rst)          valid <= 3'd0;
    else if (advance) valid <= {valid[1:0], in_valid};
  end
  assign out_valid = valid[2];

  // ------------------------------------------------------------------ stage 1: products
  wire [K-1:0]    p_sign, p_inf, p_nan;
  wire [10*K-1:0] p_exp;
  wire [22*K-1:0] p_sig;

  genvar g;
  generate
    for (g = 0; g < K; g = g + 1) begin : mul
      v2k_f16_mul u_mul (
        .x      (a[16*g +: 16]),
        .y      (b[16*g +: 16]),
        .p_sign (p_sign[g]),
        .p_inf  (p_inf[g]),
        .p_nan  (p_nan[g]),
        .p_exp  (p_exp[10*g +: 10]),
        .p_sig  (p_sig[22*g +: 22])
      );
    end
  endgenerate

  // c: (-1)^sign * sig * 2^(exp - 23), exponent biased by 256; a zero c takes e_zero (124)
  wire [7:0]  ce      = c[30:23];
  wire [22:0] cm      = c[22:0];
  wire        c_zero  = (ce == 8'd0) && (cm == 23'd0);
  wire        c_inf   = (ce == 8'hff) && (cm == 23'd0);
  wire        c_nan   = (ce == 8'hff) && (cm != 23'd0);
  wire [9:0]  c_exp   = c_zero ? 10'd124 : (ce == 8'd0) ? 10'd130 : ({2'd0, ce} + 10'd129);
  wire [23:0] c_sig   = {ce != 8'd0, cm};

  wire any_nan = (|p_nan) | c_nan;
  wire any_pos = (|(p_inf & ~p_sign)) | (c_inf & ~c[31]);
  wire any_neg = (|(p_inf & p_sign)) | (c_inf & c[31]);

  reg [K-1:0]    s1_sign;
  reg [10*K-1:0] s1_exp;
  reg [22*K-1:0] s1_sig;
  reg            s1_c_sign;
  reg [9:0]      s1_c_exp;
  reg [23:0]     s1_c_sig;
  reg            s1_nan, s1_pos, s1_neg;

  always @(posedge clk) begin
    if (advance) begin
      s1_sign   <= p_sign;
      s1_exp    <= p_exp;
      s1_sig    <= p_sig;
      s1_c_sign <= c[31];
      s1_c_exp  <= c_exp;
      s1_c_sig  <= c_sig;
      s1_nan    <= any_nan;
      s1_pos    <= any_pos;
      s1_neg    <= any_neg;
    end
  end

  // ------------------------------------------------------------------ stage 2: align and sum
  reg [9:0] e_max;
  integer   k;
  always @* begin
    e_max = s1_c_exp;
    for (k = 0; k < K; k = k + 1)
      if (s1_exp[10*k +: 10] > e_max) e_max = s1_exp[10*k +: 10];
  end

  // a product is p_sig * 2^(e - 20): on the grid 2^(e - 24) it is p_sig << 4;
  // c is c_sig * 2^(e - 23): on that grid c_sig << 1
  wire [27*(K+1)-1:0] terms;
  generate
    for (g = 0; g < K; g = g + 1) begin : align
      v2k_align u_align (
        .mag   ({s1_sig[22*g +: 22], 4'd0}),
        .shift (e_max - s1_exp[10*g +: 10]),
        .sign  (s1_sign[g]),
        .term  (terms[27*g +: 27])
      );
    end
  endgenerate
  v2k_align u_align_c (
    .mag   ({1'b0, s1_c_sig, 1'b0}),
    .shift (e_max - s1_c_exp),
    .sign  (s1_c_sign),
    .term  (terms[27*K +: 27])
  );

  reg [31:0] sum;
  always @* begin
    sum = 32'd0;
    for (k = 0; k <= K; k = k + 1)
      sum = sum + {{5{terms[27*k + 26]}}, terms[27*k +: 27]};
  end

  reg [31:0] s2_sum;
  reg [9:0]  s2_e_max;
  reg        s2_nan, s2_pos, s2_neg;
  always @(posedge clk) begin
    if (advance) begin
      s2_sum   <= sum;
      s2_e_max <= e_max;
      s2_nan   <= s1_nan;
      s2_pos   <= s1_pos;
      s2_neg   <= s1_neg;
    end
  end

  // ------------------------------------------------------------------ stage 3: normalise
  wire [31:0] d_next;
  v2k_norm u_norm (
    .sum     (s2_sum),
    .e_max   (s2_e_max),
    .nan     (s2_nan),
    .pos_inf (s2_pos),
    .neg_inf (s2_neg),
    .d       (d_next)
  );

  always @(posedge clk) begin
    if (advance) d <= d_next;
  end
endmodule
