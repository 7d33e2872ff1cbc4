# tornado-stm: every target does its own set-up, idempotently.
#
#   make run          serve the demo apps on all cores at http://127.0.0.1:8888
#   make test         the whole suite on the GIL CPython and on a free-threaded one,
#                     then tests/stm again under fault injection (make test-faults)
#   make test-tornado Tornado's own test suite on the transactional loop (both interpreters) and the per-thread one
#   make bench        every benchmark configuration side by side (about 13 minutes);
#                     results in bench/results/latest and docs/benchmarks.md
#   make bench-quick  the same in short runs (about 4 minutes)
#
# Two virtualenvs: .venv (the machine's python3, GIL build) and .venv-ft
# (a free-threaded CPython found or built by scripts/python-ft).

PYTHON      ?= python3
VENV_GIL    := .venv
VENV_FT     := .venv-ft
# What both venvs install: the package (editable) with its test extra and
# its bench extra (matplotlib: tests/test_bench_report.py checks the
# benchmark's plot). The stamp is named after the extras, so that changing
# them sets the venvs up again.
EXTRAS      := test,bench
STAMP       := .installed-test-bench
# A release with a wheel for the interpreter rather than a newer one to
# build from source (matplotlib 3.11.2 has no wheel for 3.13t; 3.11.1 has).
PIP_INSTALL  = -m pip install -q --prefer-binary
PORT        ?= 8888
THREADS     ?= $(shell nproc)
PYTEST_ARGS ?=
# Inputs that change what an install produces.
INSTALL_INPUTS := pyproject.toml $(wildcard setup.py) $(wildcard tornado_stm/stm/*.c) $(wildcard stmlog_tools/*.c)

.PHONY: all run test test-gil test-ft test-faults test-tornado venv system-deps bench bench-quick clean help

all: test

help:
	@sed -n 's/^#   //p' Makefile

venv: $(VENV_GIL)/$(STAMP) $(VENV_FT)/$(STAMP)

$(VENV_GIL)/$(STAMP): $(INSTALL_INPUTS)
	@echo "== setting up $(VENV_GIL) with $$($(PYTHON) -c 'import sys; print(sys.executable)')"
	@test -x $(VENV_GIL)/bin/python || $(PYTHON) -m venv $(VENV_GIL)
	@$(VENV_GIL)/bin/python -m pip install -q --upgrade pip
	@$(VENV_GIL)/bin/python $(PIP_INSTALL) -e ".[$(EXTRAS)]"
	@touch $@

$(VENV_FT)/$(STAMP): $(INSTALL_INPUTS)
	@echo "== setting up $(VENV_FT) (free-threaded CPython)"
	@test -x $(VENV_FT)/bin/python || "$$(scripts/python-ft)" -m venv $(VENV_FT)
	@$(VENV_FT)/bin/python -m pip install -q --upgrade pip
	@$(VENV_FT)/bin/python $(PIP_INSTALL) -e ".[$(EXTRAS)]"
	@touch $@

system-deps:
	@scripts/install-system-deps

run: $(VENV_FT)/$(STAMP)
	$(VENV_FT)/bin/tornado-stm serve apps.demo:make_app --port $(PORT) --threads $(THREADS)

test: venv system-deps
	@$(MAKE) --no-print-directory --keep-going test-gil test-ft test-faults

test-gil: $(VENV_GIL)/$(STAMP)
	@echo "== tests on the GIL build: $$($(VENV_GIL)/bin/tornado-stm info)"
	$(VENV_GIL)/bin/python -m pytest $(PYTEST_ARGS)

test-ft: $(VENV_FT)/$(STAMP)
	@echo "== tests on the free-threaded build: $$($(VENV_FT)/bin/tornado-stm info)"
	$(VENV_FT)/bin/python -m pytest $(PYTEST_ARGS)

# The engine's tests once more with spurious aborts and random delays injected
# at reads, writes and commits (tornado_stm/stm/faults.py). The adversarial
# programs set their own faults, and test-ft runs them.
FAULTS ?= abort=0.02,delay=0.00005
test-faults: $(VENV_FT)/$(STAMP)
	@echo "== tests/stm under fault injection ($(FAULTS)), free-threaded build"
	TORNADO_STM_FAULTS=$(FAULTS) $(VENV_FT)/bin/python -m pytest tests/stm \
		--ignore=tests/stm/test_adversarial_programs.py $(PYTEST_ARGS)

# The benchmark runs on the GIL venv (matplotlib, for its plot, comes with
# the venv's bench extra) and starts every peer server itself;
# bench/setup-peers installs PyPy, builds .venv-pypy and the Go peer server.
BENCH_ARGS  ?=
.PHONY: bench-setup

bench-setup: venv system-deps
	@bench/setup-peers

bench: bench-setup
	$(VENV_GIL)/bin/python -m bench.run --update-docs $(BENCH_ARGS)

bench-quick: bench-setup
	$(VENV_GIL)/bin/python -m bench.run --quick $(BENCH_ARGS)

# Tornado's whole test suite on the transactional loop, on both interpreters
# (docs/compatibility.md lists what differs from stock asyncio, and why).
test-tornado: venv
	@echo "== Tornado's test suite on the transactional loop, GIL build"
	$(VENV_GIL)/bin/python -m testsupport.tornado_suite
	@echo "== Tornado's test suite on the transactional loop, free-threaded build"
	$(VENV_FT)/bin/python -m testsupport.tornado_suite
	@echo "== Tornado's test suite on the loop of each thread (serve --loop per-thread), free-threaded build"
	$(VENV_FT)/bin/python -m testsupport.tornado_suite --per-thread

clean:
	rm -rf $(VENV_GIL) $(VENV_FT) .venv-pypy build *.egg-info .pytest_cache
