"""``promoter demo``: the sample control plane promoted dev -> qa -> prod."""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import click

from promoter.cli.table import print_summary
from promoter.clock import parse_duration
from promoter.console import terminal_width
from promoter.demos.promotion import demo_run
from promoter.errors import UsageError, shorten


@click.command()
@click.option(
    "--dir",
    "directory",
    default=None,
    type=click.Path(file_okay=False),
    help="Where to create the demo repos (default: a new temporary directory).",
)
@click.option(
    "--progress-interval",
    default="1s",
    show_default=True,
    help="How often a wait prints where it is (a duration: 500ms, 1s, 1m).",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Print every step of the promotion (render, push, merge, each gate's progress), as promote does.",
)
def demo(directory: str | None, progress_interval: str, verbose: bool) -> None:
    """Build the sample control plane into fresh repos and promote it dev -> qa -> prod.

    \b
    Examples:
      promoter demo                             # in a new temporary directory
      promoter demo --dir /tmp/promoter-demo    # keep the repos somewhere known
      promoter demo -v                          # every step, not one line per environment
    """

    try:
        interval = parse_duration(progress_interval)
    except ValueError as err:
        raise UsageError(f"--progress-interval: {err}") from err
    report, steps = demo_run(Path(directory) if directory else None, interval, verbose)
    table = io.StringIO()
    with contextlib.redirect_stdout(table):
        print_summary(report)
    width = None if verbose else terminal_width(sys.stdout)
    for line in table.getvalue().splitlines():
        click.echo(shorten(line, width - 1) if width else line)
    for line in steps:
        click.echo(line)  # whole, even on a narrow terminal: each is a command to copy
    if not report.ok:
        sys.exit(1)
