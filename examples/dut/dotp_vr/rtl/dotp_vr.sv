// dotp_vr.sv: an 8-term fused dot product d = c + a . b behind valid/ready streams.
// SPDX-License-Identifier: MIT
//
// Matches ampere HMMA.1688.F32 (f16 x f16 + f32 -> f32, FDA, F=24, e_zero=-132, RZ).
// a and b are packed buses, element k in bits [16k +: 16].  The whole pipeline stalls while
// a result waits at the output (out_valid && !out_ready); in_ready is the pipeline's enable.
//
// PLANT_DROP_ON_STALL: the pipeline ignores out_ready, so a result not taken is overwritten.
module dotp_vr #(
  parameter int unsigned K = 8
) (
  input  logic            clk,
  input  logic            rst_n,
  input  logic            in_valid,
  output logic            in_ready,
  input  logic [16*K-1:0] a,
  input  logic [16*K-1:0] b,
  input  logic [31:0]     c,
  output logic            out_valid,
  input  logic            out_ready,
  output logic [31:0]     d
);
  import fda_pkg::*;

  logic [15:0] a_el [K];
  logic [15:0] b_el [K];
  logic        advance;

  always_comb begin
    for (int k = 0; k < K; k++) begin
      a_el[k] = a[16*k +: 16];
      b_el[k] = b[16*k +: 16];
    end
  end

`ifdef PLANT_DROP_ON_STALL
  assign advance = 1'b1;
`else
  assign advance = !out_valid || out_ready;
`endif
  assign in_ready = advance;

  fda_core #(.K(K), .EB(16)) u_core (
    .clk       (clk),
    .rst_n     (rst_n),
    .en        (advance),
    .in_valid  (in_valid),
    .fmt       (FMT_F16),
    .rm        (RM_RZ),
    .a         (a_el),
    .b         (b_el),
    .c         (c),
    .out_valid (out_valid),
    .d         (d)
  );

endmodule
