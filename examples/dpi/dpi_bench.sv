// dpi_bench.sv: a plain SystemVerilog bench in which the test design (rtl/dpi_dut.sv) checks itself
// against the golden model through DPI-C (golden_c/sv/mma_golden_pkg.sv): random operands in, every
// result compared by mma_golden_scoreboard, random stalls on both sides.  Then whole instructions: a
// few random m x n x k tiles (A, B, C) whose m*n dot-adds the design computes one by one, each tile's
// D checked at once against golden's mma (check_tile, the mma_golden_sv_mma import).
// Plusargs: +n=<vectors> (default 2000), +tiles=<tiles> (default 2, at most MAX_TILES), +seed=<int>
// (default 1), +fault (plant the design's fault),
// +arch=, +instr= (default ampere HMMA.1688.F32: the instruction the design matches; another name shows
// the scoreboard's refusal of an unknown one, or of a k that is not the design's).
// Exit status: 0 when every result matched golden, non-zero ($fatal) otherwise.
module dpi_bench;
  import mma_golden_pkg::*;

  localparam int K = 8;
  localparam int MAX_TILES = 4;
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

  vec_t                 sent[$], tile_vecs[$];
  mma_golden_scoreboard sb;
  int                   n = 2000, tiles = 2, seed = 1, issued = 0, received = 0, total;
  // tile t: its operands (row-major A [m][k], B [k][n], C [m][n]), the design's D as it comes, and
  // how many of its elements have come
  mma_golden_tile_t     TA[MAX_TILES], TB[MAX_TILES], TC[MAX_TILES], TD[MAX_TILES];
  int                   tile_done[MAX_TILES];

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

  // tile t's operands, and its m*n dot-adds (row i of A, column j of B, C[i][j]) queued for the driver
  task automatic make_tile(int t);
    for (int i = 0; i < sb.m * sb.k; i++) TA[t][i] = 64'(rand_f16());
    for (int i = 0; i < sb.k * sb.n; i++) TB[t][i] = 64'(rand_f16());
    for (int i = 0; i < sb.m * sb.n; i++) TC[t][i] = 64'(rand_f32());
    for (int i = 0; i < sb.m; i++)
      for (int j = 0; j < sb.n; j++) begin
        vec_t v;
        for (int x = 0; x < K; x++) begin
          v.a[16*x +: 16] = TA[t][i * sb.k + x][15:0];
          v.b[16*x +: 16] = TB[t][x * sb.n + j][15:0];
        end
        v.c = TC[t][i * sb.n + j][31:0];
        v.index = n + (t * sb.m + i) * sb.n + j;
        tile_vecs.push_back(v);
      end
  endtask

  initial begin
    void'($value$plusargs("n=%d", n));
    void'($value$plusargs("tiles=%d", tiles));
    void'($value$plusargs("seed=%d", seed));
    void'($value$plusargs("arch=%s", ARCH));
    void'($value$plusargs("instr=%s", INSTR));
    plant_fault = $test$plusargs("fault");
    void'($urandom(seed));
    sb = new(ARCH, INSTR);
    if (sb.k != K)
      $fatal(1, "%s %s has k = %0d, the design K = %0d", ARCH, INSTR, sb.k, K);
    if (tiles < 0 || tiles > MAX_TILES)
      $fatal(1, "dpi_bench: +tiles=%0d; valid: 0 .. %0d", tiles, MAX_TILES);
    for (int t = 0; t < tiles; t++) make_tile(t);
    total = n + tiles * sb.m * sb.n;
    $display("dpi_bench: %s %s (m%0d n%0d k%0d) through DPI-C, %0d vectors and %0d tiles, seed %0d, planted fault %0s",
             ARCH, INSTR, sb.m, sb.n, sb.k, n, tiles, seed, plant_fault ? "on" : "off");
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
        end else if (issued >= n && issued < total && $urandom_range(3) != 0) begin
          automatic vec_t v = tile_vecs[issued - n];   // the tiles' dot-adds, in order
          a <= v.a;
          b <= v.b;
          c <= v.c;
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
      if (v.index < n) begin
        void'(sb.check(unpack16(v.a), unpack16(v.b), 64'(v.c), 64'(d), $sformatf("vector %0d", v.index)));
      end else begin                          // an element of a tile: the tile is checked when whole
        automatic int t = (v.index - n) / (sb.m * sb.n);
        TD[t][(v.index - n) % (sb.m * sb.n)] = 64'(d);
        if (++tile_done[t] == sb.m * sb.n)
          void'(sb.check_tile(TA[t], TB[t], TC[t], TD[t], $sformatf("tile %0d", t)));
      end
      received++;
      if (received == total) begin
        $display("dpi_bench: %0d tiles checked whole (mma), %0d with a differing element", sb.tiles,
                 sb.tile_mismatches);
        sb.report();
        if (!sb.passed())
          $fatal(1, "dpi_bench: %0d of %0d results differ from golden", sb.mismatches, sb.checked);
        $finish;
      end
    end
  end

  initial begin
    wait (total > 0);
    repeat (20 * total + 1000) @(posedge clk);
    $fatal(1, "dpi_bench: timed out, %0d of %0d results after %0d sent", received, n, issued);
  end
endmodule
