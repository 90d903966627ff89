// dotp_en.sv: a 4-term fused dot product with a fixed latency and a global enable (stall) pin.
// SPDX-License-Identifier: MIT
//
// Matches ampere HMMA.1684.F32.TF32 (tf32 x tf32 + f32 -> f32, FDA, F=24, e_zero=-132, RZ).
// One port per element (a_0 .. a_3, b_0 .. b_3), each a 32-bit word whose low 13 bits the
// TF32 datapath ignores.  The pipeline advances on a clock edge where en is 1; a vector taken
// at enabled edge t has its result on d after enabled edge t + LATENCY - 1 (LATENCY = 4).
// Reset is active high and synchronous.
//
// PLANT_FLUSH_SUBNORMAL (in fda_normalize.sv): subnormal results become +0.
module dotp_en #(
  parameter fda_pkg::fmt_e FMT = fda_pkg::FMT_TF32
) (
  input  logic        clk,
  input  logic        rst,
  input  logic        en,
  input  logic [31:0] a_0,
  input  logic [31:0] a_1,
  input  logic [31:0] a_2,
  input  logic [31:0] a_3,
  input  logic [31:0] b_0,
  input  logic [31:0] b_1,
  input  logic [31:0] b_2,
  input  logic [31:0] b_3,
  input  logic [31:0] c,
  output logic [31:0] d
);
  localparam int unsigned K = 4;

  logic [31:0] a_el [K];
  logic [31:0] b_el [K];

  assign a_el = '{a_0, a_1, a_2, a_3};
  assign b_el = '{b_0, b_1, b_2, b_3};

  // The core's valid flags are not needed here: the latency is fixed and declared.
  /* verilator lint_off UNUSEDSIGNAL */
  logic unused_valid;
  /* verilator lint_on UNUSEDSIGNAL */

  fda_core #(.K(K), .EB(32)) u_core (
    .clk       (clk),
    .rst_n     (!rst),
    .en        (en),
    .in_valid  (1'b1),
    .fmt       (FMT),
    .rm        (fda_pkg::RM_RZ),
    .a         (a_el),
    .b         (b_el),
    .c         (c),
    .out_valid (unused_valid),
    .d         (d)
  );

endmodule
