"""``-o/--output text|json|yaml`` for every read command: text for people, JSON or YAML for
scripts, in the shapes docs/cli.md documents (keys are only ever added, never renamed)."""

from __future__ import annotations

import json
from typing import Any

import click
import yaml

from promoter.masking import mask

FORMATS = ("text", "json", "yaml")

OUTPUT = click.option(
    "-o",
    "--output",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text for people; json or yaml for scripts (shapes in docs/cli.md).",
)


def dumps(data: Any, fmt: str) -> str:
    """``data`` as JSON (indented) or YAML (block style, keys in the order given), masked."""
    if fmt == "json":
        return mask(json.dumps(data, indent=2)) + "\n"
    return mask(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False))


def emit(data: Any, fmt: str) -> None:
    """Write ``data`` to stdout in ``fmt`` (json or yaml)."""
    click.echo(dumps(data, fmt), nl=False)


def snapshot_of(cp: Any) -> dict[str, Any] | None:
    """Where uncommitted edits were read from, for the machine-readable outputs."""
    snap = cp.snapshot
    if snap is None:
        return None
    return {
        "branch": snap.branch,
        "from": "index" if snap.staged else "working-tree",
        "files": list(snap.files),
    }
