# One-command set-up: `make run` (install + the main job), `make test`, `make check`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# SkyPilot (advisor[skypilot]) pins click<8.2: its tests run in a virtual environment of their own.
SKY_VENV ?= .venv-skypilot
SKY_TESTS := tests/bench tests/base/test_imports.py

.PHONY: install run test test-fast test-skypilot refit refit-check lint format types check app screenshot clean

$(BIN)/advisor: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

install: $(BIN)/advisor

$(SKY_VENV)/bin/advisor: pyproject.toml
	$(PYTHON) -m venv $(SKY_VENV)
	$(SKY_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(SKY_VENV)/bin/python -m pip install --quiet -e '.[skypilot,test]'
	@touch $@

run: install  ## the main job on the embedded default workload
	$(BIN)/advisor recommend --model lstm --deadline 8h

app: install
	$(BIN)/advisor

test: install  ## every test, real TensorFlow fits included (minutes)
	$(BIN)/python -m pytest

test-fast: install  ## everything that needs no TensorFlow, JAX or PyTorch training, on two workers (under a minute)
	$(BIN)/python -m pytest -m "not tf and not jax and not torch" -n 2

test-skypilot: $(SKY_VENV)/bin/advisor  ## advisor bench and advisor.skypilot, with SkyPilot installed
	$(SKY_VENV)/bin/python -m pytest $(SKY_TESTS)

refit: install  ## regenerate every fitted file in data/ (python -m advisor.fitting)
	$(BIN)/python -m advisor.fitting

refit-check: install  ## fail when a shipped fitted file is not what its fit derives
	$(BIN)/python -m advisor.fitting --check

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

types: install
	$(BIN)/mypy

check: lint types refit-check test test-skypilot

clean:
	rm -rf $(VENV) $(SKY_VENV) build dist .pytest_cache .mypy_cache .ruff_cache
