// mma_golden_pkg.sv: the C golden library (golden_c/) inside a SystemVerilog testbench, through DPI-C.
//
// Two layers, no UVM dependency:
//   * the DPI-C imports (mma_golden_sv_*, the glue in mma_golden_dpi.c over mma_golden.h): look an
//     instruction up by architecture and name (or make one of your own from a spec at run time), read
//     its shape, compute one dot-add d = c + sum_k a[k] * b[k], or the whole instruction on tiles,
//     D = C + A B, bit for bit as golden does;
//   * mma_golden_scoreboard, a class: expected result from golden, compared with the design's (one
//     dot-add with check(), a whole tile with check_tile()), mismatches counted and printed with their
//     vector or element, a one-line pass/fail summary at the end.
//
// Operands are bit patterns, one per longint unsigned word, element 0 first (an f16 in the low 16
// bits of its word, an f32 in the low 32, ...).  The imports take them as open arrays (a[]), the
// standard DPI form every simulator reads through svdpi.h; Verilator 5 passes fixed-size unpacked
// arrays to an open array but not dynamic arrays or queues ("not yet supported"), so the class
// takes mma_golden_words_t, a fixed array of MMA_GOLDEN_MAX_K words of which the first k are read, and
// tiles as mma_golden_tile_t, MMA_GOLDEN_MAX_TILE words row-major: A [m][k], B [k][n], C and D [m][n],
// block scales scale_A [m][k / block] and scale_B [k / block][n].
//
// From UVM: keep one mma_golden_scoreboard in your uvm_scoreboard (built in build_phase), call
// check() from the analysis imp's write() with the transaction's operands and result, and call
// report() (or read mismatches) in report_phase / check_phase; the class prints with $display, so
// route through `uvm_error yourself if you want UVM's counts (set verbose = 0 and read last_message).
package mma_golden_pkg;

  parameter int MMA_GOLDEN_MAX_K = 64;          // the largest k in the catalog
  parameter int MMA_GOLDEN_MAX_TILE = 32768;    // the largest of m*k, k*n and m*n in the catalog
  typedef longint unsigned mma_golden_words_t[MMA_GOLDEN_MAX_K];
  typedef longint unsigned mma_golden_tile_t[MMA_GOLDEN_MAX_TILE];

  // handle of a catalog instruction (null: not found; mma_golden_sv_last_error says why)
  import "DPI-C" function chandle mma_golden_sv_lookup(input string arch, input string name);
  // an instruction of your own, made at run time from a spec in golden.custom's grammar
  // ("k=16,a=e4m3,c=f32,base=FDA,F=25,e_zero=-133"; no rebuild), or null (mma_golden_sv_last_error)
  import "DPI-C" function chandle mma_golden_sv_from_spec(input string spec);
  import "DPI-C" function string  mma_golden_sv_last_error();
  import "DPI-C" function int     mma_golden_sv_m(input chandle ins);
  import "DPI-C" function int     mma_golden_sv_n(input chandle ins);
  import "DPI-C" function int     mma_golden_sv_k(input chandle ins);
  import "DPI-C" function int     mma_golden_sv_block(input chandle ins);   // 0: not block-scaled
  // one dot-add: a, b: k words; scale_a, scale_b: k / block words (read only when block-scaled);
  // returns 0, or non-zero with the reason in mma_golden_sv_last_error()
  import "DPI-C" function int     mma_golden_sv_dot_add(input chandle ins,
                                                        input longint unsigned a[], input longint unsigned b[],
                                                        input longint unsigned c,
                                                        input longint unsigned scale_a[],
                                                        input longint unsigned scale_b[],
                                                        output longint unsigned d);
  // the whole instruction: D = C + A B on row-major tiles (A: m*k words, B: k*n, C and D: m*n; scale_A:
  // m*(k/block), scale_B: (k/block)*n, read only when block-scaled); 0, or non-zero with the reason in
  // mma_golden_sv_last_error()
  import "DPI-C" function int     mma_golden_sv_mma(input chandle ins,
                                                    input longint unsigned A[], input longint unsigned B[],
                                                    input longint unsigned C[],
                                                    input longint unsigned scale_A[],
                                                    input longint unsigned scale_B[],
                                                    output longint unsigned D[]);

  class mma_golden_scoreboard;
    string       arch, name;
    chandle      ins;
    int          m, n, k, block;
    int unsigned checked, mismatches;   // results (dot-adds and tile elements) checked, and those that differ
    int unsigned tiles, tile_mismatches;  // tiles checked, and those with an element that differs
    int unsigned max_printed = 10;  // mismatches printed in full; the rest are counted
    bit          verbose = 1;       // 0: print nothing, read last_message and the counts instead
    string       last_message;

    // arch "custom": instr_name is a spec, made at run time (mma_golden_sv_from_spec)
    function new(string arch_name, string instr_name);
      arch = arch_name;
      name = instr_name;
      ins = arch == "custom" ? mma_golden_sv_from_spec(name) : mma_golden_sv_lookup(arch, name);
      if (ins == null)
        $fatal(1, "mma_golden_scoreboard: %s %s: %s", arch, name, mma_golden_sv_last_error());
      m = mma_golden_sv_m(ins);
      n = mma_golden_sv_n(ins);
      k = mma_golden_sv_k(ins);
      block = mma_golden_sv_block(ins);
      if (k > MMA_GOLDEN_MAX_K)
        $fatal(1, "mma_golden_scoreboard: %s %s: k = %0d exceeds MMA_GOLDEN_MAX_K = %0d", arch, name, k,
               MMA_GOLDEN_MAX_K);
      if (m * k > MMA_GOLDEN_MAX_TILE || k * n > MMA_GOLDEN_MAX_TILE || m * n > MMA_GOLDEN_MAX_TILE)
        $fatal(1, "mma_golden_scoreboard: %s %s: a %0dx%0dx%0d tile exceeds MMA_GOLDEN_MAX_TILE = %0d", arch,
               name, m, n, k, MMA_GOLDEN_MAX_TILE);
    endfunction

    // golden's d for one dot-add (scales ignored unless the instruction is block-scaled)
    function longint unsigned expected(mma_golden_words_t a, mma_golden_words_t b, longint unsigned c,
                                       mma_golden_words_t scale_a = '{default: 0},
                                       mma_golden_words_t scale_b = '{default: 0});
      longint unsigned d;
      if (mma_golden_sv_dot_add(ins, a, b, c, scale_a, scale_b, d) != 0)
        $fatal(1, "mma_golden_scoreboard: %s %s: %s", arch, name, mma_golden_sv_last_error());
      return d;
    endfunction

    function string words(mma_golden_words_t w, int count);
      string s = "[";
      for (int i = 0; i < count; i++) begin
        if (i > 0) s = {s, " "};
        s = {s, $sformatf("%0h", w[i])};
      end
      return {s, "]"};
    endfunction

    // compare the design's d with golden's; 1 when equal.  tag names the vector in the message.
    function bit check(mma_golden_words_t a, mma_golden_words_t b, longint unsigned c, longint unsigned got,
                       string tag = "", mma_golden_words_t scale_a = '{default: 0},
                       mma_golden_words_t scale_b = '{default: 0});
      longint unsigned exp_d = expected(a, b, c, scale_a, scale_b);
      string scales;
      checked++;
      if (got == exp_d)
        return 1;
      mismatches++;
      scales = "";
      if (block > 0)
        scales = $sformatf(" scale_a=%s scale_b=%s", words(scale_a, k / block), words(scale_b, k / block));
      last_message = $sformatf("MISMATCH %s %s %s: a=%s b=%s c=%0h%s got %0h expected %0h", arch, name, tag,
                               words(a, k), words(b, k), c, scales, got, exp_d);
      if (verbose && mismatches <= max_printed)
        $display("%s", last_message);
      return 0;
    endfunction

    // golden's D = C + A B for one whole instruction (tiles row-major; scales read only when block-scaled)
    function void expected_tile(mma_golden_tile_t A, mma_golden_tile_t B, mma_golden_tile_t C,
                                output mma_golden_tile_t D, input mma_golden_tile_t scale_A = '{default: 0},
                                input mma_golden_tile_t scale_B = '{default: 0});
      if (mma_golden_sv_mma(ins, A, B, C, scale_A, scale_B, D) != 0)
        $fatal(1, "mma_golden_scoreboard: %s %s: %s", arch, name, mma_golden_sv_last_error());
    endfunction

    // compare the design's tile D (m*n words, row-major) with golden's; 1 when every element is equal.
    // Each element counts as a result checked; a differing one is printed as D[i][j] with tag.
    function bit check_tile(mma_golden_tile_t A, mma_golden_tile_t B, mma_golden_tile_t C, mma_golden_tile_t got,
                            string tag = "", mma_golden_tile_t scale_A = '{default: 0},
                            mma_golden_tile_t scale_B = '{default: 0});
      mma_golden_tile_t exp_d;
      int unsigned bad = 0;
      expected_tile(A, B, C, exp_d, scale_A, scale_B);
      tiles++;
      for (int i = 0; i < m * n; i++) begin
        checked++;
        if (got[i] == exp_d[i])
          continue;
        mismatches++;
        bad++;
        last_message = $sformatf("MISMATCH %s %s %s D[%0d][%0d]: got %0h expected %0h", arch, name, tag, i / n,
                                 i % n, got[i], exp_d[i]);
        if (verbose && mismatches <= max_printed)
          $display("%s", last_message);
      end
      if (bad > 0)
        tile_mismatches++;
      return bad == 0;
    endfunction

    function bit passed();
      return checked > 0 && mismatches == 0;
    endfunction

    // the summary line: "mma_golden_scoreboard ARCH NAME: N checked, M mismatches: PASS|FAIL"
    function string summary();
      return $sformatf("mma_golden_scoreboard %s %s: %0d checked, %0d mismatches: %s", arch, name, checked,
                       mismatches, passed() ? "PASS" : "FAIL");
    endfunction

    function void report();
      $display("%s", summary());
    endfunction
  endclass

endpackage
