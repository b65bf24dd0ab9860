"""``promoter promote``: the promotion flow, or the scheduling flow with ``--env``."""

from __future__ import annotations

import sys
from typing import Any

import click

from promoter.commands.common import COMMIT, CONTROL_PLANE, MAIN_BRANCH
from promoter.commands.common import control_plane as control_plane_at
from promoter.errors import UsageError


@click.command()
@CONTROL_PLANE
@COMMIT
@click.option("--to", "to", default=None, help="Promote up to and including this environment.")
@click.option("--env", "env_name", default=None, help="Scheduling flow: re-render this environment only.")
@click.option("--dry-run", is_flag=True, help="Render and report; push, merge and post nothing.")
@click.option(
    "--force",
    is_flag=True,
    help="Skip the guard and retry a held commit; with --to, promote only that environment.",
)
@click.option("--poll-interval", default="5s", show_default=True, help="How often to poll merges.")
@click.option(
    "--progress-interval",
    default="10s",
    show_default=True,
    help="How often to print a progress line while waiting.",
)
@click.option("--output", type=click.Choice(["text", "json"]), default="text", show_default=True)
@MAIN_BRANCH
def promote(
    control_plane: str,
    commit: str | None,
    to: str | None,
    env_name: str | None,
    dry_run: bool,
    force: bool,
    poll_interval: str,
    progress_interval: str,
    output: str,
    main_branch: str,
) -> None:
    """Promote a main commit dev -> qa -> prod, or (--env) re-render one environment."""
    from promoter.app import build_runtime
    from promoter.clock import RealClock, parse_duration
    from promoter.console import Console
    from promoter.orchestrator import Options, Orchestrator

    if to and env_name:
        raise UsageError(
            "--to and --env exclude each other: --env runs the scheduling flow for one environment"
        )
    cp = control_plane_at(control_plane, main_branch)
    sha = cp.resolve(commit)
    console = Console(stream=sys.stderr if output == "json" else None)
    runtime = build_runtime(
        cp, cp.main(cp.resolve(None) if env_name and not commit else sha).pipeline, console
    )
    try:
        options = Options(
            dry_run=dry_run,
            force=force,
            poll_interval=parse_duration(poll_interval),
            progress_interval=parse_duration(progress_interval),
        )
    except ValueError as err:
        raise UsageError(str(err)) from err
    orchestrator = Orchestrator(cp, runtime.platform, runtime.forge, RealClock(), console, options)
    with runtime.platform.locked():
        report = (
            orchestrator.schedule(env_name, commit and sha) if env_name else orchestrator.promote(sha, to)
        )
    if output == "json":
        click.echo(report.dumps())
    else:
        print_summary(report)
    if not report.ok:
        sys.exit(1)


def print_summary(report: Any) -> None:
    from promoter.report import change_summary

    click.echo("")
    click.echo(f"{'environment':<14}{'result':<12}{'files':>7}  {'changes':<16}{'merge commit':<14}gates")
    for r in report.results:
        gates = ", ".join(f"{g.gate}: {g.state}" for g in r.gates) or "-"
        click.echo(
            f"{r.environment:<14}{r.state:<12}{r.files:>7}  {change_summary(r.changes):<16}{(r.merge_sha or '-')[:12]:<14}{gates}"
        )
