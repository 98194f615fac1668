# Two commands on a fresh machine with Python 3.12+ (on PATH, or installed by pyenv):
#   make serve   install errata and serve it on SQLite with the seed records loaded
#                (HOST=0.0.0.0 PORT=9000 make serve to listen elsewhere)
#   make test    install errata with its test extras and run the whole suite
#   make docs    install the docs extra and build the documentation site into site/
# Python 3.12, as JAX 0.11 and later require: their source is written for it, and the miner
# reads it with Python's own parser. The first Python 3.12+ found is taken.
PYTHON ?= $(firstword $(foreach candidate,python3.14 python3.13 python3.12 python3 \
	$(wildcard $(HOME)/.pyenv/versions/3.1[2-9]*/bin/python3),\
	$(shell $(candidate) -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null \
	&& command -v $(candidate))))
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

# A virtual environment made before errata needed Python 3.12 is not reused.
CHECK_VENV = @$(BIN)/python -c 'import sys; sys.exit(sys.version_info < (3, 12))' || { \
	echo "errata: $(VENV) has a Python older than 3.12: run make clean, then again"; exit 1; }

.PHONY: serve test docs lint clean

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "errata: needs Python 3.12 or newer (PYTHON=/path/to/python3.12)"; exit 1; }
	@echo "errata: creating the virtual environment $(VENV) with $(PYTHON) and upgrading pip"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.runtime: pyproject.toml | $(BIN)/python
	$(CHECK_VENV)
	@echo "errata: installing errata and its dependencies into $(VENV) (a minute or two the first time)"
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.test: pyproject.toml | $(BIN)/python
	$(CHECK_VENV)
	@echo "errata: installing errata with its test extras (JAX among them) into $(VENV) (a few minutes the first time)"
	$(BIN)/pip install --quiet -e '.[test,dev]'
	touch $@ $(VENV)/.runtime

$(VENV)/.docs: pyproject.toml | $(BIN)/python
	$(CHECK_VENV)
	@echo "errata: installing errata with its docs extra (MkDocs, Material for MkDocs) into $(VENV)"
	$(BIN)/pip install --quiet -e '.[docs]'
	touch $@ $(VENV)/.runtime

serve: $(VENV)/.runtime
	@echo "errata: preparing the database (migrations; the seeds if it is empty), then serving http://$(HOST):$(PORT)/ (Ctrl+C stops)"
	$(BIN)/errata serve --host $(HOST) --port $(PORT)

test: $(VENV)/.test
	@test -x /usr/bin/chromium || echo "errata: no /usr/bin/chromium: the browser tests will be skipped (apt-get install chromium)"
	$(BIN)/pytest

docs: $(VENV)/.docs
	@echo "errata: building the documentation (mkdocs.yml, docs/) into site/"
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# What CI checks before the tests: style, types, the floors' imports, and size limits.
lint: $(VENV)/.test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy app errata tools
	$(BIN)/lint-imports
	$(BIN)/python .ci/limits.py app
	$(BIN)/python .ci/limits.py tools

clean:
	rm -rf $(VENV) var site .pytest_cache .mypy_cache .ruff_cache .hypothesis
