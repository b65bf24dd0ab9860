# The bad-input corpus on the oldest PyYAML that pyproject.toml allows (the locked one is the
# newest), part of `make test`: every scanner, parser and composer error of either version must read as promoter's
# own one-line error (docs/architecture.md, "Bad input"). The corpus's cases run through validate
# alone here (PROMOTER_TEST_PYYAML=oldest): that promote pushes nothing on bad input does not
# depend on which PyYAML read it, and the locked version's run checks it.
PYYAML_OLDEST := $(VENV)/pyyaml-oldest

.PHONY: unit-pyyaml-oldest

$(PYYAML_OLDEST)/.complete: $(BIN)/python $(UV) requirements/pyyaml-oldest.lock
	rm -rf $(PYYAML_OLDEST)
	$(call locked,--target $(PYYAML_OLDEST) -r requirements/pyyaml-oldest.lock)
	touch $@

# One process, no workers: it runs beside the whole suite, which keeps both cores busy, and xdist's
# workers cost more CPU than they save here (41 CPU-seconds with four, 31 with none).
unit-pyyaml-oldest: deps $(PYYAML_OLDEST)/.complete
	$(call fresh_tmp,pyyaml-oldest)
	TMPDIR=$(TEST_TMP)/pyyaml-oldest-tmp PYTHONPATH=$(PYYAML_OLDEST) PROMOTER_TEST_PYYAML=oldest $(BIN)/pytest -q -p no:cacheprovider \
		--basetemp=$(TEST_TMP)/pyyaml-oldest \
		tests/controlplane/test_bad_input.py tests/controlplane/test_bad_input_hostile.py::test_hostile_input \
		tests/kalypso/test_bad_input.py tests/controlplane/test_pyyaml_version.py
	$(call passed_tmp,pyyaml-oldest)
