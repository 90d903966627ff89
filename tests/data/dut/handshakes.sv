// The exported unit (module mma_unit, Amaranth's stream ports) behind each handshake the DUT path
// drives, as other teams' units present them (tests/cosim/test_dut.py::test_every_handshake).
`default_nettype none

// AXI-Stream: operands are fields of s_axis_tdata, the result is m_axis_tdata
module hs_axis (
    input  wire aclk, input wire aresetn,
    input  wire s_axis_tvalid, output wire s_axis_tready, input wire [143:0] s_axis_tdata,
    output wire m_axis_tvalid, input wire m_axis_tready, output wire [15:0] m_axis_tdata
);
    mma_unit u (.clk(aclk), .rst(!aresetn), .i__payload(s_axis_tdata), .i__valid(s_axis_tvalid),
                .i__ready(s_axis_tready), .o__payload(m_axis_tdata), .o__valid(m_axis_tvalid),
                .o__ready(m_axis_tready));
endmodule

// valid in, valid out, no backpressure; operands one port per element
module hs_valid_only (
    input  wire clk, input wire rst,
    input  wire in_valid,
    input  wire [15:0] a0, input wire [15:0] a1, input wire [15:0] a2, input wire [15:0] a3,
    input  wire [63:0] b, input wire [15:0] c,
    output wire out_valid, output wire [15:0] d
);
    wire unused_ready;
    mma_unit u (.clk(clk), .rst(rst), .i__payload({c, b, a3, a2, a1, a0}), .i__valid(in_valid),
                .i__ready(unused_ready), .o__payload(d), .o__valid(out_valid), .o__ready(1'b1));
endmodule

// fixed latency with a global enable: the pipeline advances when en is 1 (b packed msb first)
module hs_enable (
    input  wire clk, input wire rst, input wire en,
    input  wire [63:0] a, input wire [63:0] b_msb_first, input wire [15:0] c,
    output wire [15:0] d
);
    wire unused_ready, unused_valid;
    wire [63:0] b = {b_msb_first[15:0], b_msb_first[31:16], b_msb_first[47:32], b_msb_first[63:48]};
    mma_unit u (.clk(clk), .rst(rst), .i__payload({c, b, a}), .i__valid(1'b1), .i__ready(unused_ready),
                .o__payload(d), .o__valid(unused_valid), .o__ready(en));
endmodule

// fixed latency, no handshake: a new vector every cycle; active-low reset
module hs_fixed (
    input  wire clk, input wire rst_n,
    input  wire [63:0] a, input wire [63:0] b, input wire [15:0] c,
    output wire [15:0] d
);
    wire unused_ready, unused_valid;
    mma_unit u (.clk(clk), .rst(!rst_n), .i__payload({c, b, a}), .i__valid(1'b1), .i__ready(unused_ready),
                .o__payload(d), .o__valid(unused_valid), .o__ready(1'b1));
endmodule
`default_nettype wire
