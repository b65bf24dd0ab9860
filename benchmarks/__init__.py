"""Scale and cost benchmarks: synthetic control planes at sizes S, M and L, the promoter's cost
per phase, and git's own floor measured in the same run (see docs/performance.md)."""
