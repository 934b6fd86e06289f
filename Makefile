# raysweep developer commands. Every target installs what it needs first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# the search-quality benchmark's peers (SMAC3, DEHB, Optuna, ...) live in their own venv
PEERS  := .venv-peers

.PHONY: install test test-ray-matrix demo lint bench bench-quick clean

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		-c constraints.txt -e '.[all,dev]'
	touch $(STAMP)

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The supported Ray releases other than the one constraints.txt pins
# (docs/ray-compat.md: the last three minors).
RAY_MATRIX    ?= 2.58.1 2.59.0
MATRIX_DIR    := build/ray-matrix
MATRIX_TESTS  := tests/_raycompat/test_startup_check.py tests/e2e/test_ray_mismatch.py \
	tests/e2e/test_crash_resume.py tests/engines/test_contract_crash.py
ENGINE_SMOKE  ?= random and fifo
# Per release, a throw-away venv holding that Ray (from pip's cache after the first
# time) and this project, layered over $(VENV) for everything else (pip included):
# the other packages are the ones constraints.txt pins whichever Ray is installed,
# `pip check` refuses the layer if that Ray asks for others, and no second copy of
# them is installed (docs/ray-compat.md).
# Then the target test, the mismatch test, the crash/resume and signal end-to-end
# tests and, where tests/engines/ exists, a smoke of the engine contract suite.
test-ray-matrix: install
	@set -e; for version in $(RAY_MATRIX); do \
		env=$(MATRIX_DIR)/ray-$$version; \
		echo "== Ray $$version: $$env"; \
		rm -rf $$env; \
		$(BIN)/python -m venv --without-pip $$env; \
		site=$$($$env/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))'); \
		base=$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))'); \
		echo "import site; site.addsitedir('$$base')" > $$site/zz_raysweep_base.pth; \
		$$env/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
			"ray==$$version"; \
		$$env/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e .; \
		$$env/bin/python -m pip check --disable-pip-version-check; \
		$$env/bin/python -c "import ray, sys; sys.exit(ray.__version__ != '$$version')"; \
		$$env/bin/python -m pytest -p no:cacheprovider $(MATRIX_TESTS) $(PYTEST_ARGS); \
		if test -d tests/engines; then \
			code=0; $$env/bin/python -m pytest -p no:cacheprovider tests/engines \
				-k "$(ENGINE_SMOKE)" $(PYTEST_ARGS) || code=$$?; \
			if test $$code = 5; then echo "note: no engine test matches -k '$(ENGINE_SMOKE)'"; \
			elif test $$code != 0; then exit $$code; fi; \
		else echo "note: no tests/engines/: engine contract smoke skipped"; fi; \
		rm -rf $$env; \
	done

demo: install
	rm -rf runs/demo
	$(BIN)/sweep run --config sweeps/demo.json --storage runs --name demo
	$(BIN)/sweep best runs/demo

lint: install
	$(BIN)/ruff check src tests benchmarks examples tools
	$(BIN)/ruff format --check src tests benchmarks examples tools
	$(BIN)/mypy

$(PEERS)/.installed: benchmarks/requirements-peers.txt
	test -x $(PEERS)/bin/python || $(PYTHON) -m venv $(PEERS)
	$(PEERS)/bin/python -m pip install --quiet --disable-pip-version-check \
		-r benchmarks/requirements-peers.txt
	touch $@

$(VENV)/.bench-installed: $(STAMP) benchmarks/requirements-bench.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt \
		-r benchmarks/requirements-bench.txt
	touch $@

bench: install $(VENV)/.bench-installed $(PEERS)/.installed
	$(BIN)/python -m benchmarks.run

bench-quick: install
	$(BIN)/python -m benchmarks.run --quick

clean:
	rm -rf $(VENV) $(PEERS) runs build .pytest_cache .mypy_cache .ruff_cache
