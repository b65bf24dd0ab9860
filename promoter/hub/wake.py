"""The hub wakes promotions (docs/github-actions.md#the-hub-wakes-the-promotion): when the verdict
of a recorded platform commit changes, ``promoter hub serve --wake-repo OWNER/NAME`` sends the
control plane a ``repository_dispatch`` ``promoter-wake``, so a ``hub`` gate that turns good (or
bad) is seen at once, not at the next heartbeat.

- **What it watches**: per environment, the newest platform commit a promoter recorded
  (``POST /v1/commits``: the ``hub`` gate records the merge it waits on) within ``watch_for``.
- **The verdict** of a commit over its environment's clusters (``rollout.rollout``): ``failure``
  when a cluster failed, ``success`` when every fresh cluster succeeded, ``stale`` when every
  cluster is stale, ``pending`` otherwise. A change to anything but ``pending`` is worth a wake.
- **Debounced**: changes seen within ``debounce`` of each other are one wake (every wake makes
  the control plane do the same work: it reads the state again), so a burst of clusters
  turning green is one dispatch, not one per cluster.
- **Retried** with backoff by the GitHub layer (``GitHubHttp``: 5xx, rate limits, resets), then
  a bounded number of times here (``attempts``, doubling ``backoff``), then dropped with one log
  line: the heartbeat still covers the wait.
- **Bounded**: at most ``MAX_ENVIRONMENTS`` environments watched, one wake in flight.
- **Credentials never logged**: failures are logged through ``mask``; the token is only the
  GitHub layer's ``Authorization`` header.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from promoter.clock import Clock, RealClock
from promoter.errors import PromoterError, UsageError
from promoter.forges.github.urls import DEFAULT_API
from promoter.hub.db import Database
from promoter.hub.rollout import rollout
from promoter.masking import mask

log = logging.getLogger("promoter.hub.wake")

Verdict = Literal["success", "failure", "stale", "pending"]
#: Environments watched at most (the newest recorded commit of each).
MAX_ENVIRONMENTS = 200


def verdict_of(answer: dict[str, Any]) -> Verdict:
    """The verdict of ``GET /v1/rollout``'s answer, over every cluster type."""
    types = list(answer.get("clusterTypes", {}).values())
    if any(t["failed"] for t in types):
        return "failure"
    if types and all(t["total"] and t["stale"] == t["total"] for t in types):
        return "stale"
    # as the gate judges: a type with no fresh cluster waits (zero clusters never passes)
    if types and all(t["total"] > t["stale"] and t["pending"] == 0 and t["success"] > 0 for t in types):
        return "success"
    return "pending"


@dataclass
class Waker:
    """Watches the verdicts; ``tick`` once a second (``start`` runs it on a thread)."""

    db: Database
    send: Callable[[dict[str, Any]], None]  # one dispatch's client_payload; raises PromoterError
    clock: Clock
    stale_after: float = 900.0
    watch_for: float = 24 * 3600.0
    debounce: float = 1.0
    attempts: int = 5
    backoff: float = 2.0
    seen: dict[tuple[str, str], Verdict] = field(default_factory=dict)
    primed: bool = False  # the first tick only learns the verdicts
    due: float | None = None  # when the pending wake goes
    changes: list[dict[str, str]] = field(default_factory=list)
    failures: int = 0
    sent: int = 0

    def tick(self) -> None:
        now = self.clock.wall()
        for change in self._changes(now):
            self.changes.append(change)
            if self.due is None:
                self.due = now + self.debounce
        if self.due is not None and now >= self.due:
            self._send(now)

    def _changes(self, now: float) -> list[dict[str, str]]:
        """The verdicts that changed since the last tick (none on the first: what a hub finds
        when it starts was seen by the runs before it); ``seen`` keeps only the watched commits."""
        out: list[dict[str, str]] = []
        current: dict[tuple[str, str], Verdict] = {}
        with self.db.transaction(write=False) as tx:
            rows = tx.rows(
                "SELECT p.environment, p.sha FROM platform_commits p WHERE p.recorded_at >= ? AND "
                "p.position = (SELECT MAX(q.position) FROM platform_commits q WHERE q.environment = p.environment)"
                " ORDER BY p.recorded_at DESC LIMIT ?",
                (now - self.watch_for, MAX_ENVIRONMENTS),
            )
            for environment, sha in rows:
                verdict = verdict_of(
                    rollout(tx, str(environment), str(sha), now, self.stale_after, with_times=False)
                )
                key = (str(environment), str(sha))
                current[key] = verdict
                if self.primed and verdict not in (self.seen.get(key, "pending"), "pending"):
                    out.append({"environment": key[0], "sha": key[1], "verdict": verdict})
        self.seen, self.primed = current, True
        return out

    def _send(self, now: float) -> None:
        payload = {"event": "hub", **self.changes[-1], "changes": str(len(self.changes))}
        try:
            self.send(payload)
        except PromoterError as err:
            self.failures += 1
            if self.failures >= self.attempts:
                log.warning(
                    "gave up waking the promotion after %d attempts: %s", self.failures, mask(str(err))
                )
                self.changes, self.due, self.failures = [], None, 0
                return
            wait = self.backoff * 2 ** (self.failures - 1)
            log.info("waking the promotion failed (%s); again in %.0fs", mask(str(err)), wait)
            self.due = now + wait
            return
        log.info(
            "woke the promotion: %s %s %s", payload["environment"], payload["sha"][:12], payload["verdict"]
        )
        self.changes, self.due, self.failures = [], None, 0
        self.sent += 1

    def start(self, every: float = 1.0) -> threading.Event:
        """Tick on a daemon thread every ``every`` seconds; set the returned event to stop it."""
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(every):
                try:
                    self.tick()
                except Exception as err:  # the loop outlives a bad tick; logged
                    log.warning("the wake-up loop: %s", mask(str(err)))

        threading.Thread(target=loop, name="promoter-hub-wake", daemon=True).start()
        return stop


def github_sender(repo: str, api_url: str, clock: Clock) -> Callable[[dict[str, Any]], None]:
    """Sends ``promoter-wake`` to ``repo`` through the GitHub layer, with the token or App of
    the environment (``PROMOTER_GITHUB_TOKEN``, or ``PROMOTER_GITHUB_APP_ID`` and its key: the App
    installed on the control plane with Contents write)."""
    from promoter.forges.github.api import GitHubHttp  # heavy: PyGithub only when waking
    from promoter.forges.github.auth import credentials_from_env  # heavy, as above
    from promoter.forges.github.dispatches import dispatch  # heavy, as above

    http = GitHubHttp(api_url, clock, say=log.info)
    credentials = credentials_from_env(http, repositories=(repo,))
    return lambda payload: dispatch(http, credentials, repo, "promoter-wake", payload)


REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def start_waking(db: Database, repo: str, environ: Mapping[str, str] | None = None) -> Waker:
    """``promoter hub serve --wake-repo OWNER/NAME``: the waker on its thread, sending through
    GitHub's API (``GITHUB_API_URL``, else github.com's)."""
    if not REPO.fullmatch(repo):
        raise UsageError(f"--wake-repo {repo!r}: give the control plane as owner/name")
    env = os.environ if environ is None else environ
    clock = RealClock()
    sender = github_sender(repo, env.get("GITHUB_API_URL") or DEFAULT_API, clock)
    waker = Waker(db, sender, clock)
    waker.start()
    log.info("waking %s when a recorded commit's verdict changes", repo)
    return waker
