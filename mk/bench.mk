# Scale and cost (docs/performance.md): `make bench` builds control planes of about 1,000,
# 20,000 and 100,000 files per environment, measures each phase of the promoter against git's
# own floor on this machine, and prints the table and, last, the line for the largest size.
# BENCH_SIZES=S,M picks sizes; BENCH_ARGS="--work DIR --json FILE" keeps the repos and figures.
BENCH_SIZES ?= S,M,L
BENCH_ARGS ?=

.PHONY: bench

bench: $(TEST_STAMP)
	$(BIN)/python -m benchmarks --sizes $(BENCH_SIZES) $(BENCH_ARGS)

# The benchmark code is held to the package's standards (its size S run is in the test suite):
# ruff here, mypy strict with the package in `make typecheck`.
extra-lint:: deps
	$(BIN)/ruff check benchmarks
	$(BIN)/ruff format --check benchmarks

# The deployment observability hub at 10,000 clusters x 20 reconcilers, on SQLite and on a
# PostgreSQL server of its own (docs/performance.md#the-hub). HUB_BENCH_ARGS="--workers 2 --seconds 30".
HUB_BENCH_ARGS ?=

.PHONY: bench-hub

bench-hub: deps
	$(BIN)/python -m benchmarks.hub $(HUB_BENCH_ARGS)
