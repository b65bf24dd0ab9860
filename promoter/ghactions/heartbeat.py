"""The heartbeat, armed only while a promotion waits on something only time or polling ends,
at a cadence that follows how far away that is (docs/github-actions.md#the-heartbeat).

The control plane's ``promote.yml`` runs on three ``schedule`` crons (every ten minutes, hourly,
every six hours), but its job's ``if:`` skips every scheduled run (no runner, nothing billed) but
the one whose cron (``github.event.schedule``) is the cadence the repository variable
``PROMOTER_HEARTBEAT`` names: ``armed`` (every ten minutes), ``armed-hourly``, ``armed-6h``, or
``idle`` (none). Each run of ``promoter promote --wait none --heartbeat-variable NAME`` in
Actions:

- **arms** it (every ten minutes) when it starts, before it changes anything: a run killed
  mid-way (a lost runner, a cancelled job) leaves it armed, and the next heartbeat finishes that
  run's work;
- at its end, arms it at the cadence the nearest next check calls for when the promotion waits on
  time (a bake, a soak, a polled gate, a gate's timeout, a closed change window, a hold with an
  ``until``: ``TIME_WAITS``; an automatic merge to try again; a notification to retry), and
  **disarms** it otherwise: done, held until released, failed, or waiting for an event (a
  person's merge or approval, which the platform repo's wake-up or GitHub's approval starts).

The cadence is the coarsest one no longer than the time left: six-hourly while the next check is
six hours away or more, hourly from one hour, every ten minutes below that (and for a wait with
no known time). So no heartbeat comes later than ten minutes after the next check, and a weekend
behind a closed window costs about twenty runs instead of four hundred.

A variable that does not exist yet counts as armed (the workflow's fallback is the ten-minute
cron): a new control plane's first heartbeat runs, finds nothing and disarms it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence

from promoter.clock import Clock
from promoter.errors import PromoterError
from promoter.forges.github.urls import DEFAULT_API
from promoter.promotion.report import Report
from promoter.promotion.waiting import Wait

#: The waiting reasons only time or polling ends: a run stopped on one keeps the heartbeat armed
#: (a hold only when it has an ``until``, its next check).
TIME_WAITS = frozenset({"bake", "gates", "soak", "window", "hold"})
ARMED, HOURLY, SIX_HOURLY, IDLE = "armed", "armed-hourly", "armed-6h", "idle"
#: Each cadence's cron in the workflows ``promoter init`` writes, and the seconds between runs.
CRONS = {ARMED: "*/10 * * * *", HOURLY: "7 * * * *", SIX_HOURLY: "37 */6 * * *"}
PERIODS = {ARMED: 600.0, HOURLY: 3600.0, SIX_HOURLY: 6 * 3600.0}
#: The variable's name in the workflows ``promoter init`` writes.
VARIABLE = "PROMOTER_HEARTBEAT"


def next_checks(report: Report) -> list[float | None]:
    """The next check of each wait only time or polling ends, in any environment (in a graph,
    several wait at once); None for one whose time is not known (a polled gate)."""
    if report.state != "waiting":
        return []
    return [w.next_check for w in (r.wait for r in report.results) if w is not None and _on_time(w)]


def _on_time(w: Wait) -> bool:
    if w.waiting_for in ("hold", "window"):  # a hold without an until ends by a release, an event
        return w.next_check is not None
    # an automatic merge waiting for GitHub's checks is tried again after the poll interval, and
    # an approval this run could not ask for (one per run) is asked by the next
    return w.waiting_for in TIME_WAITS or w.next_check is not None


def waits_on_time(report: Report) -> bool:
    """The run stopped where only time or polling moves the promotion on."""
    return bool(next_checks(report))


def cadence(checks: Sequence[float | None], wall: float) -> str:
    """The heartbeat's setting for these next checks at ``wall``: the coarsest cadence no longer
    than the time to the nearest of them (ten minutes when one's time is unknown), idle for none."""
    if not checks:
        return IDLE
    if any(c is None for c in checks):
        return ARMED
    left = min(c for c in checks if c is not None) - wall
    for setting in (SIX_HOURLY, HOURLY):
        if left >= PERIODS[setting]:
            return setting
    return ARMED


class Heartbeat:
    """Arms and disarms the heartbeat through a repository variable; a failure to reach it is
    a warning, never the run's failure (the heartbeat then stays as it was)."""

    def __init__(self, put: Callable[[str], None] | None, name: str, warn: Callable[[str], None]) -> None:
        self._put, self.name, self._warn = put, name, warn
        self.value: str | None = None  # what this run last set

    def arm(self) -> None:
        self._set(ARMED)

    def settle(self, report: Report, wall: float, also: float | None = None) -> None:
        """At the run's end: the cadence its waits call for (``also``: one more time something
        is due, a notification to retry)."""
        checks = next_checks(report) + ([also] if also is not None else [])
        self._set(cadence(checks, wall))

    def _set(self, value: str) -> None:
        if self._put is None or self.value == value:
            return
        try:
            self._put(value)
        except PromoterError as err:
            self._warn(f"the heartbeat ({self.name}) stays as it was: {err}")
            return
        self.value = value


def heartbeat(
    name: str,
    api_url: str | None,
    clock: Clock,
    warn: Callable[[str], None],
    environ: Mapping[str, str] | None = None,
) -> Heartbeat:
    """The heartbeat of the control plane this Actions run belongs to (``GITHUB_REPOSITORY``),
    through GitHub's API (``--github-api-url``, else ``GITHUB_API_URL``); one that does nothing
    without a variable name or outside Actions."""
    env = os.environ if environ is None else environ
    repo = env.get("GITHUB_REPOSITORY", "")
    if not name or env.get("GITHUB_ACTIONS") != "true" or not repo:
        return Heartbeat(None, name, warn)
    # Deferred: PyGithub and requests, 0.3 s of every start (--help: 607 ms -> about 900 ms).
    from promoter.forges.github.api import GitHubHttp  # heavy: PyGithub loads only when GitHub is used
    from promoter.forges.github.auth import credentials_from_env  # heavy, as above
    from promoter.forges.github.variables import RepoVariables  # heavy, as above

    http = GitHubHttp(api_url or env.get("GITHUB_API_URL") or DEFAULT_API, clock)
    try:
        credentials = credentials_from_env(http, env, (repo,))
    except PromoterError as err:
        warn(f"the heartbeat ({name}) is not armed: {err}")
        return Heartbeat(None, name, warn)
    variables = RepoVariables(http, credentials, repo)
    return Heartbeat(lambda value: variables.put(name, value), name, warn)
