# Two commands on a fresh machine: `make run` and `make test` (see README.md).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: help install constraints explorer run demo test test-random lint typecheck bench bench-full reliability reliability-quick neo4j clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "decisiontrail needs Python 3.11+")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# pyproject.toml says which versions work; constraints.txt which ones are installed, exactly.
$(VENV)/.installed: pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $@

SCRATCH_VENV := .constraints-venv

constraints:  ## write constraints.txt anew: the newest versions pyproject.toml allows, resolved in a scratch virtual environment
	rm -rf $(SCRATCH_VENV)
	$(PYTHON) -m venv $(SCRATCH_VENV)
	$(SCRATCH_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(SCRATCH_VENV)/bin/python -m pip install --quiet '.[test]'
	{ grep '^#' constraints.txt; $(SCRATCH_VENV)/bin/python -m pip freeze --all | grep -v -i -E '^(pip|decisiontrail)[ =]'; } > constraints.txt.new
	mv constraints.txt.new constraints.txt
	rm -rf $(SCRATCH_VENV) build

# The explorer page (/explore) is built from explorer/ with the lockfile's packages into the package itself.
EXPLORER := src/decisiontrail/explorer_static/explorer.js
EXPLORER_SOURCES := $(wildcard explorer/src/*.ts explorer/static/*) explorer/package.json explorer/package-lock.json explorer/build.mjs explorer/tsconfig.json

$(EXPLORER): $(EXPLORER_SOURCES)
	cd explorer && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build

# graphql-http's server audit (tests/test_graphql_over_http.py) runs with the lockfile's packages.
AUDIT_DIR := tests/graphql_http_audit
AUDIT_PACKAGES := $(AUDIT_DIR)/node_modules/.package-lock.json

$(AUDIT_PACKAGES): $(AUDIT_DIR)/package.json $(AUDIT_DIR)/package-lock.json
	cd $(AUDIT_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

install: $(VENV)/.installed $(EXPLORER) $(AUDIT_PACKAGES)  ## create .venv and install the project with its test tools; build the explorer and install the GraphQL over HTTP audit (Node and npm)

explorer: $(EXPLORER)  ## build the explorer page (npm ci && npm run build in explorer/)

run: install  ## set up, start the embedded Neo4j and serve the API (demonstration data when empty)
	$(BIN)/decisiontrail serve --demo-if-empty

demo: install  ## scripted actors record, review and correct a plan hierarchy; print it
	$(BIN)/decisiontrail demo

# One seed per run shuffles the tests (pytest-randomly) and draws Hypothesis's examples; the run
# prints it first and last, and SEED=N runs that order with those examples again.
SEEDED_PYTEST = seed=$(or $(SEED),$$($(BIN)/python -c 'import secrets; print(secrets.randbits(32))')); \
	echo "test seed $$seed (SEED=$$seed repeats this run)"; \
	$(BIN)/python -m pytest --randomly-seed=$$seed --hypothesis-seed=$$seed

test: install lint typecheck  ## set up, lint, type-check and run the whole test suite against a real Neo4j, in a shuffled order (SEED=N repeats one)
	$(SEEDED_PYTEST)

test-random: install  ## the test suite alone, shuffled as `make test` shuffles it (SEED=N repeats the order it printed)
	$(SEEDED_PYTEST)

lint: install  ## ruff check and ruff format --check (rules and line length in pyproject.toml)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install  ## mypy --strict over the package and the benchmark harness
	$(BIN)/mypy

bench: install  ## quick benchmarks side by side with their baselines (a few minutes); writes docs/benchmarks.md
	$(BIN)/python -m bench

bench-full: install  ## the whole range of benchmark sizes: up to 1M decisions, 10M for the offline checks and export (two hours or more)
	$(BIN)/python -m bench --full

reliability: install  ## fuzz, load, faults and access against a Neo4j of its own (about ten minutes); writes docs/reliability.md
	$(BIN)/python -m reliability

reliability-quick: install  ## every reliability scenario at a small size, as CI runs it after make test (about 13 minutes); report in build/reliability-quick/
	$(BIN)/python -m reliability --quick

neo4j: install  ## run the embedded Neo4j in the foreground
	$(BIN)/decisiontrail neo4j start

clean:  ## remove the virtual environment and build leftovers
	rm -rf $(VENV) $(SCRATCH_VENV) build dist src/*.egg-info .pytest_cache explorer/node_modules src/decisiontrail/explorer_static $(AUDIT_DIR)/node_modules
