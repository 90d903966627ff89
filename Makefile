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

.PHONY: help venv test golden bench list clean cosim cosim-all cosim-core lint-rtl report probe findings

help:
	@echo "make test                         run the test suite (what CI runs)"
	@echo "make cosim ARCH=hopper INSTR=HGMMA [N=] [SEED=] [STALL=] [LANES=] [WAVES=1] [VECTORS=] [BUDGET=] [JOBS=]"
	@echo "                                  build the RTL units with Verilator and co-simulate them against golden"
	@echo "                                  (default: ~1 min and >= 100,000 vectors per instruction)"
	@echo "make cosim-all [N=] [JOBS=]       co-simulate every catalog instruction (N default 100000; JOBS at a time)"
	@echo "make cosim-core ARCH=hopper [INSTR=] [N=] [SEED=] [STALL=]"
	@echo "                                  co-simulate the architecture's opcode-selected tensor core, mixed instructions"
	@echo "make lint-rtl [ARCH=] [INSTR=]    verilator --lint-only -Wall on the generated Verilog (default: everything)"
	@echo "make report ARCH=hopper [INSTR=] [SIZE=full|fast|auto|none] [JOBS=]"
	@echo "                                  latency, II and Yosys cell count of each unit (python -m hw report)"
	@echo "make golden ARCH=hopper INSTR=HGMMA [N=] [SEED=] [VECTORS=]"
	@echo "                                  run the golden model on random vectors for matching instructions"
	@echo "make list [ARCH=] [INSTR=]        list catalog instructions"
	@echo "make probe ARCH=hopper INSTR=HGMMA [BACKEND=golden|rtl|torch|golden:F=24]"
	@echo "                                  the dissection suite: infer each instruction's arithmetic, compare with the catalog"
	@echo "make findings                     the paper's section VI from the probes, with plots (docs/findings/)"
	@echo "make bench                        golden-model throughput per algorithm, one core"
	@echo "ARCH and INSTR take names, aliases, family prefixes, comma lists and all."

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q

golden: $(STAMP)
	$(PY) -m golden run $(ARCH) $(INSTR) -n $(N) --seed $(SEED) $(if $(VECTORS),--vectors $(VECTORS))

list: $(STAMP)
	$(PY) -m golden list $(if $(call given,ARCH),$(ARCH),all) $(if $(call given,INSTR),$(INSTR),all)

report: $(STAMP)
	$(PY) -m hw report $(ARCH) $(if $(call given,INSTR),$(INSTR)) $(if $(SIZE),--size $(SIZE)) $(if $(JOBS),-j $(JOBS))

probe: $(STAMP)
	$(PY) -m probe $(ARCH) $(INSTR) $(if $(BACKEND),--backend $(BACKEND))

findings: $(STAMP)
	$(PY) -m probe findings --out docs/findings

bench: $(STAMP)
	$(PY) -m golden.bench

# Options of the co-simulation targets, passed on only when given (make cosim N=... SEED=...).
COSIM_OPTS = --seed $(SEED) $(if $(STALL),--stall $(STALL)) \
             $(if $(LANES),--lanes $(LANES)) $(if $(filter 1 yes true,$(WAVES)),--waves) \
             $(if $(VECTORS),--vectors $(VECTORS)) $(if $(JOBS),--jobs $(JOBS)) $(if $(BUDGET),--budget $(BUDGET)) $(if $(UNIT),--unit $(UNIT))

cosim: $(STAMP)
	$(PY) -m cosim run $(ARCH) $(INSTR) $(if $(call given,N),-n $(N)) $(COSIM_OPTS)

cosim-all: $(STAMP)
	$(PY) -m cosim run all all -n $(N) $(COSIM_OPTS)

cosim-core: $(STAMP)
	$(PY) -m cosim tensor-core $(ARCH) $(if $(call given,INSTR),$(INSTR)) $(if $(call given,N),-n $(N)) \
	    --seed $(SEED) $(if $(STALL),--stall $(STALL)) $(if $(BUDGET),--budget $(BUDGET))

lint-rtl: $(STAMP)
	$(PY) -m cosim lint $(if $(call given,ARCH),$(ARCH),all) $(if $(call given,INSTR),$(INSTR))

clean:
	rm -rf $(VENV) build .pytest_cache
