// files.f: sources of dotp_mf (paths relative to this file's folder).
// The shared datapath comes from its own list; DOTP_MF_OUTPUT_REG adds the output register
// stage (latency 5 instead of 4) that this unit is described with in unit.toml.
-f ../../common/rtl/common.f
+define+DOTP_MF_OUTPUT_REG
dotp_mf.sv
