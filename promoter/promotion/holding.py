"""``promoter hold`` and ``release`` as library calls: the environment (and wave) checked
against the Pipeline, ``--until`` read, the events the receivers hear, the hub told what holds
the environment, and a release waking the promotion workflow on GitHub (``promoter-wake``,
docs/github-actions.md#waking-the-promotion)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from promoter import clock as clocks
from promoter.changecontrol.holds import Hold, HoldBook
from promoter.changecontrol.notify import Event
from promoter.clock import iso, parse_duration, parse_iso
from promoter.controlplane.repo import ControlPlane
from promoter.errors import PromoterError, UsageError, one_line
from promoter.forges.credentials import github_credentials
from promoter.forges.github.urls import github_repo_of
from promoter.gates.hubapi import send_holds
from promoter.masking import mask
from promoter.model import Pipeline
from promoter.promotion.control_wiring import hold_key

#: The event that wakes the control plane's promotion workflow (docs/github-actions.md#waking-the-promotion).
WAKE = "promoter-wake"


def check_target(pipeline: Pipeline, environment: str, wave: str | None) -> None:
    """``environment`` is the Pipeline's, and ``wave`` (if given) one of its waves."""
    env = pipeline.environment(environment)
    if env is None:
        names = ", ".join(e.name for e in pipeline.environments)
        raise UsageError(f"{environment}: no such environment (the Pipeline has {names})")
    if wave is not None and wave not in [w.name for w in env.waves]:
        waves = ", ".join(w.name for w in env.waves) or "none"
        raise UsageError(f"--wave {wave}: {environment} has no such wave (its waves: {waves})")


def until_of(text: str | None, now: float) -> float | None:
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


def hold_event(held: Hold) -> Event:
    """What the receivers hear of a new hold (its key shared with a run that meets it)."""
    where = f"{held.where()}: {held.describe()}"
    key = hold_key(held.environment, held.wave, held.at)
    return Event("held", held.environment, held.wave, None, where, held.at, key)


def release_event(environment: str, wave: str | None, who: str, now: float) -> Event:
    """What the receivers hear of a release."""
    where = f"{environment}, wave {wave}" if wave else environment
    key = f"released:{environment}:{wave}:{int(now)}"
    return Event("released", environment, wave, None, f"{where}: released by {who}", now, key)


def tell_hub(book: HoldBook, environment: str, now: float) -> str | None:
    """The environment's holds in force now, at the hub named by PROMOTER_HUB_URL (if any); what
    went wrong, if something did."""
    held = [h.to_json() for h in book.holds(now) if h.environment == environment]
    return send_holds(environment, held)


def wake(
    cp: ControlPlane,
    repo: str | None,
    api_url: str | None,
    event: tuple[str, str | None],
    warn: Callable[[str], None],
    environ: Mapping[str, str] | None = None,
) -> str:
    """Every end of a wait wakes what waits (DESIGN section 13): ``promoter-wake`` for ``event``
    (environment, wave) to the control plane's repository on GitHub (``repo``,
    ``GITHUB_REPOSITORY`` or ``origin``), on its API (``api_url``, ``GITHUB_API_URL``, else the
    origin's server), with the promoter's credentials. What to say: that it woke, how to send it
    without credentials, or, outside GitHub, how to go on."""
    env = os.environ if environ is None else environ
    found = github_repo_of(cp, repo, env, api_url)
    if found is None:
        return "the control plane is not on GitHub, so nothing runs by itself: run promoter promote to go on"
    name, url = found
    if github_credentials(env) and _dispatch(name, url, event, warn, env):
        return f"woke the promotion: {WAKE} sent to {name}"
    return (
        f"to go on now, wake the promotion: gh api --method POST repos/{name}/dispatches -f event_type={WAKE} "
        "(with GH_HOST on GitHub Enterprise Server), or run the promote workflow by hand; until then only "
        "a push wakes it"
    )


def _dispatch(
    name: str,
    api_url: str,
    event: tuple[str, str | None],
    warn: Callable[[str], None],
    env: Mapping[str, str],
) -> bool:
    """``promoter-wake`` sent to ``name``; False (and a warning) when GitHub refused it."""
    # Deferred: PyGithub and requests, 0.3 s of every start (--help: 607 ms -> about 900 ms).
    from promoter.forges.github import auth, dispatches  # heavy: PyGithub loads only when GitHub is used
    from promoter.forges.github.api import GitHubHttp  # heavy, as above

    http = GitHubHttp(api_url, clocks.RealClock())
    environment, wave = event
    payload = {"event": "release", "environment": environment, "wave": wave}
    try:
        dispatches.dispatch(http, auth.credentials_from_env(http, env, (name,)), name, WAKE, payload)
    except PromoterError as err:
        warn(f"warning: {WAKE} not sent to {name}: {mask(one_line(str(err)))}")
        return False
    return True
