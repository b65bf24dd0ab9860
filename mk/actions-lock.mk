# The actions' install locks (docs/github-actions.md, "Locked"): `make actions-lock` after a
# dependency changes in pyproject.toml. uv comes from its own hash-checked lock.
.PHONY: actions-lock

actions-lock: $(BIN)/python
	$(BIN)/python -m pip install --quiet --require-hashes -r actions/uv.lock
	UV=$(BIN)/uv bash scripts/lock-actions.sh
