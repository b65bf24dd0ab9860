"""How much reading a rendered tree back and checking it costs, per file:
``python -m benchmarks.readback DIR`` (a tree written by ``promoter render --out DIR``).

Prints the microseconds per file of PyYAML's C loader, of the 1.1-versus-1.2 test, of
``load_rendered`` (what the checks use) and of ``check_tree`` (warm), and how many files took
the fast path (docs/performance.md, "Checking what is rendered")."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from promoter.k8s.manifests import check_tree
from promoter.rendering.parse import _differs, load_rendered

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def per_file(files: dict[str, bytes], step: Callable[[], object]) -> float:
    start = time.perf_counter()
    step()
    return (time.perf_counter() - start) / len(files) * 1e6


def main(folder: Path) -> None:
    files = {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*.yaml"))
        if ".promoter" not in p.parts
    }
    if not files:
        raise SystemExit(f"{folder}: no rendered YAML files")
    texts = [data.decode() for data in files.values()]
    parsed = {path: load_rendered(data) for path, data in files.items()}
    check_tree(parsed)  # compile the validators once
    rows = [
        (
            "PyYAML C loader",
            per_file(files, lambda: [list(yaml.load_all(d, Loader=_Loader)) for d in files.values()]),
        ),
        ("1.1-versus-1.2 test", per_file(files, lambda: [_differs(t) for t in texts])),
        ("load_rendered", per_file(files, lambda: [load_rendered(d) for d in files.values()])),
        ("check_tree (warm)", per_file(files, lambda: check_tree(parsed))),
    ]
    fast = sum(not _differs(t) for t in texts)
    print(f"{len(files)} files, {fast} on the fast path")
    for label, micros in rows:
        print(f"{label:<22}{micros:8.1f} us/file")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
