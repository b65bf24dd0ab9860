"""One measurement in a process of its own (so that its peak memory is its own), printed as
JSON: ``python -m benchmarks.measure <scenario> <root>``. The parent, ``python -m benchmarks``,
sets the git configuration, the cache directory and the order of the scenarios."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from benchmarks import floor, github_requests, scenarios, wave_gap


def measure(kind: str, root: Path) -> dict[str, Any]:
    control_plane = root / "control-plane"
    if kind == "github":
        return github_requests.measure(root)
    if kind == "wave-gap":
        return wave_gap.measure(root)
    if kind == "floor":
        return floor.measure_control_plane(control_plane, "dev", root / "floor.git")
    if kind == "full":
        result = scenarios.run_flow(control_plane, env="dev", scheduling=False)
    elif kind in ("incremental", "noop", "cold"):
        result = scenarios.run_flow(control_plane, env="dev", scheduling=True)
    else:
        raise SystemExit(f"unknown measurement {kind!r}")
    result["peak_mb"] = scenarios.peak_mb()
    result["cache_objects"] = scenarios.objects_in(Path(result["cache"]))
    return result


def main(argv: list[str]) -> int:
    kind, root = argv
    print(json.dumps(measure(kind, Path(root))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
