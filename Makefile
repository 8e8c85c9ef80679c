# Two commands do everything (see README):
#   make demo   set up .venv, then run tx8c on a bundled example
#   make test   set up .venv, then run ruff, the lit tests and pytest
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
JOBS ?= 2

.PHONY: setup test lint lit pytest demo clean report-deps

setup: $(STAMP)

# compileall: tx8c's bytecode now, as pip writes it for a regular install (an editable
# install has none, and where PYTHONDONTWRITEBYTECODE is set every run would compile
# tx8c's sources again: about 0.3 s of each tx8c command). Stale files are ignored.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check pip==26.3
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	$(BIN)/python -m compileall -q tx8c
	rm -f $(VENV)/.installed-*
	touch $@

# `tx8c report` lays graphs out with Graphviz's dot; its browser tests use headless
# Chromium. Both are Debian packages: installed here when missing and we are root with
# apt-get (CI); elsewhere install them yourself, or the browser tests skip saying why.
report-deps:
	@if command -v dot >/dev/null && command -v chromium >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz chromium >/dev/null; \
	else echo "report-deps: install graphviz and chromium to run the report's browser tests"; fi

lint: setup
	$(BIN)/ruff check tx8c tests bench examples

lit: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/lit -s tests/filecheck

pytest: setup
	$(BIN)/python -m pytest -n $(JOBS) tests

test: report-deps lint lit pytest

EXAMPLES := build/examples
DEMO_MODEL ?= residual_cnn

DEMO_OUT := build/$(DEMO_MODEL)
DEMO_INPUTS := $(EXAMPLES)/$(DEMO_MODEL).inputs.npz

# compile (estimated and simulated latency, roofline bound) -> the C program built and
# run on the example's inputs -> every stage, the cmodels and the C program vs ONNX Runtime
demo: setup
	@$(BIN)/python examples/make_models.py --inputs $(EXAMPLES) $(DEMO_MODEL) >/dev/null
	@echo "== 1. compile $(DEMO_MODEL).onnx for TX8 (16 tiles) =="
	@$(BIN)/tx8c compile $(EXAMPLES)/$(DEMO_MODEL).onnx -o $(DEMO_OUT) --quiet
	@echo "== 2. emit C, build it with the system C compiler, run it on $(DEMO_INPUTS) =="
	@$(BIN)/tx8c run $(DEMO_OUT) --backend c --inputs $(DEMO_INPUTS) -o $(DEMO_OUT)/outputs_c.npz
	@echo "== 3. compare with ONNX Runtime on the same inputs =="
	@$(BIN)/tx8c compare $(EXAMPLES)/$(DEMO_MODEL).onnx --inputs $(DEMO_INPUTS) --summary --quiet

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
