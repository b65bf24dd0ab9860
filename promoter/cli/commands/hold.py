"""``promoter hold`` and ``promoter release``: stop an environment (or one wave of it) for every
trigger, and let it go again (docs/change-control.md#holds)."""

from __future__ import annotations

import os
from typing import Any

import click

from promoter import clock as clocks
from promoter.changecontrol.holds import HOLDS_REF, Hold, HoldBook, actor
from promoter.cli.commands.common import CONTROL_PLANE, MAIN_BRANCH, VERBOSE
from promoter.cli.commands.common import control_plane as control_plane_at
from promoter.cli.commands.completion import complete_environments
from promoter.cli.github_options import github_options
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.errors import UsageError
from promoter.forges.base import Forge
from promoter.forges.credentials import github_credentials
from promoter.model import Pipeline
from promoter.promotion import control_wiring
from promoter.promotion.holding import check_target, hold_event, release_event, tell_hub, until_of, wake
from promoter.runtime import build_runtime, forge_kind

HOLD_EXAMPLES = """\b
Examples:
  promoter hold prod --reason "incident 4711: payments degraded"
  promoter hold prod --wave canary --reason "canary cluster drained" --until 4h
  promoter hold prod --reason "year-end freeze" --until 2027-01-04T08:00:00+01:00
"""


def _options(command: Any) -> Any:
    options: list[Any] = [
        CONTROL_PLANE,
        click.argument("environment", metavar="ENV", shell_complete=complete_environments),
        click.option("--wave", default=None, metavar="WAVE", help="Only this wave of the environment."),
        MAIN_BRANCH,
        click.option("--dry-run", is_flag=True, help="Say what would be recorded; record nothing."),
        github_options(),
        VERBOSE,
    ]
    for option in reversed(options):
        command = option(command)
    return command


@click.command(epilog=HOLD_EXAMPLES)
@_options
@click.option("--reason", required=True, metavar="TEXT", help="Why: shown wherever the hold is.")
@click.option(
    "--until",
    "until",
    default=None,
    metavar="TIME",
    help="Ends by itself at TIME (ISO 8601) or after a duration (4h).",
)
def hold(
    control_plane: str | None,
    environment: str,
    wave: str | None,
    main_branch: str,
    dry_run: bool,
    github: Any,
    reason: str,
    until: str | None,
) -> None:
    """Hold ENV: no trigger promotes to it until `promoter release` (or --until)."""
    if not reason.strip():
        raise UsageError("--reason: say why the environment is held")
    cp, pipeline, forge, clock = _context(control_plane, main_branch, environment, wave, github)
    now = clock.wall()
    held = Hold(environment, wave, reason.strip(), actor(), now, until_of(until, now))
    if dry_run:
        click.echo(f"dry run: would hold {held.where()}: {held.describe()}")
        return
    book = HoldBook(control_wiring.records_for(cp, forge, HOLDS_REF))
    recorded = book.hold(held)
    said = "held {}: {}" if recorded else "{} is already held so: {}"
    click.echo(said.format(held.where(), held.describe()))
    _tell_hub(book, environment, now)  # again when already held: a hub that missed it learns it
    if recorded:
        control_wiring.notifier(cp, forge, pipeline, _warn).send([hold_event(held)])


RELEASE_EXAMPLES = """\b
Examples:
  promoter release prod
  promoter release prod --wave canary
"""


@click.command(epilog=RELEASE_EXAMPLES)
@_options
def release(
    control_plane: str | None,
    environment: str,
    wave: str | None,
    main_branch: str,
    dry_run: bool,
    github: Any,
) -> None:
    """Release ENV's holds (only WAVE's with --wave) and wake the promotion (promoter-wake)."""
    cp, pipeline, forge, clock = _context(control_plane, main_branch, environment, wave, github)
    now = clock.wall()
    book = HoldBook(control_wiring.records_for(cp, forge, HOLDS_REF))
    where = f"{environment}, wave {wave}" if wave else environment
    if dry_run:
        found = [
            h for h in book.holds(now) if h.environment == environment and (wave is None or h.wave == wave)
        ]
        click.echo(f"dry run: would release {len(found)} hold(s) of {where}")
        return
    released = book.release(environment, wave, actor(), now)
    if not released:
        click.echo(f"{where} is not held")
        return
    for h in released:
        click.echo(f"released {h.where()} (it was {h.describe()})")
    _tell_hub(book, environment, now)
    event = release_event(environment, wave, actor(), now)
    control_wiring.notifier(cp, forge, pipeline, _warn).send([event])
    click.echo(wake(cp, github.control_plane_repo, github.api_url, (environment, wave), _warn))


def _context(
    control_plane: str | None, main_branch: str, environment: str, wave: str | None, github: Any
) -> Any:
    cp = control_plane_at(control_plane, main_branch)
    pipeline = cp.main(cp.resolve(None)).pipeline
    check_target(pipeline, environment, wave)
    clock = clocks.RealClock()
    return cp, pipeline, _forge(cp, pipeline, clock, github), clock


def _forge(cp: ControlPlane, pipeline: Pipeline, clock: clocks.Clock, github: Any) -> Forge | None:
    """The forge that records (with its token) and wakes; None on GitHub without credentials in
    the environment, where the records go through git's own (an on-call's SSH key) and nothing
    wakes."""
    if forge_kind(pipeline) == "github" and not github_credentials(os.environ):
        return None
    return build_runtime(cp, pipeline, Console(quiet=True), clock=clock, github=github).forge


def _tell_hub(book: HoldBook, environment: str, now: float) -> None:
    problem = tell_hub(book, environment, now)
    if problem:
        _warn(f"warning: {problem}")


def _warn(line: str) -> None:
    click.echo(line, err=True)
