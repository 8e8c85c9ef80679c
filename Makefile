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

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check pip==26.3
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
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

demo: setup
	$(BIN)/python examples/make_models.py $(EXAMPLES)
	$(BIN)/tx8c compile $(EXAMPLES)/$(DEMO_MODEL).onnx -o build/$(DEMO_MODEL)
	$(BIN)/tx8c compare $(EXAMPLES)/$(DEMO_MODEL).onnx

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
