"""``promoter rollback``: restore an environment to its last healthy promotion, by hand."""

from __future__ import annotations

import sys
from typing import Any

import click

from promoter import (
    clock as clocks,  # clocks.RealClock is looked up at run time: tests put a fake in its place
)
from promoter.cli.commands.common import CONTROL_PLANE, MAIN_BRANCH, RENDER_BUDGET, VERBOSE
from promoter.cli.commands.common import control_plane as control_plane_at
from promoter.cli.commands.completion import complete_environments
from promoter.cli.output import OUTPUT, emit
from promoter.clock import parse_duration
from promoter.console import Console
from promoter.errors import UsageError
from promoter.ghactions import runner
from promoter.promotion.flows import Orchestrator
from promoter.promotion.options import Options
from promoter.promotion.rollback import RollbackPlan
from promoter.runtime import build_runtime


@click.command()
@VERBOSE
@RENDER_BUDGET
@CONTROL_PLANE
@click.option(
    "--env",
    "env_name",
    required=True,
    shell_complete=complete_environments,
    help="The environment to roll back.",
)
@click.option(
    "--to",
    "to",
    default=None,
    help="A main commit promoted there before, or a commit of its platform branch "
    "(default: the last healthy promotion before the current one).",
)
@click.option("--poll-interval", default="5s", show_default=True, help="How often to poll the merge.")
@click.option(
    "--dry-run", is_flag=True, help="Say what would be restored and which files change; push nothing."
)
@OUTPUT
@MAIN_BRANCH
def rollback(
    control_plane: str | None,
    env_name: str,
    to: str | None,
    poll_interval: str,
    dry_run: bool,
    output: str,
    main_branch: str,
) -> None:
    """Restore ENV's platform tree to a healthy promotion and hold the commit that was there.

    The restore is merged by the environment's merge policy (a PR for auto and manual, a push
    for direct); the main commit that was deployed gets a failure status, so the next automatic
    run does not promote it again unless --force.

    \b
    Examples:
      promoter rollback --env prod --dry-run         # what would be restored, and which files change
      promoter rollback --env prod                   # the last healthy promotion before the current one
      promoter rollback --env qa --to 4052d4a -o json --dry-run
    """

    if output != "text" and not dry_run:
        raise UsageError("-o/--output json|yaml goes with --dry-run: a rollback itself reports as text")
    cp = control_plane_at(control_plane, main_branch)
    console = Console(stream=sys.stderr if output != "text" else None)  # stdout holds the data
    runtime = build_runtime(cp, cp.main(cp.resolve(None)).pipeline, console)
    try:
        options = Options(poll_interval=parse_duration(poll_interval), run_url=runner.run_url())
    except ValueError as err:
        raise UsageError(f"--poll-interval: {err}") from err
    clock = clocks.RealClock()
    orchestrator = Orchestrator(cp, runtime.platform, runtime.forge, clock, console, options, runtime.routes)
    with runtime.locked(console.say):
        if not dry_run:
            orchestrator.rollback(env_name, to)
            return
        plan = orchestrator.run_for(env_name).rollbacks.plan(env_name, to)
    if output != "text":
        emit(plan_data(plan), output)
        return
    click.echo(
        f"{env_name}: would roll back {plan.env.gitops_branch}@{plan.head[:12]} (main "
        f"{(plan.current or 'unknown')[:12]}) to main {plan.target.main_commit[:12]} (platform "
        f"{plan.target.platform_sha[:12]}), merged by policy {plan.env.merge}: "
        + ("1 file changes" if len(plan.files) == 1 else f"{len(plan.files)} files change")
    )
    for path in plan.files:
        click.echo(f"  {path}")
    click.echo("dry run: nothing pushed")


def plan_data(plan: RollbackPlan) -> dict[str, Any]:
    """``rollback --dry-run -o json|yaml`` (the shape docs/cli.md documents)."""
    return {
        "environment": plan.env.name,
        "platformBranch": plan.env.gitops_branch,
        "platformCommit": plan.head,
        "deployedMainCommit": plan.current,
        "target": {"mainCommit": plan.target.main_commit, "platformCommit": plan.target.platform_sha},
        "merge": plan.env.merge,
        "files": plan.files,
    }
