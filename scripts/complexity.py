"""Issue 51's measure of how branched the package is: radon's cyclomatic complexity over
``promoter/``, functions and methods (classes aside): how many, their average, and how many are
at rank C or worse (over 10). Run: ``.venv/bin/python scripts/complexity.py``."""

from __future__ import annotations

import json
import subprocess
import sys


def main() -> None:
    found = subprocess.run(
        [sys.executable, "-m", "radon", "cc", "-j", "promoter"], capture_output=True, text=True, check=True
    )
    blocks = [
        block
        for listed in json.loads(found.stdout).values()
        if isinstance(listed, list)
        for block in listed
        if block["type"] in ("function", "method")
    ]
    total = sum(block["complexity"] for block in blocks)
    branched = sum(1 for block in blocks if block["complexity"] > 10)
    print(
        f"functions {len(blocks)}  average {total / len(blocks):.2f}  "
        f"rank C or worse {branched} ({100 * branched / len(blocks):.2f}%)"
    )


if __name__ == "__main__":
    main()
