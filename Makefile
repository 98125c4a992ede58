# Two commands on a fresh machine:
#   make demo   installs everything and runs the offline stub demo
#   make test   installs everything and runs the whole test suite
SHELL := /bin/bash
PYTHON ?= python3
UV := $(shell command -v uv 2>/dev/null || echo $(HOME)/.local/bin/uv)
# Installs byte-compile .venv and the project, so that every fresh process (each run's driver, job
# template and sandboxes) starts without compiling, even where PYTHONDONTWRITEBYTECODE is set; and
# index the project's imports beside its byte code (what a sandbox's view is computed from).
export UV_COMPILE_BYTECODE := 1
COMPILE_PROJECT = $(if $(filter 1,$(UV_COMPILE_BYTECODE)),.venv/bin/python -m compileall -q trace_bench >/dev/null \
	&& .venv/bin/python -m trace_bench.sandbox.view >/dev/null)
export LITELLM_LOCAL_MODEL_COST_MAP := True
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export GRADIO_ANALYTICS_ENABLED := False
export RAY_USAGE_STATS_ENABLED := 0

.PHONY: install install-all demo ui notebooks test lint perf system-deps clean doc-outputs

$(UV):
	$(PYTHON) -m pip install --quiet --user uv || $(PYTHON) -m pip install --quiet uv

# The lean environment (no extras, no dev tools: about 300 MB); --inexact keeps whatever a
# previous `make test` installed instead of removing it.
install: $(UV)
	$(UV) sync --frozen --no-dev --inexact
	$(COMPILE_PROJECT)

# Every extra and the dev tools: what the tests need.  --inexact keeps packages you installed into
# .venv yourself (a trainer plugin: `uv pip install --python .venv ...`); plain `uv sync` removes them.
install-all: $(UV)
	$(UV) sync --frozen --all-extras --inexact
	$(COMPILE_PROJECT)

# The demo also needs the analysis extra (report.html, the paper table).
demo: $(UV)
	$(UV) sync --frozen --no-dev --inexact --extra analysis
	$(COMPILE_PROJECT)
	PATH="$(CURDIR)/.venv/bin:$$PATH" bash scripts/demo.sh runs

# The UI on 127.0.0.1 over the runs in RUNS (default: runs, where `make demo` writes): installs the
# ui extra first when .venv lacks it (a sync re-compiles all of .venv's bytecode: ~12 s), keeping
# every other package of .venv.  UI_ARGS: more flags (e.g. --port 8080).
RUNS ?= runs
UI_ARGS ?=
UI_MODULES := gradio plotly pandas scipy matplotlib
ui: $(UV)
	@.venv/bin/python -c "import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in sys.argv[1:]))" \
		$(UI_MODULES) 2>/dev/null || $(UV) sync --frozen --no-dev --inexact --extra analysis --extra ui
	.venv/bin/trace-bench ui --runs-dir "$(RUNS)" $(UI_ARGS)

# Installs the notebooks extra (JupyterLab, nbclient, ipykernel, the UI and analysis libraries),
# then executes every notebook in notebooks/ headless, offline, in stub mode (scripts/run-notebooks.py;
# NOTEBOOKS=notebooks/01_quick_start.ipynb runs some).  Open them with `.venv/bin/jupyter lab notebooks`.
NOTEBOOKS ?=
notebooks: $(UV)
	$(UV) sync --frozen --no-dev --inexact --extra notebooks
	$(COMPILE_PROJECT)
	.venv/bin/python scripts/run-notebooks.py $(NOTEBOOKS)

system-deps:
	@bash scripts/install-system-deps.sh

# The tests write bytecode as they import (PYTHONDONTWRITEBYTECODE cleared) instead of compiling
# all 20,700 files of .venv at install: 38 s of a clean clone's install, for the few thousand
# modules the suite imports; and the suite's ~250 runs then reuse the project's bytecode.
test: export UV_COMPILE_BYTECODE := 0
test: export PYTHONDONTWRITEBYTECODE :=
test: install-all system-deps
	.venv/bin/ruff check .
	.venv/bin/mypy
	.venv/bin/python -m pytest

# Regenerate the outputs shown in README.md and docs/ from the code (checked by tests/docs).
doc-outputs:
	.venv/bin/python scripts/update-doc-outputs.py

perf: install-all
	for script in perf/*.py; do echo "== $$script"; .venv/bin/python $$script || exit 1; done

clean:
	rm -rf .venv runs .pytest_cache
