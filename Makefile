# `make` sets everything up and produces every result; `make test` runs the fast tests, `make test-all` all of them.
# Every install takes its exact versions from constraints.txt (pyproject.toml gives the ranges).
PYTHON ?= python3
PIP_INSTALL = python -m pip install --quiet --disable-pip-version-check -c constraints.txt
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The cluster executor plugins, for the cluster tests: a venv of its own, because installed they
# slow every Snakemake start (the SLURM plugin imports pandas, about 0.4 s), local runs included.
CLUSTER_VENV := .venv-cluster
CLUSTER_STAMP := $(CLUSTER_VENV)/.installed
# Inspect AI (the `inspect` extra, docs/inspect.md), for its tests: a venv of its own too, because
# inspect-ai brings about 45 packages (botocore, fastapi, textual, ...) that nothing else needs.
INSPECT_VENV := .venv-inspect
INSPECT_STAMP := $(INSPECT_VENV)/.installed
# Mutation testing (mutmut, pinned in pyproject.toml's `mutation` extra): a venv of its own too.
MUTATION_VENV := .venv-mutation
MUTATION_STAMP := $(MUTATION_VENV)/.installed
# The MCP Inspector (npm), a second MCP client for the smoke test of `replaylab mcp`: the committed
# package.json and package-lock.json pin it; `make test` skips that test when it is not installed.
INSPECTOR := clients/inspector
INSPECTOR_STAMP := $(INSPECTOR)/node_modules/.installed

.PHONY: all results test test-all lint test-cluster cluster-env inspect-env inspect-test inspector chromium bench mutation clean
all: results

# The virtual environment, with replaylab and its pinned dependencies, the tests' and `make lint`'s
# (the `test` and `dev` extras; made again from scratch when pyproject.toml or constraints.txt
# changes, so that it holds the pins and nothing else).
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv --clear $(VENV)
	$(BIN)/$(PIP_INSTALL) -e ".[test,dev]" 2>&1 | grep -v "is ignored" || true
	$(BIN)/python -c "import replaylab, snakemake, mypy"
	$(BIN)/ruff --version >/dev/null
	touch $(STAMP)

$(CLUSTER_STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv --clear $(CLUSTER_VENV)
	$(CLUSTER_VENV)/bin/$(PIP_INSTALL) -e ".[cluster]" 2>&1 | grep -v "is ignored" || true
	$(CLUSTER_VENV)/bin/python -c "import snakemake_executor_plugin_slurm, snakemake_executor_plugin_cluster_generic"
	touch $(CLUSTER_STAMP)

cluster-env: $(CLUSTER_STAMP)

$(INSPECT_STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv --clear $(INSPECT_VENV)
	$(INSPECT_VENV)/bin/$(PIP_INSTALL) -e ".[test,inspect]" 2>&1 | grep -v "is ignored" || true
	$(INSPECT_VENV)/bin/python -c "import inspect_ai, replaylab.inspect_tasks.tasks"
	$(INSPECT_VENV)/bin/python -m replaylab.inspect_tasks.listing  # replaylab_tasks.py: what `inspect list tasks` lists
	touch $(INSPECT_STAMP)

inspect-env: $(INSPECT_STAMP)

# The Inspect AI tests (tests/test_inspect.py) in .venv-inspect: Inspect runs with its mockllm model
# and through its openai provider against a stand-in server on 127.0.0.1, imported and judged.
inspect-test: $(INSPECT_STAMP)
	$(INSPECT_VENV)/bin/python -m replaylab.inspect_tasks.listing  # written again: a lesson added since the venv was made
	$(INSPECT_VENV)/bin/python -m pytest tests/test_inspect.py

$(MUTATION_STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv --clear $(MUTATION_VENV)
	$(MUTATION_VENV)/bin/$(PIP_INSTALL) -e ".[test,mutation]" 2>&1 | grep -v "is ignored" || true
	$(MUTATION_VENV)/bin/python -c "import mutmut, replaylab"
	touch $(MUTATION_STAMP)

$(INSPECTOR_STAMP): $(INSPECTOR)/package.json $(INSPECTOR)/package-lock.json
	cd $(INSPECTOR) && npm ci --no-audit --no-fund --loglevel=error
	touch $(INSPECTOR_STAMP)

inspector: $(INSPECTOR_STAMP)

# Every result of every lesson, through the Snakemake workflow (only what changed is rebuilt).
results: $(STAMP)
	$(BIN)/snakemake --cores all

# Headless Chromium, Debian's package, for the browser tests (tests/test_browser.py); needs root and apt.
# Without it the browser tests skip (and fail under CI=true): .ci/run makes this target first.
chromium:
	command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
	chromium --version

# The fast tests, `make test`: every test but those marked `slow` (docs/testing.md: a Snakemake
# build of their own, a process driven over a pipe or stopped by a signal, a server over stdio, the
# browser), in 3 processes on 2 cores (pytest-xdist; CPU-bound: replaylab in the test processes and
# the one Snakemake build that the tests which read its results share), the slowest listed at the
# end. Nothing is installed on the system and no cluster is started: that is `make test-cluster`;
# the Inspect AI tests are `make inspect-test` (REPLAYLAB_INSPECT=0 skips them here). Python keeps
# its bytecode even where the shell sets PYTHONDONTWRITEBYTECODE: else each of the 3 workers
# rewrites the asserts of every test module again (collecting the tests took 9.7 s that way, 5.7 s
# with the cache). The tests that share a costly fixture of their module run in one process
# (tests/conftest.py, SHARED), the others wherever a process is free. 1 min 43 s, 3.1 min of CPU
# (2026-12-03, 2 cores shared with other work: docs/testing.md).
PYTEST = env -u PYTHONDONTWRITEBYTECODE REPLAYLAB_INSPECT=0 $(BIN)/python -m pytest -n 3 --ignore=tests/test_slurm.py
test: $(STAMP)
	$(PYTEST) -m "not slow" --durations=10

# Every test, the slow ones too (what .ci/run runs, with CI=true): all that `make test` ran before
# the tests had two tiers. Still no cluster and no Inspect AI: `make test-cluster`, `make inspect-test`.
# 6 min 30 s, 12.1 min of CPU (2026-12-03, the same machine).
test-all: $(STAMP)
	$(PYTEST) --durations=20

# Lint and types, `make lint` (docs/testing.md): ruff's checks (the rules of pyproject.toml,
# [tool.ruff]) on src/, scripts/ and tests/, then mypy --strict on the core (agents/, physics/,
# verification/, lessons/, errors.py, http_deadlines.py) and the services (every other module of
# src/replaylab but the shells: [tool.mypy]). No formatting check.
lint: $(STAMP)
	$(BIN)/ruff check src scripts tests
	$(BIN)/mypy --strict

# The cluster tests, on a real one-node SLURM cluster on this machine (cluster/slurm-local.sh: as
# root, it installs Debian's munge and SLURM if they are missing, and stops what it started).
test-cluster: $(STAMP) $(CLUSTER_STAMP)
	bash cluster/slurm-local.sh up
	REPLAYLAB_CLUSTER=1 $(BIN)/python -m pytest tests/test_slurm.py; status=$$?; bash cluster/slurm-local.sh down; exit $$status

# Measurements, not tests: the library's hot spots, the workflow against the one-process floor, then
# a campaign against the stand-in model server, serial and concurrent (a section of bench/results.md).
bench: $(STAMP)
	$(BIN)/python bench/library.py
	$(BIN)/python bench/workflow.py
	$(BIN)/python bench/campaign.py

# A measurement, not a test: how many mutants of the critical modules the tests kill (the modules
# and the tests are in pyproject.toml, [tool.mutmut]). Prints the kill rate and every survivor.
mutation: $(MUTATION_STAMP)
	rm -rf mutants
	$(MUTATION_VENV)/bin/mutmut run --max-children 2
	$(MUTATION_VENV)/bin/python bench/mutation.py

clean:
	rm -rf results logs benchmarks .snakemake mutants
