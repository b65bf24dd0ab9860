"""Change control wired to the forge in use (DESIGN section 13): where its records live (holds,
notifications: the control-plane repo's origin, with the forge's token on GitHub), the run's
holds and windows (``ChangeControl``), its receivers (``Notifier``), and the events a run's
report tells them."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from promoter import clock as clocks
from promoter.changecontrol.holds import HOLDS_REF, HoldBook
from promoter.changecontrol.notify import NOTIFICATIONS_REF, Event, Notifier
from promoter.changecontrol.records import Records
from promoter.clock import Clock
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.errors import PromoterError
from promoter.forges.base import Forge
from promoter.model import NotifyEvent, Pipeline
from promoter.promotion.control import ChangeControl
from promoter.promotion.options import Options
from promoter.promotion.report import Report


def records_for(cp: ControlPlane, forge: Forge | None, ref: str) -> Records:
    """``ref`` of the control-plane repo: on its ``origin`` when it has one (pushed with the
    forge's token over HTTPS on GitHub; with git's own credentials without a forge), else in the
    repo itself."""
    if not cp.has_origin:
        return Records(cp.git, ref)
    url = cp.origin_url or ""
    auth: Callable[[], Mapping[str, str]] | None = None
    token_of = getattr(forge, "control_plane_token", None)
    if token_of is not None and url.startswith(("https://", "http://")):
        # Deferred: PyGithub and requests, 0.3 s of every start (--help: 607 ms -> about 900 ms).
        from promoter.forges.github.auth import git_auth_env  # heavy: PyGithub loads only when GitHub is used

        def auth() -> Mapping[str, str]:
            return git_auth_env(url, token_of())

    return Records(cp.git, ref, "origin", auth)


def change_control(
    cp: ControlPlane, forge: Forge, clock: Clock, console: Console, options: Options
) -> ChangeControl:
    """The holds and windows a run respects: the windows as the Pipeline on main has them now."""
    try:
        policy: Pipeline | None = cp.main(cp.resolve(None)).pipeline
    except PromoterError:  # a Kalypso control plane has no Pipeline on main: the promoted one's rules
        policy = None
    return ChangeControl(HoldBook(records_for(cp, forge, HOLDS_REF)), clock, console, options, policy)


def notifier(
    cp: ControlPlane,
    forge: Forge | None,
    pipeline: Pipeline,
    say: Callable[[str], None],
    alarm: Callable[[str], None] | None = None,
) -> Notifier:
    """The Pipeline's receivers, their deliveries recorded on the control-plane repo, on the
    CLI's clock (``RealClock``, which tests fake); ``alarm``: where a record that cannot be
    written is said (``say`` with ``warning:`` by default)."""
    records = records_for(cp, forge, NOTIFICATIONS_REF) if pipeline.notifications else None
    wall = clocks.RealClock().wall
    alarm = alarm or (lambda line: say(f"warning: {line}"))
    return Notifier(pipeline.name, pipeline.notifications, records, say, os.environ, wall=wall, alarm=alarm)


def notify(
    report: Report,
    cp: ControlPlane,
    forge: Forge | None,
    pipeline: Pipeline,
    wall: float,
    say: Callable[[str], None],
    alarm: Callable[[str], None] | None = None,
) -> float | None:
    """The run's events told to the Pipeline's receivers, each until they acknowledged it (and
    what is due again of earlier ones); when the next notification to retry is due, if one is."""
    if not pipeline.notifications:
        return None
    sender = notifier(cp, forge, pipeline, say, alarm)
    sender.send(events_of(report, wall))
    return sender.next_retry()


def events_of(report: Report, wall: float) -> list[Event]:
    """What a run's results tell the receivers, each with the key that makes it once. They come
    from recorded state: an environment that succeeded in an earlier run (``skipped``: already
    promoted) is ``done`` again, so what a run killed before it notified is told by the next,
    and the record keeps it from being told twice."""
    events = []
    commit = report.main_commit
    for r in report.results:
        event = _event(r, commit, wall)
        if event is not None:
            events.append(event)
    return events


def _event(r: Any, commit: str, wall: float) -> Event | None:
    env = r.environment
    if r.state in ("success", "noop", "skipped"):
        return Event("done", env, None, commit, f"{env}: done", wall, f"done:{env}:{commit}", r.pr_url)
    if r.state == "failure":
        rolled = "rolled back to " in r.message
        kind: NotifyEvent = "rolled-back" if rolled else "failed"
        return Event(kind, env, None, commit, r.message, wall, f"{kind}:{env}:{commit}", r.pr_url)
    if r.state != "waiting" or r.wait is None:
        return None
    return _wait_event(env, r.wait, commit, wall)


def _wait_event(env: str, w: Any, commit: str, wall: float) -> Event | None:
    """What a wait tells: an approval asked for, a closed window, a hold; other waits nothing."""
    wave = w.wave or None
    if w.waiting_for == "approval":
        return Event("approval", env, wave, commit, w.message, wall, f"approval:{env}:{commit}")
    if w.waiting_for == "window":
        opens = int(w.next_check) if w.next_check is not None else "never"
        return Event("window", env, wave, commit, w.message, wall, f"window:{env}:{wave}:{commit}:{opens}")
    if w.waiting_for == "hold":
        return Event("held", env, wave, commit, w.message, wall, hold_key(env, wave, w.since))
    return None


def hold_key(environment: str, wave: str | None, since: float) -> str:
    """The key of a hold's event: the hold command and a run that meets the hold share it."""
    return f"held:{environment}:{wave}:{int(since)}"
