"""A rendered tree written out (``promoter render``): into a folder that is empty, missing, or
holds an earlier render (known by its marker file, and replaced whole), or as one multi-document
YAML stream, each document headed by its path."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from promoter.errors import UsageError


def write_tree(target: Path, out: str, files: Mapping[str, bytes], marker: str) -> None:
    """Write ``files`` under ``target`` (``--out`` ``out``): empty, missing, or an earlier render,
    one holding ``marker`` (replaced)."""
    if target.exists() and any(target.iterdir()):
        if not (target / marker).exists():
            raise UsageError(f"--out {out}: not empty and not an earlier render; choose an empty directory")
        shutil.rmtree(target)
    for path, data in files.items():
        dest = target / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)


def stream(files: Mapping[str, bytes]) -> str:
    """The rendered files as one multi-document YAML, each document headed by its path
    (``# Source: <path>``, as ``helm template`` does), in path order."""
    parts = []
    for path in sorted(files):
        text = files[path].decode("utf-8").removeprefix("---\n")
        parts.append(f"---\n# Source: {path}\n{text}" + ("" if text.endswith("\n") else "\n"))
    return "".join(parts)
