# The two commands a newcomer needs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test deps lint typecheck extra-lint unit clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[hub]'
	touch $@

$(TEST_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

demo: $(STAMP)
	$(BIN)/promoter demo

# Tools the tests need from outside PyPI (apt, npm): each scripts/deps/*.sh installs what is missing.
deps: $(TEST_STAMP)
	@for script in scripts/deps/*.sh; do [ -e "$$script" ] || continue; bash "$$script" || exit 1; done

lint: $(TEST_STAMP)
	$(BIN)/ruff check promoter tests
	$(BIN)/ruff format --check promoter tests

typecheck: $(TEST_STAMP)
	$(BIN)/mypy promoter

# More linters (workflows, actions) add recipes to this double-colon target from mk/*.mk.
extra-lint:: deps

unit: deps
	$(BIN)/pytest -q

test: lint typecheck extra-lint unit

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .pytest_cache .ruff_cache

-include mk/*.mk
