// fda_defs.svh: build-time constants of the fused dot-add datapath (FDA, f32 result).
// SPDX-License-Identifier: MIT
//
// Override with +define+ on the command line; the planted faults of examples/dut/README.md
// are switched on here too (each PLANT_* define is off in the clean designs).
`ifndef FDA_DEFS_SVH
`define FDA_DEFS_SVH

// Fraction bits kept below 2^e_max when the products and c are aligned (truncated).
`ifndef FDA_F
`define FDA_F 24
`endif

// Exponent a zero product or a zero c takes in the maximum (Ampere, f32 result).
`ifndef FDA_E_ZERO
`define FDA_E_ZERO -132
`endif

// NaN result pattern.  PLANT_NAN_ENCODING: the IEEE "quiet NaN" a textbook FPU gives,
// not the all-ones payload of the target.
`ifdef PLANT_NAN_ENCODING
`define FDA_NAN_BITS 32'h7fc0_0000
`else
`define FDA_NAN_BITS 32'h7fff_ffff
`endif

// Extra guard bits of the fixed-point accumulator above what K+1 terms can reach.
// PLANT_ACC_WRAP: four bits short, so a large sum wraps around (two's complement).
`ifdef PLANT_ACC_WRAP
`define FDA_ACC_SHORT 4
`else
`define FDA_ACC_SHORT 0
`endif

`endif  // FDA_DEFS_SVH
