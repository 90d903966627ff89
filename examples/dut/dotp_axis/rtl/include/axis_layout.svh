// axis_layout.svh: field layout of dotp_axis's AXI-Stream words.
// SPDX-License-Identifier: MIT
//
// s_axis_tdata (320 bits, 40 bytes):
//   [ 31:  0]  c      f32 accumulator
//   [159: 32]  a      8 x bf16, element k in [32 + 16k +: 16]
//   [287:160]  b      8 x bf16, element k in [160 + 16k +: 16]
//   [319:288]  reserved (ignored; pads the word to a multiple of 32 bits)
// m_axis_tdata (32 bits): d, f32.
`ifndef AXIS_LAYOUT_SVH
`define AXIS_LAYOUT_SVH

`define AXIS_K          8
`define AXIS_EL_BITS    16
`define AXIS_C_OFFSET   0
`define AXIS_A_OFFSET   32
`define AXIS_B_OFFSET   160
`define AXIS_IN_BITS    320
`define AXIS_OUT_BITS   32

`endif  // AXIS_LAYOUT_SVH
