# mcp_notebook: `make lab` and `make test` do all the set-up themselves.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
LAB_ARGS ?=

.PHONY: lab test test-fast fuzz bench bench-quick bench-10m data docs lint clean handouts

# the package's bytecode, written as pip writes a wheel's: an editable install has none,
# and where PYTHONDONTWRITEBYTECODE is set no process writes it, so every Python process
# (each CLI call, kernel and tap of the tests) would compile the package again (~2 s)
COMPILE := $(PY) -m compileall -q mcp_notebook >/dev/null

$(STAMP): pyproject.toml setup.py $(wildcard mcp_notebook/engine/csrc/*)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip 'setuptools>=77'
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# as root (containers, CI boxes) Jupyter refuses to start without --allow-root
lab: $(STAMP)
	$(COMPILE)
	$(VENV)/bin/jupyter lab $$([ "$$(id -u)" = 0 ] && echo --allow-root) $(LAB_ARGS) notebooks/00-start.ipynb

# one worker per core and one more (pytest-xdist); each test module is one unit of work, the
# browser tests two, the longest units first (tests/conftest.py). TEST_WORKERS=0: one
# process. No test collected: exit 5.
TEST_WORKERS ?= auto
test: $(STAMP)
	$(COMPILE)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

test-fast: $(STAMP)
	$(COMPILE)
	$(PY) -m pytest -m "not browser and not live and not slow"

fuzz: $(STAMP)
	MCP_NOTEBOOK_FUZZ_EXAMPLES=20000 $(PY) -m pytest tests/robustness -q

# every reader against NDJSON at 100k and 1M messages (its record: results-readers.json; a
# reader over its target does not stop the run; 3 rounds, medians: one run of a reader swung
# by 20% on a shared box), then the loader benchmarks: 100k + 1M frames, 3 interleaved reps;
# RESULTS.md reports both (~30 min, ~12 GB in benchmarks/out/)
bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	-$(PY) benchmarks/bench_readers.py --sizes 100000 1000000 --repeats 3 \
		--json benchmarks/results-readers.json --report benchmarks/out/readers.md
	$(PY) benchmarks/bench_load.py

# the same at 100k frames (~2-3 min)
bench-quick: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	$(PY) benchmarks/bench_load.py --quick

# ten million tiny frames: load + pairs + violations + summary, peak memory and per-frame
# cost at 100k, 1M and 10,485,760 lines (~5-10 min, ~0.4 GB of files, deleted after)
bench-10m: $(STAMP)
	$(PY) benchmarks/bench_10m.py

data: $(STAMP)
	$(PY) scripts/make_data.py
	$(PY) scripts/make_data_conversation.py

# every teaching notebook, executed, as HTML with its widgets drawn, opening offline
handouts: $(STAMP)
	$(PY) scripts/make_handouts.py --out handouts

docs: $(STAMP)
	$(PY) -c "from mcp_notebook.protocol.rules import render_markdown as r; print(r(), end='')" > docs/rules.md
	$(PY) -m mcp_notebook._apidoc > docs/api.md
	$(PY) -m mcp_notebook.conversation.docs > docs/conversation.md

lint: $(STAMP)
	$(VENV)/bin/ruff check mcp_notebook tests
	$(VENV)/bin/mypy mcp_notebook

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
