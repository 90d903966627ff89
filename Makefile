# Set-up contract: a fresh clone needs nothing but `make test` or `make golden`;
# the first use creates .venv and installs the pinned dependencies.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

ARCH  ?= hopper
INSTR ?= HGMMA
N     ?= 100000
SEED  ?= 1

# a variable given on the command line or in the environment (not the default above)
given = $(filter command line environment,$(origin $(1)))
# the variables given are checked before anything runs (tools/make_vars.py has each target's list):
# one the goals do not take is refused in one line (LANES= with DUT=, a misspelt LANE=), not dropped
VARS_REFUSED := $(shell $(PYTHON) tools/make_vars.py $(if $(DUT),1,0) $(MAKECMDGOALS) -- $(MAKEOVERRIDES))
ifneq ($(VARS_REFUSED),)
$(error $(VARS_REFUSED))
endif

.PHONY: help venv test golden bench list clean cosim cosim-all cosim-core coverage lint lint-rtl report probe findings \
        fpga fpga-tools fpga-sim fpga-run fpga-program fpga-selftest fpga-fit fpga-bench fpga-records fpga-records-bg campaign campaign-report campaign-bench \
        formal gemm-example gemm-bench golden-c dpi-example models-example gpu-check

help:
	@echo "make test                         run the test suite (what CI runs)"
	@echo "make cosim ARCH=hopper INSTR=HGMMA [N=] [SEED=] [STALL=] [LANES=] [WAVES=1] [VECTORS=] [BUDGET=] [JOBS=] [PIPELINE=2]"
	@echo "           [UNIT=hw:params=FIELD=VALUE,...]  a design of your own (golden.Params changes, unit and reference)"
	@echo "                                  build the RTL units with Verilator and co-simulate them against golden"
	@echo "                                  (default: ~1 min and >= 100,000 vectors per instruction)"
	@echo "make cosim-all [N=] [JOBS=]       co-simulate every catalog instruction (N default 100000; JOBS at a time)"
	@echo "make cosim-core ARCH=hopper [INSTR=] [N=] [SEED=] [STALL=] [PIPELINE=2]"
	@echo "                                  co-simulate the architecture's opcode-selected tensor core, mixed instructions"
	@echo "make cosim DUT=path/unit.toml [ARCH=] [INSTR=] [N=] [REPORT=results.xml]  your own SV/Verilog unit (docs/your-rtl.md)"
	@echo "make cosim ... SIM=icarus         the same co-simulation under Icarus Verilog (apt-get install iverilog; docs/cosim)"
	@echo "make coverage ARCH=hopper INSTR=HGMMA.64xNx16.F32 [VECTORS=cover] [N=] [SEED=] [DUT=path/unit.toml] [REPORT=results.xml]"
	@echo "              [CLOSED=yes] [COVERAGE_DIR=]  co-simulate and report the cover points the vectors hit: summary line,"
	@echo "                                  holes, an HTML + JSON report (build/coverage/); VECTORS=cover without N: the"
	@echo "                                  fewest vectors that hit every reachable bin; CLOSED=yes: a hole fails the run"
	@echo "make lint                         ruff on the Python tree (pyproject.toml's [tool.ruff]; tests/project/test_ruff.py runs it too)"
	@echo "make lint-rtl [ARCH=] [INSTR=]    verilator --lint-only -Wall on the generated Verilog (default: everything)"
	@echo "make report ARCH=hopper [INSTR=] [SIZE=full|fast|auto|none] [JOBS=]"
	@echo "                                  latency, II and Yosys cell count of each unit (python -m hw report)"
	@echo "make golden ARCH=hopper INSTR=HGMMA [N=] [SEED=] [VECTORS=]"
	@echo "                                  run the golden model on random vectors for matching instructions"
	@echo "make list [ARCH=] [INSTR=]        list catalog instructions"
	@echo "make probe ARCH=hopper INSTR=HGMMA [DEVICE=golden|rtl|torch|golden:F=24|fpga:URL] [DUT=path/unit.toml]"
	@echo "                                  the dissection suite: infer each instruction's arithmetic, compare with the catalog"
	@echo "                                  (DUT=: every target of the description, each against its own arithmetic;"
	@echo "                                  BACKEND=, DEVICE='s old name, still works)"
	@echo "ARCH=custom INSTR=k=2,a=f16,c=f32,base=FDA,F=exact,...: an instruction of your own, wherever ARCH/INSTR go (docs/golden.md)"
	@echo "make findings                     the paper's section VI from the probes, with plots (docs/findings/)"
	@echo "make bench                        golden against the reference model on one pinned core (targets, PASS/FAIL), throughput per"
	@echo "                                  algorithm, host cores per board lane, then whole GEMMs on one pinned core"
	@echo "make golden-c [CUSTOM=spec]       build the C golden library (golden_c/, C99, cc) and print its shared object's path"
	@echo "make dpi-example [FAULT=yes] [N=2000] [TILES=2] [SEED=]  the SystemVerilog scoreboard over DPI-C under Verilator,"
	@echo "                                  dot-adds then whole-instruction tiles (docs/dpi.md);"
	@echo "                                  FAULT=yes plants a fault in the test design and passes when the bench catches it"
	@echo "make gemm-example                 a transformer block exactly and on emulated tensor cores (golden.torch)"
	@echo "make models-example               a ResNet-18 and a small GPT under golden.torch.emulate, layer by layer against float64 (docs/models.md)"
	@echo "make gpu-check [OUT=dir]           golden's GPU kernels, every family, against the CPU path (numba-cuda, an NVIDIA GPU; docs/golden.md)"
	@echo "make gemm-bench                   golden.gemm: both routes on one pinned core, multiply-adds per CPU-second, 1024^3 GEMM time"
	@echo "make fpga-sim ARCH=hopper INSTR=HGMMA.64xNx16.F32 [N=] [SEED=] [LANES=] [WAVES=1]   (or DUT=path/unit.toml)"
	@echo "                                  the board top under Verilator, serial pins on TCP, driven by the real driver"
	@echo "make fpga-tools                   install the Yosys releases the FPGA families pin into build/fpga-tools (once; make fpga does it first)"
	@echo "make fpga ARCH= INSTR= [BOARD=ulx3s-85f] [LANES=|max] [MULT=dsp|lut|auto] [CLOCK=MHz] [PIPELINE=3] [ROUTE_TIMEOUT=s] [ROUTER=router2] [PLACER=static] [TMG_RIPUP=yes|no]"
	@echo "                                  bitstream with the open toolchain (YoWASP), utilisation and Fmax report"
	@echo "make fpga-fit ARCH= INSTR= [BOARD=] [MULT=dsp|lut|auto|all]  lanes of the unit that fit, per resource (Yosys only)"
	@echo "make fpga-records [ONLY=pattern] [JOBS=] [UPDATE=1]  rebuild fpga/toolchain/records.toml's builds, flag what moved (hours)"
	@echo "make fpga-records-bg [ONLY=] [JOBS=] [UPDATE=1]  the same in the background, its log in build/fpga-records.log"
	@echo "make fpga-bench [BENCH_UNITS='hopper HGMMA.64xNx16.F32 ...'] [BENCH_CLOCK=75|''] [SECONDS=2] [JOBS=]"
	@echo "                                  board dot-adds/s (lanes x clock) against golden on this host's cores"
	@echo "make fpga-program ARCH= INSTR= [BOARD=ulx3s-85f] [CLOCK=]  load the built bitstream with openFPGALoader"
	@echo "                                  CLOCK: the design clock in MHz (a PLL makes it; default the board's)"
	@echo "make fpga-run PORT=/dev/ttyUSB0 [N=] [ARCH= INSTR=]  random dot-adds on the board (whatever it runs, or check INSTR), scored against golden"
	@echo "make fpga-selftest ARCH= INSTR= BLOCKS= [BLOCK=1024] [SEED=] [KIND=normal|bits] [LANES=] [PORT=] [PLANT=F+1]"
	@echo "                                  the on-board self-test: operands made and results signed on the board,"
	@echo "                                  checked against golden (no PORT: on the simulated board)"
	@echo "make campaign ARCH= INSTR= [N=1000000] [DEVICE=rtl|golden:F=24|gpu|fpga:URL|dut:path/unit.toml] [SEED=] [VECTORS=] [BLOCK=]"
	@echo "              [DB=build/campaign/campaign.sqlite, under MMA_BUILD_DIR when set] [RESUME=1|FRESH=1] [SCHEDULER=tcp://host:8786] [WORKERS=] [COVER_SAMPLE=]"
	@echo "                                  a campaign on dask (embedded cluster, every core), one SQLite row per block"
	@echo "make campaign-report [DB=] [COVER_JSON=] [COVER_HTML=]  the campaign table and coverage of a database, also while it runs"
	@echo "make campaign-bench [WORKERS=1,2,16]  campaign throughput against workers, beside golden's rates"
	@echo "make formal [ARCH=] [INSTR=] [STAGE=round,...|protocol] [NAME=] [PIPELINE=0..3] [TIMEOUT=120] [JOBS=1]"
	@echo "                                  SymbiYosys proofs of each datapath stage at the catalog's widths and of the"
	@echo "                                  stream protocol (python -m formal; docs/formal.md)"
	@echo "PARAMS specs (golden:..., hw:params=...) are one grammar: FIELD=VALUE,... e.g. F=exact,nan_bits=0x7fc00000"
	@echo "                                  (golden.params; fields and words: docs/golden.md)"
	@echo "INSTR with several instructions (a comma list, a family) builds a tensor core of them."
	@echo "ARCH and INSTR take names, aliases, family prefixes, comma lists and all."
	@echo "WAVES=, RESUME=, FRESH= take yes/no words (1, yes, y, true, on, enable; 0, no, off, ...); anything else is refused."
	@echo "MMA_BUILD_DIR=DIR (make or environment): Verilator builds, replay files, lint runs, proofs, board builds and campaign databases go to DIR, not build/."

# the pinned dependencies, then the project itself, editable (its console scripts and the probe's
# plugin backends, fpga:URL): with uv from pip's own package sources, else with pip (the script says why)
$(STAMP): requirements.txt pyproject.toml tools/venv_install.py
	$(PYTHON) -m venv $(VENV)
	$(PY) tools/venv_install.py $(PY)
	touch $(STAMP)

venv: $(STAMP)

# pytest-xdist: one worker per core (at most 4), which keeps the suite, FPGA tests included, within
# 8 minutes on a 2-core machine (docs/verification.md has the measurement); loadgroup keeps the tests
# that run Yosys in one worker (a fresh machine compiles its WebAssembly once)
# Where the environment sets PYTHONDONTWRITEBYTECODE, every process the suite starts (hundreds: the
# CLI tests, cocotb's simulators, campaign workers) would compile the checkout's modules again: they
# are compiled once here (a second or two; unchanged files are skipped).  MMA_SIM_OPT=-O0: the suite's
# cosim builds compile their C++ unoptimised (its simulations are short: the compile is what costs)
test: $(STAMP)
	$(PY) -m compileall -q -j 0 golden hw cosim tb formal probe fpga campaign tests/support >/dev/null
	MMA_SIM_OPT=-O0 $(PY) -m pytest -q -n auto --maxprocesses 4 --dist loadgroup

gemm-example: $(STAMP)
	$(PY) examples/transformer_block.py --size full

models-example: $(STAMP)
	$(PY) examples/models/run.py --rows products

# writes gpu_kernel_check.txt and .json to OUT= (default: the current folder)
gpu-check: $(STAMP)
	OUT=$(or $(OUT),.) PYTHON=$(PY) tools/gpu_check.sh

gemm-bench: $(STAMP)
	$(PY) -m golden gemm-bench --pin

golden: $(STAMP)
	$(PY) -m golden run $(ARCH) $(INSTR) -n $(N) --seed $(SEED) $(if $(VECTORS),--vectors $(VECTORS))

list: $(STAMP)
	$(PY) -m golden list $(if $(call given,ARCH),$(ARCH),all) $(if $(call given,INSTR),$(INSTR),all)

report: $(STAMP)
	$(PY) -m hw report $(ARCH) $(if $(call given,INSTR),$(INSTR)) $(if $(SIZE),--size $(SIZE)) $(if $(JOBS),-j $(JOBS)) $(if $(PIPELINE),--pipeline $(PIPELINE))

# ARCH given without INSTR: every instruction of ARCH (make probe ARCH=cdna1); neither: hopper HGMMA;
# DUT=path/unit.toml: every target of the description (ARCH/INSTR, when given, keep the targets they name)
probe: $(STAMP)
ifdef DUT
	$(PY) -m probe $(if $(call given,ARCH),$(ARCH)) $(if $(call given,INSTR),$(INSTR)) --device dut:$(DUT)
else
	@$(if $(BACKEND),echo "note: BACKEND= is DEVICE= now (DEVICE=$(BACKEND))" >&2,:)
	$(PY) -m probe $(ARCH) $(if $(call given,INSTR),$(INSTR),$(if $(call given,ARCH),,$(INSTR))) $(if $(or $(DEVICE),$(BACKEND)),--device $(or $(DEVICE),$(BACKEND)))
endif

findings: $(STAMP)
	$(PY) -m probe findings --out docs/findings

bench: $(STAMP)
	$(PY) -m golden.bench
	$(PY) -m fpga bench --targets --seconds 0.5
	$(PY) -m golden gemm-bench --pin --big 0

# the C golden library (golden_c/src, golden_spec.h from golden.kernels.spec): rebuilt when a source changes
golden-c: $(STAMP)
	@$(PY) -m golden.clib $(foreach s,$(CUSTOM),--custom '$(s)')

# the DPI-C example (examples/dpi, golden_c/sv): the C library and the bench built (cached by content hash), run
dpi-example: $(STAMP)
	$(PY) examples/dpi/run.py $(if $(FAULT),--fault=$(FAULT)) $(if $(call given,N),-n $(N)) $(if $(call given,TILES),--tiles $(TILES)) --seed $(SEED)

# Options of the co-simulation targets, passed on only when given (make cosim N=... SEED=...).
COSIM_OPTS = --seed $(SEED) $(if $(STALL),--stall $(STALL)) \
             $(if $(LANES),--lanes $(LANES)) $(if $(WAVES),--waves-word $(WAVES)) \
             $(if $(VECTORS),--vectors $(VECTORS)) $(if $(JOBS),--jobs $(JOBS)) $(if $(BUDGET),--budget $(BUDGET)) $(if $(UNIT),--unit $(UNIT)) \
             $(if $(PIPELINE),--pipeline $(PIPELINE)) $(if $(SIM),--simulator $(SIM))

# DUT=path/unit.toml: your own Verilog/SystemVerilog unit (docs/your-rtl.md); ARCH/INSTR filter its targets
DUT_OPTS = --seed $(SEED) $(if $(STALL),--stall $(STALL)) $(if $(BUDGET),--budget $(BUDGET)) \
           $(if $(WAVES),--waves=$(WAVES)) $(if $(REPORT),--report $(REPORT)) $(if $(VECTORS),--vectors $(VECTORS)) \
           $(if $(call given,ARCH),--arch $(ARCH)) $(if $(call given,INSTR),--instr $(INSTR)) \
           $(if $(SIM),--simulator $(SIM))

cosim: $(STAMP)
ifdef DUT
	$(PY) -m cosim.dut run $(DUT) $(if $(call given,N),-n $(N)) $(DUT_OPTS)
else
	$(PY) -m cosim run $(ARCH) $(INSTR) $(if $(call given,N),-n $(N)) $(COSIM_OPTS)
endif

# coverage (cosim.coverage, golden.cover): the run's summary line, every bin's hits and the HTML + JSON report;
# VECTORS=cover without N runs the solved closure (-n closure), CLOSED=yes exits 1 on a hole
COVERAGE_N = $(if $(call given,N),-n $(N),$(if $(filter cover,$(VECTORS)),-n closure))
COVERAGE_OPTS = --seed $(SEED) --coverage-table $(if $(VECTORS),--vectors $(VECTORS)) $(if $(REPORT),--report $(REPORT)) \
                $(if $(CLOSED),--require-closed=$(CLOSED)) $(if $(COVERAGE_DIR),--coverage-dir $(COVERAGE_DIR))

coverage: $(STAMP)
ifdef DUT
	$(PY) -m cosim.dut run $(DUT) $(COVERAGE_N) $(COVERAGE_OPTS) \
	    $(if $(call given,ARCH),--arch $(ARCH)) $(if $(call given,INSTR),--instr $(INSTR))
else
	$(PY) -m cosim run $(ARCH) $(INSTR) $(COVERAGE_N) $(COVERAGE_OPTS)
endif

cosim-all: $(STAMP)
	$(PY) -m cosim run all all -n $(N) $(COSIM_OPTS)

cosim-core: $(STAMP)
	$(PY) -m cosim tensor-core $(ARCH) $(if $(call given,INSTR),$(INSTR)) $(if $(call given,N),-n $(N)) \
	    --seed $(SEED) $(if $(STALL),--stall $(STALL)) $(if $(BUDGET),--budget $(BUDGET)) $(if $(PIPELINE),--pipeline $(PIPELINE))

lint: $(STAMP)
	$(PY) -m ruff check .

lint-rtl: $(STAMP)
ifdef DUT
	$(PY) -m cosim.dut lint $(DUT)
else
	$(PY) -m cosim lint $(if $(call given,ARCH),$(ARCH),all) $(if $(call given,INSTR),$(INSTR))
endif

clean:
	rm -rf $(VENV) build .pytest_cache

# ---- FPGA deployment (fpga/) ----------------------------------------------------------------------
BOARD ?= ulx3s-85f
# one instruction (a unit) unless INSTR is given: INSTR=HGMMA alone would be a tensor core of every HGMMA
FPGA_INSTR = $(if $(call given,INSTR),$(INSTR),HGMMA.64xNx16.F32)
FPGA_OPTS = $(if $(LANES),--lanes $(LANES)) $(if $(BAUD),--baud $(BAUD)) $(if $(CLOCK),--clock $(CLOCK)) \
            $(if $(PIPELINE),--pipeline $(PIPELINE))

fpga-sim: $(STAMP)
ifdef DUT
	$(PY) -m fpga sim $(if $(call given,ARCH),$(ARCH),all) $(if $(call given,INSTR),$(INSTR),all) --dut $(DUT) \
	    $(if $(call given,N),-n $(N)) --seed $(SEED) $(if $(BAUD),--baud $(BAUD)) $(if $(WAVES),--waves=$(WAVES))
else
	$(PY) -m fpga sim $(ARCH) $(FPGA_INSTR) $(if $(call given,N),-n $(N)) --seed $(SEED) $(FPGA_OPTS) \
	    $(if $(WAVES),--waves=$(WAVES))
endif

# the multiplier choice (fpga/toolchain/multipliers.py) of builds and fits: DSP blocks unless MULT= says otherwise
FPGA_MULT = $(if $(MULT),--multipliers $(MULT))
# a route that has not finished after ROUTE_TIMEOUT seconds stops with its best report (fpga/toolchain/progress.py)
FPGA_ROUTE = $(if $(ROUTE_TIMEOUT),--route-timeout $(ROUTE_TIMEOUT)) $(if $(ROUTER),--router $(ROUTER)) \
	$(if $(PLACER),--placer $(PLACER)) $(if $(TMG_RIPUP),--tmg-ripup=$(TMG_RIPUP))
# neither PIPELINE= nor CLOCK=: the level and design clock the board's family closes timing at (fpga/toolchain/builds.py)
FPGA_DEFAULTS = $(if $(PIPELINE)$(CLOCK),,--pipeline auto --clock auto)

# the Yosys releases the families pin other than the venv's (ECP5: 0.64, fpga/toolchain/families/ecp5.py),
# installed once into build/fpga-tools before a build needs them
fpga-tools: $(STAMP)
	$(PY) -m fpga tools

fpga: fpga-tools
ifdef DUT
	$(PY) -m fpga build $(if $(call given,ARCH),$(ARCH),all) $(if $(call given,INSTR),$(INSTR),all) --dut $(DUT) \
	    --board $(BOARD) $(if $(CLOCK),--clock $(CLOCK)) $(if $(BAUD),--baud $(BAUD)) $(FPGA_ROUTE)
else
	$(PY) -m fpga build $(ARCH) $(FPGA_INSTR) --board $(BOARD) $(FPGA_OPTS) $(FPGA_DEFAULTS) $(FPGA_MULT) $(FPGA_ROUTE)
endif

fpga-program: fpga-tools
	$(PY) -m fpga program $(ARCH) $(FPGA_INSTR) --board $(BOARD) $(FPGA_OPTS) $(FPGA_DEFAULTS) $(FPGA_MULT) $(FPGA_ROUTE)

fpga-fit: fpga-tools
	$(PY) -m fpga fit $(ARCH) $(FPGA_INSTR) --board $(BOARD) $(if $(BAUD),--baud $(BAUD)) $(if $(CLOCK),--clock $(CLOCK)) $(FPGA_MULT)

# the records of fpga/toolchain/records.toml rebuilt and compared (fpga/toolchain/records_check.py): hours, never in make test;
# fpga-records-bg runs it under nohup, its log in build/fpga-records.log and its table in build/fpga-records.md
FPGA_RECORDS = $(PY) -m fpga records $(if $(ONLY),--only $(ONLY)) $(if $(JOBS),--jobs $(JOBS)) $(if $(UPDATE),--update=$(UPDATE))
fpga-records: fpga-tools
	$(FPGA_RECORDS) --report build/fpga-records.md

fpga-records-bg: fpga-tools
	mkdir -p build && nohup $(FPGA_RECORDS) --report build/fpga-records.md > build/fpga-records.log 2>&1 &
	@echo "make fpga-records runs in the background: tail -f build/fpga-records.log (table: build/fpga-records.md)"

# the units of docs/fpga/benchmark.md: one per algorithm, at the 75 MHz design clock their builds met
# (BENCH_CLOCK= empty: build each unit, or reuse its report, and take its own clock)
BENCH_UNITS ?= hopper HGMMA.64xNx16.F32 ampere HMMA.16816.F32 blackwell UTCOMMA.MXF4.E8 \
    cdna3 v_mfma_f32_32x32x8_f16 cdna3 v_mfma_f32_16x16x16_f16 cdna3 v_mfma_f32_32x32x16_fp8_fp8 \
    cdna3 v_mfma_f32_16x16x32_fp8_fp8 cdna2 v_mfma_f32_32x32x8_f16 cdna3 v_mfma_f32_16x16x4_f32
BENCH_CLOCK ?= 75
SECONDS ?= 2
fpga-bench: $(STAMP)
	$(PY) -m fpga bench $(BENCH_UNITS) $(if $(BENCH_CLOCK),--clock $(BENCH_CLOCK)) --board $(BOARD) \
	    $(if $(LANES),--lanes $(LANES)) $(FPGA_MULT) --seconds $(SECONDS) $(if $(JOBS),--jobs $(JOBS)) \
	    --markdown docs/fpga/benchmark.md

# campaigns: N defaults to 1,000,000 here (the 100,000 above is make cosim's)
campaign: $(STAMP)
	$(PY) -m campaign run $(if $(call given,ARCH),$(ARCH),all) $(if $(call given,INSTR),$(INSTR),all) \
	    $(if $(call given,N),-n $(N)) --seed $(SEED) $(if $(DB),--db $(DB)) $(if $(DEVICE),--device $(DEVICE)) \
	    $(if $(VECTORS),--vectors $(VECTORS)) $(if $(BLOCK),--block $(BLOCK)) $(if $(LANES),--lanes $(LANES)) \
	    $(if $(STALL),--stall $(STALL)) $(if $(PIPELINE),--unit hw:pipeline=$(PIPELINE)) \
	    $(if $(RESUME),--resume=$(RESUME)) $(if $(FRESH),--fresh=$(FRESH)) \
	    $(if $(SCHEDULER),--scheduler $(SCHEDULER)) $(if $(WORKERS),--workers $(WORKERS)) \
	    $(if $(COVER_SAMPLE),--cover-sample $(COVER_SAMPLE))

campaign-report: $(STAMP)
	$(PY) -m campaign report $(DB) $(if $(COVER_JSON),--coverage-json $(COVER_JSON)) \
	    $(if $(COVER_HTML),--coverage-html $(COVER_HTML))

campaign-bench: $(STAMP)
	$(PY) -m campaign bench $(if $(WORKERS),--workers $(WORKERS)) $(if $(BENCH_INSTR),--instr $(BENCH_INSTR))

fpga-run: $(STAMP)
	$(if $(PORT),,$(error make fpga-run needs PORT=, the board's serial port: /dev/ttyUSB0, COM3, or socket://HOST:PORT))
	$(PY) -m fpga run $(if $(call given,INSTR),$(ARCH) $(INSTR)) --port $(PORT) $(if $(call given,N),-n $(N)) --seed $(SEED)

fpga-selftest: $(STAMP)
ifdef DUT
	$(PY) -m fpga selftest $(if $(call given,ARCH),$(ARCH),all) $(if $(call given,INSTR),$(INSTR),all) --dut $(DUT) \
	    $(if $(BLOCKS),--blocks $(BLOCKS)) $(if $(BLOCK),--block-len $(BLOCK)) --seed $(SEED) $(if $(KIND),--kind $(KIND))
else
	$(PY) -m fpga selftest $(ARCH) $(FPGA_INSTR) $(if $(BLOCKS),--blocks $(BLOCKS)) $(if $(BLOCK),--block-len $(BLOCK)) \
	    --seed $(SEED) $(if $(KIND),--kind $(KIND)) $(if $(PORT),--port $(PORT)) $(if $(PLANT),--plant $(PLANT)) $(FPGA_OPTS)
endif

# formal proofs: every stage at the catalog's parameters (ARCH/INSTR: the stages those units use), the stream shells
formal: $(STAMP)
	$(PY) -m formal $(if $(call given,ARCH),--arch $(ARCH)) $(if $(call given,INSTR),--instr $(INSTR)) \
	    $(if $(STAGE),--stage $(STAGE)) $(if $(NAME),--name $(NAME)) $(if $(TIMEOUT),--timeout $(TIMEOUT)) \
	    $(if $(JOBS),--jobs $(JOBS)) $(if $(call given,PIPELINE),--pipelining $(PIPELINE))
