# Two commands on a fresh machine with only Python 3.11+:
#   make serve   install errata and serve it on SQLite with the seed records loaded
#   make test    install errata with its test extras and run the whole suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: serve test lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.runtime: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test,dev]'
	touch $@ $(VENV)/.runtime

serve: $(VENV)/.runtime
	$(BIN)/errata serve --host $(HOST) --port $(PORT)

test: $(VENV)/.test
	$(BIN)/pytest

lint: $(VENV)/.test
	$(BIN)/ruff check .
	$(BIN)/mypy app

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache .hypothesis
