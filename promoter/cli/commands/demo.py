"""``promoter demo``: the sample control plane promoted dev -> qa -> prod."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from promoter.cli.commands.promote import print_summary
from promoter.cli.demo import run_demo
from promoter.clock import parse_duration
from promoter.errors import UsageError


@click.command()
@click.option(
    "--dir",
    "directory",
    default=None,
    type=click.Path(file_okay=False),
    help="Where to create the demo repos (default: a new temporary directory).",
)
@click.option("--progress-interval", default="1s", show_default=True)
def demo(directory: str | None, progress_interval: str) -> None:
    """Build the sample control plane into fresh repos and promote it dev -> qa -> prod.

    \b
    Examples:
      promoter demo                             # in a new temporary directory
      promoter demo --dir /tmp/promoter-demo    # keep the repos somewhere known
    """

    try:
        interval = parse_duration(progress_interval)
    except ValueError as err:
        raise UsageError(f"--progress-interval: {err}") from err
    report = run_demo(Path(directory) if directory else None, interval)
    print_summary(report)
    if not report.ok:
        sys.exit(1)
