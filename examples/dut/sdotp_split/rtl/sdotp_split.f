// sdotp_split.f: the sources of sdotp_split, package first (paths relative to this folder).
sdotp_split_pkg.sv
sdotp_split.sv
