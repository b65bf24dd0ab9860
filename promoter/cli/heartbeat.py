"""The heartbeat, armed only while a promotion waits on something only time or polling ends
(docs/github-actions.md#the-heartbeat).

The control plane's ``promote.yml`` runs on a ``schedule``, but its job's ``if:`` skips the
scheduled run (no runner, nothing billed) unless the repository variable ``PROMOTER_HEARTBEAT``
says ``armed``. Each run of ``promoter promote --wait none --heartbeat-variable NAME`` in Actions:

- **arms** it when it starts, before it changes anything: a run killed mid-way (a lost runner,
  a cancelled job) leaves it armed, and the next heartbeat finishes that run's work;
- at its end, leaves it armed when the promotion waits on time (a bake, a soak, a polled gate, a
  gate's timeout, a closed change window: ``TIME_WAITS``, or an automatic merge to try again),
  and **disarms** it otherwise: done, held, failed, or waiting for an event (a person's merge
  or approval, which the platform repo's wake-up or GitHub's approval starts).

A variable that does not exist yet counts as armed (the workflow tests ``!= 'idle'``): a new
control plane's first heartbeat runs, finds nothing and disarms it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from promoter.clock import Clock
from promoter.errors import PromoterError
from promoter.forges.github.urls import DEFAULT_API
from promoter.promotion.report import Report

#: The waiting reasons only time or polling ends: a run stopped on one keeps the heartbeat armed.
TIME_WAITS = frozenset({"bake", "gates", "soak", "window"})
ARMED, IDLE = "armed", "idle"
#: The variable's name in the workflows ``promoter init`` writes.
VARIABLE = "PROMOTER_HEARTBEAT"


def waits_on_time(report: Report) -> bool:
    """The run stopped where only time or polling moves the promotion on, in any environment (in
    a graph, several wait at once)."""
    if report.state != "waiting":
        return False
    # an automatic merge waiting for GitHub's checks is tried again after the poll interval, and
    # an approval this run could not ask for (one per run) is asked by the next
    return any(
        w.waiting_for in TIME_WAITS or (w.waiting_for in ("merge", "approval") and w.next_check is not None)
        for w in (r.wait for r in report.results)
        if w is not None
    )


class Heartbeat:
    """Arms and disarms the heartbeat through a repository variable; a failure to reach it is
    a warning, never the run's failure (the heartbeat then stays as it was)."""

    def __init__(self, put: Callable[[str], None] | None, name: str, warn: Callable[[str], None]) -> None:
        self._put, self.name, self._warn = put, name, warn
        self.value: str | None = None  # what this run last set

    def arm(self) -> None:
        self._set(ARMED)

    def settle(self, report: Report) -> None:
        self._set(ARMED if waits_on_time(report) else IDLE)

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
