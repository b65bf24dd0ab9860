"""``promoter hold`` and ``promoter release``: stop an environment (or one wave of it) for every
trigger, and let it go again (docs/change-control.md#holds)."""

from __future__ import annotations

import os
from typing import Any

import click

from promoter import clock as clocks
from promoter.changecontrol.holds import HOLDS_REF, Hold, HoldBook, actor
from promoter.changecontrol.notify import Event
from promoter.cli.commands.common import CONTROL_PLANE, MAIN_BRANCH, VERBOSE
from promoter.cli.commands.common import control_plane as control_plane_at
from promoter.cli.commands.completion import complete_environments
from promoter.cli.commands.promote import github_options
from promoter.clock import iso, parse_duration, parse_iso
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.errors import PromoterError, UsageError, one_line
from promoter.forges.base import Forge
from promoter.forges.github.urls import github_repo_of
from promoter.gates.hubapi import send_holds
from promoter.masking import mask
from promoter.model import Pipeline
from promoter.promotion import control_wiring
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
    held = Hold(environment, wave, reason.strip(), actor(), now, _until(until, now))
    if dry_run:
        click.echo(f"dry run: would hold {held.where()}: {held.describe()}")
        return
    book = HoldBook(control_wiring.records_for(cp, forge, HOLDS_REF))
    recorded = book.hold(held)
    said = "held {}: {}" if recorded else "{} is already held so: {}"
    click.echo(said.format(held.where(), held.describe()))
    _tell_hub(book, environment, now)  # again when already held: a hub that missed it learns it
    if not recorded:
        return
    event = Event(
        "held",
        environment,
        wave,
        None,
        f"{held.where()}: {held.describe()}",
        now,
        control_wiring.hold_key(environment, wave, now),
    )
    control_wiring.notifier(cp, forge, pipeline, _warn).send([event])


#: The event that wakes the control plane's promotion workflow (docs/github-actions.md#waking-the-promotion).
WAKE = "promoter-wake"
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
    message = f"{where}: released by {actor()}"
    event = Event(
        "released", environment, wave, None, message, now, f"released:{environment}:{wave}:{int(now)}"
    )
    control_wiring.notifier(cp, forge, pipeline, _warn).send([event])
    _wake(cp, github, environment, wave)


def _wake(cp: ControlPlane, github: Any, environment: str, wave: str | None) -> None:
    """Every end of a wait wakes what waits (DESIGN section 13): ``promoter-wake`` to the control
    plane's repository on GitHub (``--control-plane-repo``, ``GITHUB_REPOSITORY`` or ``origin``),
    on its API (``--github-api-url``, ``GITHUB_API_URL``, else the origin's server), with the
    promoter's credentials; without them, how to send it; outside GitHub, how to go on."""
    repo = github_repo_of(cp, github.control_plane_repo, os.environ, github.api_url)
    if repo is None:
        click.echo(
            "the control plane is not on GitHub, so nothing runs by itself: run promoter promote to go on"
        )
        return
    from promoter.forges.github import auth, dispatches  # heavy: PyGithub loads only when GitHub is used
    from promoter.forges.github.api import GitHubHttp  # heavy, as above

    name, api_url = repo
    if auth.credentials_in(os.environ):
        http = GitHubHttp(api_url, clocks.RealClock())
        payload = {"event": "release", "environment": environment, "wave": wave}
        try:
            dispatches.dispatch(
                http, auth.credentials_from_env(http, os.environ, (name,)), name, WAKE, payload
            )
        except PromoterError as err:
            _warn(f"warning: {WAKE} not sent to {name}: {mask(one_line(str(err)))}")
        else:
            click.echo(f"woke the promotion: {WAKE} sent to {name}")
            return
    click.echo(
        f"to go on now, wake the promotion: gh api --method POST repos/{name}/dispatches -f event_type={WAKE} "
        "(with GH_HOST on GitHub Enterprise Server), or run the promote workflow by hand; until then only "
        "a push wakes it"
    )


def _context(
    control_plane: str | None, main_branch: str, environment: str, wave: str | None, github: Any
) -> Any:
    cp = control_plane_at(control_plane, main_branch)
    pipeline = cp.main(cp.resolve(None)).pipeline
    _check(pipeline, environment, wave)
    clock = clocks.RealClock()
    return cp, pipeline, _forge(cp, pipeline, clock, github), clock


def _forge(cp: ControlPlane, pipeline: Pipeline, clock: clocks.Clock, github: Any) -> Forge | None:
    """The forge that records (with its token) and wakes; None on GitHub without credentials in
    the environment, where the records go through git's own (an on-call's SSH key) and nothing
    wakes."""
    from promoter.forges.github.auth import credentials_in  # heavy: PyGithub loads only when GitHub is used

    if forge_kind(pipeline) == "github" and not credentials_in(os.environ):
        return None
    return build_runtime(cp, pipeline, Console(quiet=True), clock=clock, github=github).forge


def _check(pipeline: Pipeline, environment: str, wave: str | None) -> None:
    env = pipeline.environment(environment)
    if env is None:
        names = ", ".join(e.name for e in pipeline.environments)
        raise UsageError(f"{environment}: no such environment (the Pipeline has {names})")
    if wave is not None and wave not in [w.name for w in env.waves]:
        waves = ", ".join(w.name for w in env.waves) or "none"
        raise UsageError(f"--wave {wave}: {environment} has no such wave (its waves: {waves})")


def _until(text: str | None, now: float) -> float | None:
    """``--until``: a time of day (ISO 8601; without a zone, UTC) or a duration from now."""
    if text is None:
        return None
    try:
        return now + parse_duration(text)
    except ValueError:
        pass
    when = parse_iso(text)
    if when is None:
        raise UsageError(
            f"--until {text}: expected a time like 2027-01-04T08:00:00+01:00 or a duration like 4h"
        )
    if when <= now:
        raise UsageError(f"--until {text}: that is in the past ({iso(when)})")
    return when


def _tell_hub(book: HoldBook, environment: str, now: float) -> None:
    """The environment's holds in force now, at the hub named by PROMOTER_HUB_URL (if any)."""
    held = [h.to_json() for h in book.holds(now) if h.environment == environment]
    problem = send_holds(environment, held)
    if problem:
        _warn(f"warning: {problem}")


def _warn(line: str) -> None:
    click.echo(line, err=True)
