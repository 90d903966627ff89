// dpi_dut.sv: the test design of the DPI example (examples/dpi/): an 8-term f16 fused dot product
// d = c + a . b matching ampere HMMA.1688.F32 bit for bit (f16 x f16 + f32 -> f32, FDA, F = 24, RZ),
// behind valid/ready, latency 3.  The datapath is examples/dut/dotp_v2k (used as it is); this wrapper
// adds one planted fault, off unless plant_fault is high: the lowest bit of d is flipped on negative
// finite results whose three lowest bits are zero (about one result in sixteen), the kind of
// corner-only rounding bug a directed test misses and a scoreboard against golden finds.
module dpi_dut #(
  parameter int K = 8
) (
  input  logic            clk,
  input  logic            rst,
  input  logic            plant_fault,
  input  logic            in_valid,
  output logic            in_ready,
  input  logic [16*K-1:0] a,
  input  logic [16*K-1:0] b,
  input  logic [31:0]     c,
  output logic            out_valid,
  input  logic            out_ready,
  output logic [31:0]     d
);
  logic [31:0] d_core;

  dotp_v2k #(.K(K)) u_core (
    .clk, .rst, .in_valid, .in_ready, .a, .b, .c, .out_valid, .out_ready, .d(d_core)
  );

  wire corner = d_core[31] && d_core[30:23] != 8'hff && d_core[2:0] == 3'b000;
  assign d = (plant_fault && corner) ? d_core ^ 32'd1 : d_core;
endmodule
