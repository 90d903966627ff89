// dotp_axis.sv: an 8-term bf16 fused dot product between two AXI-Stream interfaces.
// SPDX-License-Identifier: MIT
//
// Matches ampere HMMA.1688.F32.BF16 (bf16 x bf16 + f32 -> f32, FDA, F=24, e_zero=-132, RZ).
// One transfer on s_axis carries a whole dot-add (layout: include/axis_layout.svh); one
// transfer on m_axis returns d.  The datapath pipeline feeds an output register; the pipeline
// (and s_axis_tready) advances while that register is empty or being emptied.  Latency 5.
//
// PLANT_DUPLICATE_RESULT: the output register's valid is cleared only by a new result, so a
// result taken while no new one arrives is offered (and taken) again.
`include "axis_layout.svh"

module dotp_axis (
  input  logic                      aclk,
  input  logic                      aresetn,
  input  logic                      s_axis_tvalid,
  output logic                      s_axis_tready,
  input  logic [`AXIS_IN_BITS-1:0]  s_axis_tdata,
  output logic                      m_axis_tvalid,
  input  logic                      m_axis_tready,
  output logic [`AXIS_OUT_BITS-1:0] m_axis_tdata
);
  import fda_pkg::*;

  localparam int unsigned K = `AXIS_K;
  localparam int unsigned W = `AXIS_EL_BITS;

  logic [W-1:0] a_el [K];
  logic [W-1:0] b_el [K];
  logic         advance;
  logic         core_valid;
  logic [31:0]  core_d;

  always_comb begin
    for (int k = 0; k < K; k++) begin
      a_el[k] = s_axis_tdata[`AXIS_A_OFFSET + W*k +: W];
      b_el[k] = s_axis_tdata[`AXIS_B_OFFSET + W*k +: W];
    end
  end

  // The reserved top word of s_axis_tdata is ignored by design.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [31:0] reserved;
  assign reserved = s_axis_tdata[`AXIS_IN_BITS-1 -: 32];
  /* verilator lint_on UNUSEDSIGNAL */

  assign advance       = !m_axis_tvalid || m_axis_tready;
  assign s_axis_tready = advance;

  fda_core #(.K(K), .EB(W)) u_core (
    .clk       (aclk),
    .rst_n     (aresetn),
    .en        (advance),
    .in_valid  (s_axis_tvalid),
    .fmt       (FMT_BF16),
    .rm        (RM_RZ),
    .a         (a_el),
    .b         (b_el),
    .c         (s_axis_tdata[`AXIS_C_OFFSET +: 32]),
    .out_valid (core_valid),
    .d         (core_d)
  );

  always_ff @(posedge aclk) begin
    if (!aresetn) begin
      m_axis_tvalid <= 1'b0;
    end else if (advance) begin
`ifdef PLANT_DUPLICATE_RESULT
      if (core_valid) m_axis_tvalid <= 1'b1;
`else
      m_axis_tvalid <= core_valid;
`endif
    end
  end

  always_ff @(posedge aclk) begin
    if (advance && core_valid) m_axis_tdata <= core_d;
  end

endmodule
