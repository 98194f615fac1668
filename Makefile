# Two commands on a fresh machine with only Python 3.11+:
#   make serve   install errata and serve it on SQLite with the seed records loaded
#                (HOST=0.0.0.0 PORT=9000 make serve to listen elsewhere)
#   make test    install errata with its test extras and run the whole suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: serve test lint clean

$(BIN)/python:
	@echo "errata: creating the virtual environment $(VENV) and upgrading pip"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.runtime: pyproject.toml | $(BIN)/python
	@echo "errata: installing errata and its dependencies into $(VENV) (a minute or two the first time)"
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.test: pyproject.toml | $(BIN)/python
	@echo "errata: installing errata with its test extras (JAX among them) into $(VENV) (a few minutes the first time)"
	$(BIN)/pip install --quiet -e '.[test,dev]'
	touch $@ $(VENV)/.runtime

serve: $(VENV)/.runtime
	@echo "errata: preparing the database (migrations; the seeds if it is empty), then serving http://$(HOST):$(PORT)/ (Ctrl+C stops)"
	$(BIN)/errata serve --host $(HOST) --port $(PORT)

test: $(VENV)/.test
	@test -x /usr/bin/chromium || echo "errata: no /usr/bin/chromium: the browser tests will be skipped (apt-get install chromium)"
	$(BIN)/pytest

lint: $(VENV)/.test
	$(BIN)/ruff check .
	$(BIN)/mypy app

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache .hypothesis
