# `make` sets everything up and produces every result; `make test` runs the tests.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: all results test bench clean
all: results

# The virtual environment, with replaylab and its pinned dependencies (reinstalled when pyproject.toml changes).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[test]" 2>&1 | grep -v "is ignored" || true
	$(BIN)/python -c "import replaylab, snakemake"
	touch $(STAMP)

# Every result of every lesson, through the Snakemake workflow (only what changed is rebuilt).
results: $(STAMP)
	$(BIN)/snakemake --cores all

test: $(STAMP)
	$(BIN)/python -m pytest

# Measurements, not tests: the library's hot spots, then the workflow against the one-process floor.
bench: $(STAMP)
	$(BIN)/python bench/library.py
	$(BIN)/python bench/workflow.py

clean:
	rm -rf results logs benchmarks .snakemake
