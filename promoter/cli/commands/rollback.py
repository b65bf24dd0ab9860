"""``promoter rollback``: restore an environment to its last healthy promotion, by hand."""

from __future__ import annotations

import click

from promoter import (
    clock as clocks,  # clocks.RealClock is looked up at run time: tests put a fake in its place
)
from promoter.cli import actions_output
from promoter.cli.commands.common import CONTROL_PLANE, MAIN_BRANCH
from promoter.cli.commands.common import control_plane as control_plane_at
from promoter.clock import parse_duration
from promoter.console import Console
from promoter.errors import UsageError
from promoter.promotion.flows import Orchestrator
from promoter.promotion.options import Options
from promoter.runtime import build_runtime


@click.command()
@CONTROL_PLANE
@click.option("--env", "env_name", required=True, help="The environment to roll back.")
@click.option(
    "--to",
    "to",
    default=None,
    help="A main commit promoted there before, or a commit of its platform branch "
    "(default: the last healthy promotion before the current one).",
)
@click.option("--poll-interval", default="5s", show_default=True, help="How often to poll the merge.")
@MAIN_BRANCH
def rollback(
    control_plane: str | None, env_name: str, to: str | None, poll_interval: str, main_branch: str
) -> None:
    """Restore ENV's platform tree to a healthy promotion and hold the commit that was there.

    The restore is merged by the environment's merge policy (a PR for auto and manual, a push
    for direct); the main commit that was deployed gets a failure status, so the next automatic
    run does not promote it again unless --force.
    """

    cp = control_plane_at(control_plane, main_branch)
    console = Console()
    runtime = build_runtime(cp, cp.main(cp.resolve(None)).pipeline, console)
    try:
        options = Options(poll_interval=parse_duration(poll_interval), run_url=actions_output.run_url())
    except ValueError as err:
        raise UsageError(f"--poll-interval: {err}") from err
    orchestrator = Orchestrator(cp, runtime.platform, runtime.forge, clocks.RealClock(), console, options)
    with runtime.platform.locked():
        orchestrator.rollback(env_name, to)
