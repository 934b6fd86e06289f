# raysweep developer commands. Every target installs what it needs first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# the search-quality benchmark's peers (SMAC3, DEHB, Optuna, ...) live in their own venv
PEERS  := .venv-peers

.PHONY: install test demo lint bench bench-quick clean

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		-c constraints.txt -e '.[all,dev]'
	touch $(STAMP)

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

demo: install
	rm -rf runs/demo
	$(BIN)/sweep run --config sweeps/demo.json --storage runs --name demo
	$(BIN)/sweep best runs/demo

lint: install
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples
	$(BIN)/mypy

$(PEERS)/.installed: benchmarks/requirements-peers.txt
	test -x $(PEERS)/bin/python || $(PYTHON) -m venv $(PEERS)
	$(PEERS)/bin/python -m pip install --quiet --disable-pip-version-check \
		-r benchmarks/requirements-peers.txt
	touch $@

bench: install $(PEERS)/.installed
	$(BIN)/python -m benchmarks.run

bench-quick: install
	$(BIN)/python -m benchmarks.run --quick

clean:
	rm -rf $(VENV) $(PEERS) runs .pytest_cache .mypy_cache .ruff_cache
