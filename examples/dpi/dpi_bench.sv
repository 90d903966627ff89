// dpi_bench.sv: a plain SystemVerilog bench in which the test design (rtl/dpi_dut.sv) checks itself
// against the golden model through DPI-C (golden_c/sv/mma_golden_pkg.sv): random operands in, every
// result compared by mma_golden_scoreboard, random stalls on both sides.
// Plusargs: +n=<vectors> (default 2000), +seed=<int> (default 1), +fault (plant the design's fault),
// +arch=, +instr= (default ampere HMMA.1688.F32: the instruction the design matches; another name shows
// the scoreboard's refusal of an unknown one, or of a k that is not the design's).
// Exit status: 0 when every result matched golden, non-zero ($fatal) otherwise.
module dpi_bench;
  import mma_golden_pkg::*;

  localparam int K = 8;
  string ARCH = "ampere";
  string INSTR = "HMMA.1688.F32";

  logic            clk = 0;
  logic            rst = 1;
  logic            plant_fault = 0;
  logic            in_valid = 0;
  logic            in_ready;
  logic [16*K-1:0] a = '0, b = '0;
  logic [31:0]     c = '0;
  logic            out_valid;
  logic            out_ready = 0;
  logic [31:0]     d;

  dpi_dut #(.K(K)) dut (.*);

  always #5 clk = ~clk;

  typedef struct {
    logic [16*K-1:0] a, b;
    logic [31:0]     c;
    int              index;
  } vec_t;

  vec_t                 sent[$];
  mma_golden_scoreboard sb;
  int                   n = 2000, seed = 1, issued = 0, received = 0;

  // an f16 operand: random bits now and then (NaN, inf, subnormal), else a normal number near 1
  // with an exponent spread of 2^-6 .. 2^6 so products cancel and round
  function automatic logic [15:0] rand_f16();
    int unsigned r = $urandom_range(99);
    if (r < 10) return 16'($urandom);
    if (r < 15) return {1'($urandom), 5'd0, 10'($urandom)};            // subnormal or zero
    return {1'($urandom), 5'($urandom_range(21, 9)), 10'($urandom)};
  endfunction

  function automatic logic [31:0] rand_f32();
    int unsigned r = $urandom_range(99);
    if (r < 10) return $urandom;
    if (r < 15) return {1'($urandom), 31'd0};                             // +-0
    return {1'($urandom), 8'($urandom_range(133, 121)), 23'($urandom)};
  endfunction

  // the words the scoreboard reads: element i of a packed bus in the low bits of word i
  function automatic mma_golden_words_t unpack16(logic [16*K-1:0] bus);
    mma_golden_words_t w = '{default: 0};
    for (int i = 0; i < K; i++) w[i] = 64'(bus[16*i +: 16]);
    return w;
  endfunction

  initial begin
    void'($value$plusargs("n=%d", n));
    void'($value$plusargs("seed=%d", seed));
    void'($value$plusargs("arch=%s", ARCH));
    void'($value$plusargs("instr=%s", INSTR));
    plant_fault = $test$plusargs("fault");
    void'($urandom(seed));
    sb = new(ARCH, INSTR);
    if (sb.k != K)
      $fatal(1, "%s %s has k = %0d, the design K = %0d", ARCH, INSTR, sb.k, K);
    $display("dpi_bench: %s %s (m%0d n%0d k%0d) through DPI-C, %0d vectors, seed %0d, planted fault %0s",
             ARCH, INSTR, sb.m, sb.n, sb.k, n, seed, plant_fault ? "on" : "off");
    repeat (4) @(posedge clk);
    @(negedge clk) rst = 0;                 // away from the clock edge: no race with the clocked blocks
  end

  // driver: a new vector whenever the bus is free, with random gaps; out_ready random (backpressure)
  always @(posedge clk) begin
    logic taken;
    if (!rst) begin
      taken = in_valid && in_ready;
      if (taken) begin
        sent.push_back('{a: a, b: b, c: c, index: issued});
        issued++;
      end
      if (!in_valid || taken) begin
        if (issued < n && $urandom_range(3) != 0) begin
          for (int i = 0; i < K; i++) begin
            a[16*i +: 16] <= rand_f16();
            b[16*i +: 16] <= rand_f16();
          end
          c <= rand_f32();
          in_valid <= 1;
        end else
          in_valid <= 0;
      end
      out_ready <= $urandom_range(4) != 0;
    end
  end

  // monitor: every result taken is checked against golden, in order
  always @(posedge clk) begin
    if (!rst && out_valid && out_ready) begin
      vec_t v;
      if (sent.size() == 0)
        $fatal(1, "dpi_bench: a result with no vector sent");
      v = sent.pop_front();
      void'(sb.check(unpack16(v.a), unpack16(v.b), 64'(v.c), 64'(d), $sformatf("vector %0d", v.index)));
      received++;
      if (received == n) begin
        sb.report();
        if (!sb.passed())
          $fatal(1, "dpi_bench: %0d of %0d results differ from golden", sb.mismatches, sb.checked);
        $finish;
      end
    end
  end

  initial begin
    repeat (20 * n + 1000) @(posedge clk);
    $fatal(1, "dpi_bench: timed out, %0d of %0d results after %0d sent", received, n, issued);
  end
endmodule
