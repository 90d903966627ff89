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

.PHONY: help venv test golden bench list clean

help:
	@echo "make test                         run the test suite (what CI runs)"
	@echo "make golden ARCH=hopper INSTR=HGMMA [N=] [SEED=]"
	@echo "                                  run the golden model on random vectors for matching instructions"
	@echo "make list [ARCH=] [INSTR=]        list catalog instructions"
	@echo "make bench                        golden-model throughput per algorithm, one core"

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q

golden: $(STAMP)
	$(PY) -m golden run $(ARCH) $(INSTR) -n $(N) --seed $(SEED)

list: $(STAMP)
	$(PY) -m golden list $(if $(filter command line,$(origin ARCH)),--arch $(ARCH)) $(if $(filter command line,$(origin INSTR)),$(INSTR))

bench: $(STAMP)
	$(PY) -m golden.bench

clean:
	rm -rf $(VENV) build .pytest_cache
