// A design that misbehaves on purpose, the way the plusarg +MODE=N says (one build serves every mode):
//   0  never answers: out_valid stays low (the cycle watchdog names it)
//   1  hangs inside one evaluation: an always_ff block loops without end on its first input
//      (a xorshift that never reaches zero), so simulated time stops (the wall-clock limit names it)
//   2  a combinational loop that never settles: osc = ~osc while an input is offered
//   3  answers every cycle, inputs or not: more outputs than inputs
// Ports as volta HMMA.884.F16.F16 takes them; described by trouble.toml (tests/cosim/test_dut_robustness.py,
// tests/probe/test_probe_robustness.py).
`default_nettype none
module trouble (
    input  wire        clk,
    input  wire        rst,
    input  wire [63:0] a,
    input  wire [63:0] b,
    input  wire [15:0] c,
    input  wire        in_valid,
    output wire        in_ready,
    output logic [15:0] d,
    output logic       out_valid,
    input  wire        out_ready
);
    int mode = 0;
    initial if (!$value$plusargs("MODE=%d", mode)) mode = 0;

    wire osc;
    assign osc = (mode == 2 && in_valid) ? ~osc : 1'b0;

    logic [63:0] state;
    logic [15:0] spins;
    assign in_ready = 1'b1;

    always_ff @(posedge clk) begin
        if (rst) begin
            out_valid <= 1'b0;
            d <= '0;
        end else begin
            if (mode == 1 && in_valid) begin
                state = {a[62:0] ^ b[62:0], 1'b1};
                spins = c;
                while (state != 64'd0) begin            // xorshift64: never zero from a non-zero state
                    state = state ^ (state << 13);
                    state = state ^ (state >> 7);
                    state = state ^ (state << 17);
                    spins = spins ^ state[15:0];
                end
                d <= spins;
            end else begin
                d <= c ^ {15'd0, osc};
            end
            out_valid <= mode == 3;
        end
    end
endmodule
`default_nettype wire
