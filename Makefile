# One-command set-up: `make run` (install + the main job), `make test`, `make check`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install run test test-fast lint format types check app screenshot clean

$(BIN)/advisor: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

install: $(BIN)/advisor

run: install  ## the main job on the embedded default workload
	$(BIN)/advisor recommend --model lstm --deadline 8h

app: install
	$(BIN)/advisor

test: install  ## every test, real TensorFlow fits included (minutes)
	$(BIN)/python -m pytest

test-fast: install  ## everything that needs no TensorFlow (under a minute)
	$(BIN)/python -m pytest -m "not tf"

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

types: install
	$(BIN)/mypy

check: lint types test

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
