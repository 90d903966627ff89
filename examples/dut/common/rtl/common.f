// common.f: the shared FDA datapath (paths relative to this file's folder).
+incdir+include
fda_pkg.sv
fda_normalize.sv
fda_core.sv
