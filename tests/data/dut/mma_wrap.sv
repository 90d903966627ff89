// A valid/ready wrapper around an exported unit (module mma_unit, ports as Amaranth names them) with
// faults planted at run time by the plusarg +PLANT=N, so that one Verilator build serves every
// fault test (tests/cosim/test_dut.py):
//   0  none: the wrapper is a wire
//   1  a result dropped under backpressure (every 8th cycle the output waits, the unit's result is taken)
//   2  a result duplicated (every 97th result is presented twice)
//   3  an output register that is never reset (X after reset), XORed into the result
//   4  a design that never answers (out_valid stuck low)
//   5  a wrong value: every result's lowest bit inverted
`default_nettype none
module mma_wrap #(parameter int IN_W = 144, parameter int OUT_W = 16) (
    input  wire              clk,
    input  wire              rst,
    input  wire [IN_W-1:0]   i__payload,
    input  wire              i__valid,
    output wire              i__ready,
    output wire [OUT_W-1:0]  o__payload,
    output wire              o__valid,
    input  wire              o__ready
);
    int plant;
    initial if (!$value$plusargs("PLANT=%d", plant)) plant = 0;

    wire [OUT_W-1:0] u_payload;
    wire u_valid;
    logic u_ready;
    mma_unit u (.clk(clk), .rst(rst), .i__payload(i__payload), .i__valid(i__valid), .i__ready(i__ready),
                .o__payload(u_payload), .o__valid(u_valid), .o__ready(u_ready));

    logic [7:0] stalled;            // cycles the output has waited, wraps
    logic [7:0] count;              // results delivered, wraps at 97
    logic dup;                      // presenting a copy of the last result
    logic [OUT_W-1:0] last;
    logic [OUT_W-1:0] junk;         // plant 3: never reset, never written
    always_ff @(posedge clk) begin
        if (rst) begin
            stalled <= '0; count <= '0; dup <= 1'b0; last <= '0;
        end else begin
            if (u_valid && !o__ready) stalled <= stalled + 1'b1;
            if (o__valid && o__ready) begin
                count <= (count == 8'd96) ? 8'd0 : count + 1'b1;
                last <= o__payload;
                dup <= (plant == 2) && !dup && count == 8'd96;
            end
        end
    end
    wire drop = (plant == 1) && u_valid && !o__ready && stalled[2:0] == 3'd7;
    always_comb u_ready = dup ? 1'b0 : (o__ready || drop);
    assign o__valid = (plant == 4) ? 1'b0 : dup ? 1'b1 : u_valid;
    assign o__payload = dup ? last : (u_payload ^ ((plant == 3) ? junk : '0) ^ OUT_W'(plant == 5));
endmodule
`default_nettype wire
