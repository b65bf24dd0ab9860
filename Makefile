# The two commands a newcomer needs: `make demo` and `make test`.
# Both install from hash-checked locks (requirements/*.lock, `make lock` refreshes them), so a
# fresh clone installs the same versions next month as today. `make test-newest` runs the same
# suite on the newest releases that pyproject.toml's ranges allow, in a virtualenv of its own.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
WHEELHOUSE := $(VENV)/wheelhouse
NEWEST ?=
PIP := $(BIN)/python -m pip --disable-pip-version-check
# Two workers per core: many tests wait on git, a subprocess or a server, and a second worker per
# core fills that time (measured: 251 s with 4 workers against 301 s with 2 on 2 cores).
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
# Each run's temporary folders (thousands of repositories, about 100,000 files) and its TMPDIR go
# to folders of their own per target under TEST_TMP (one per checkout and virtualenv): in memory
# (/dev/shm) when it has 8 GiB free, else in $TMPDIR. On this machine's disk (ext4, mounted with
# discard) the suite took 516 CPU-seconds and 298 s; in tmpfs 454 and 254. A run that passed
# deletes its folders in the background as it ends (850 MB, in memory when in /dev/shm: a clone
# made for one run and deleted kept them there for good); a failed run's stay for a look, until
# the next run moves them aside and deletes them in the background (pytest's own retention
# deleted the run before last's at the end of each run, one file at a time, with both cores idle).
SHM_FREE := $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $$4}')
TEST_TMP_BASE ?= $(if $(shell [ "$(or $(SHM_FREE),0)" -ge 8388608 ] && echo yes),/dev/shm,$(or $(TMPDIR),/tmp))
ifeq ($(origin TEST_TMP),undefined)  # worked out once, not at each use
TEST_TMP := $(TEST_TMP_BASE)/promoter-tests-$(shell printf '%s' "$(CURDIR)/$(VENV)" | sha256sum | cut -c1-12)
endif
# $(call fresh_tmp,NAME): a fresh $(TEST_TMP)/NAME for pytest's --basetemp and NAME-tmp for TMPDIR.
define fresh_tmp
	@mkdir -p $(TEST_TMP) && for d in $(1) $(1)-tmp; do if [ -e $(TEST_TMP)/$$d ]; then mv $(TEST_TMP)/$$d $(TEST_TMP)/$$d.old.$$$$; fi; done; \
		mkdir $(TEST_TMP)/$(1)-tmp && (nice rm -rf $(TEST_TMP)/$(1).old.* $(TEST_TMP)/$(1)-tmp.old.* >/dev/null 2>&1 </dev/null &)
endef
# $(call passed_tmp,NAME): delete the folders of fresh_tmp's NAME in the background, moved aside
# first (a next run may start before the deletion ends).
define passed_tmp
	@for d in $(1) $(1)-tmp; do mv $(TEST_TMP)/$$d $(TEST_TMP)/$$d.old.$$$$ 2>/dev/null; done; \
		(nice rm -rf $(TEST_TMP)/$(1).old.$$$$ $(TEST_TMP)/$(1)-tmp.old.$$$$ >/dev/null 2>&1 </dev/null &)
endef
# Python caches compiled modules (__pycache__, ignored by git). A machine that turns that off
# (PYTHONDONTWRITEBYTECODE) makes every promoter process the tests and the demo start compile
# the package from source again: the whole promotion of tests/actions/test_waking.py took 33 s
# instead of 17 s.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo demo-hub test deps lint typecheck extra-lint unit versions lock test-newest clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The locked uv (actions/uv.lock, the one the actions install with): the locked installs below
# take it, a tenth of pip's time (pip took 24 s for the two locks on a fresh clone; uv 3 s), and
# `make lock` resolves with it. uv writes no bytecode up front: a module gets its bytecode when
# it is first imported.
# Where uv cannot reach a package index that pip can (pip's own configuration), pip installs.
UV := $(VENV)/uv-tool/bin/uv
LOCKED_OPTIONS := --quiet --require-hashes --no-deps
locked = $(UV) pip install --python $(BIN)/python $(LOCKED_OPTIONS) $(1) \
	|| { echo "uv could not install $(1); pip installs it" >&2; $(PIP) install $(LOCKED_OPTIONS) $(1); }

$(UV): $(BIN)/python actions/uv.lock
	rm -rf $(VENV)/uv-tool
	$(PIP) install --quiet --require-hashes --no-deps --target $(VENV)/uv-tool -r actions/uv.lock
	touch $@

ifeq ($(NEWEST),)
$(STAMP): $(BIN)/python $(UV) requirements/run.lock pyproject.toml
	$(call locked,-r requirements/run.lock)
	$(UV) pip install --quiet --python $(BIN)/python --no-deps --no-build-isolation -e .
	touch $@

$(TEST_STAMP): $(STAMP) requirements/dev.lock
	$(call locked,-r requirements/dev.lock)
	touch $@
else
# The newest releases of everything: no lock, an eager upgrade on every run.
$(STAMP): $(BIN)/python FORCE
	$(PIP) install --quiet --upgrade pip setuptools
	$(PIP) install --quiet --upgrade --upgrade-strategy eager -e '.[hub]'
	touch $@

$(TEST_STAMP): $(STAMP) FORCE
	$(PIP) install --quiet --upgrade --upgrade-strategy eager -e '.[hub,test]'
	touch $@
endif

# The files of the actions' locks for this machine, hash-checked: the install tests and the
# workflow harness install from here with no index (tests/support/wheelhouse.py).
$(WHEELHOUSE)/.complete: $(BIN)/python actions/requirements.lock actions/uv.lock
	rm -rf $(WHEELHOUSE)
	$(PIP) download --quiet --require-hashes --no-deps -d $(WHEELHOUSE) -r actions/requirements.lock -r actions/uv.lock
	touch $@

# The demo's repos and hub database go to $(DEMO_DIR) (made anew by each run, kept after it):
# the next steps it prints work from here, and `make demo-hub` serves the hub's pages of the last run,
# its simulated clusters still reporting (and the next run's database once `make demo` replaces it).
DEMO_DIR ?= demo
demo: $(STAMP)
	rm -rf $(DEMO_DIR)
	$(BIN)/promoter demo --dir $(DEMO_DIR)

demo-hub: $(STAMP)
	@test -f $(DEMO_DIR)/hub.sqlite3 || { echo "no demo hub database in $(DEMO_DIR)/: run make demo first" >&2; exit 2; }
	$(BIN)/promoter hub serve --database $(DEMO_DIR)/hub.sqlite3 --listen 127.0.0.1:8080 --demo-clusters

# What this run installed, first, so that a failure names its cause.
versions: $(TEST_STAMP)
	@$(BIN)/python --version
	@git --version
	@$(PIP) list --format=freeze | tr '\n' ' '; echo

# Tools the tests need from outside PyPI (apt, npm): each scripts/deps/*.sh installs what is missing.
deps: $(TEST_STAMP) $(WHEELHOUSE)/.complete
	@for script in scripts/deps/*.sh; do [ -e "$$script" ] || continue; bash "$$script" || exit 1; done

lint: $(TEST_STAMP)
	$(BIN)/ruff check promoter tests
	$(BIN)/ruff format --check promoter tests

# The package and the benchmarks, strict (pyproject.toml), in one run: two runs each analysed the
# whole package again, 23 CPU-seconds cold against 14 for one.
typecheck: $(TEST_STAMP)
	$(BIN)/mypy promoter benchmarks

# More linters (workflows, actions) add recipes to this double-colon target from mk/*.mk.
extra-lint:: deps

unit: deps
	$(call fresh_tmp,unit)
	TMPDIR=$(TEST_TMP)/unit-tmp $(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist worksteal --basetemp=$(TEST_TMP)/unit
	$(call passed_tmp,unit)

# The suite, the bad-input corpus on the oldest PyYAML and the linters run side by side, their
# output kept apart: the suite keeps both cores busy from its start, and the linters (one core
# each, mypy cold for a minute on a fresh clone) ran alone before it with a core idle.
test: versions
	$(MAKE) --no-print-directory -j3 --output-sync=target unit unit-pyyaml-oldest lint typecheck extra-lint

# Every lock, in one step, with the locked uv.
lock: $(UV)
	UV=$(UV) bash scripts/lock.sh

test-newest:
	$(MAKE) test VENV=.venv-newest NEWEST=1

FORCE:

clean:
	rm -rf $(VENV) .venv-newest build *.egg-info .mypy_cache .pytest_cache .ruff_cache $(TEST_TMP)

-include mk/*.mk
