"""The hub wakes promotions (docs/hub.md#waking-the-promotion): when the verdict of a recorded
platform commit changes, ``promoter hub serve --wake-repo OWNER/NAME`` sends the control plane a
``repository_dispatch`` ``promoter-wake``, so a ``hub`` gate that turns good (or bad) is seen at
once, not at the next heartbeat.

- **What it watches**: per environment, the newest platform commit a promoter recorded
  (``POST /v1/commits``: the ``hub`` gate records the merge it waits on) within ``watch_for``.
- **The verdict** of a commit over its environment's clusters (``rollout.rollout``, clusters
  silent for ``stale_after`` stale, 30 minutes as the gate's ``staleAfter`` and the reads):
  ``failure`` when a cluster failed, ``success`` when every fresh cluster succeeded, ``stale``
  when every cluster is stale, ``pending`` otherwise. A change to anything but ``pending`` is
  worth a wake.
- **One process wakes**: however many hub processes serve the database, the one holding the
  control plane's lease (``wakestore``, ``LEASE`` seconds, renewed while it runs) watches and
  sends; the verdicts it saw and the wake it has yet to send are in the database, so the one that
  takes over when it stops goes on from there.
- **Debounced**: changes seen within ``debounce`` of each other are one wake (every wake makes
  the control plane do the same work: it reads the state again), so a burst of clusters
  turning green is one dispatch, not one per cluster.
- **Bounded retries**: each attempt is one request (the GitHub layer retries none of them, at
  most ``SEND_TIMEOUT`` seconds); a failed one is tried again ``BACKOFF`` seconds after it
  ended, doubling, ``ATTEMPTS`` attempts in all, then dropped with one log line: the heartbeat
  still covers the wait.
- **Bounded**: at most ``MAX_ENVIRONMENTS`` environments watched, one wake in flight.
- **Credentials never logged**: failures are logged through ``mask``; the token is only the
  GitHub layer's ``Authorization`` header.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import signal
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from promoter.clock import Clock, RealClock, format_duration
from promoter.errors import PromoterError, UsageError
from promoter.forges.github.urls import DEFAULT_API
from promoter.hub import wakestore
from promoter.hub.app import DEFAULT_STALE_AFTER
from promoter.hub.db import Database, Tx, database_errors
from promoter.hub.rollout import rollout
from promoter.hub.wakestore import Key, Pending
from promoter.masking import mask

log = logging.getLogger("promoter.hub.wake")

Verdict = Literal["success", "failure", "stale", "pending"]
#: Environments watched at most (the newest recorded commit of each).
MAX_ENVIRONMENTS = 200
#: Attempts to send one wake, the first included; the first wait after a failed one (doubling).
ATTEMPTS, BACKOFF = 5, 2.0
#: The longest one attempt waits for GitHub's answer.
SEND_TIMEOUT = 10
#: How long a process holds the lease without renewing it: another takes over this long after
#: it stopped (at once when it exits cleanly). Longer than a send, so a holder keeps it through one.
LEASE = 60.0


def verdict_of(answer: dict[str, Any]) -> Verdict:
    """The verdict of ``GET /v1/rollout``'s answer, over every cluster type."""
    types = list(answer.get("clusterTypes", {}).values())
    if any(t["failed"] for t in types):
        return "failure"
    if types and all(_all_stale(t) for t in types):
        return "stale"
    # as the gate judges: a type with no fresh cluster waits (zero clusters never passes)
    if types and all(_succeeded(t) for t in types):
        return "success"
    return "pending"


def _all_stale(tally: dict[str, int]) -> bool:
    """Whether a cluster type has clusters, all of them stale."""
    return bool(tally["total"]) and tally["stale"] == tally["total"]


def _succeeded(tally: dict[str, int]) -> bool:
    """Whether a cluster type has a fresh cluster, none pending and one succeeded."""
    return tally["total"] > tally["stale"] and tally["pending"] == 0 and tally["success"] > 0


@dataclass
class Waker:
    """Watches the verdicts for the control plane ``repo``; ``tick`` once a second (``start``
    runs it on a thread). Of the processes that tick for one repo on one database, the lease's
    holder alone watches and sends (``wakestore``); the others only read the lease."""

    db: Database
    repo: str
    send: Callable[[dict[str, Any]], None]  # one dispatch's client_payload; raises PromoterError
    clock: Clock
    stale_after: float = DEFAULT_STALE_AFTER
    watch_for: float = 24 * 3600.0
    debounce: float = 1.0
    attempts: int = ATTEMPTS
    backoff: float = BACKOFF
    lease: float = LEASE
    holder: str = field(default_factory=wakestore.holder_id)
    sent: int = 0  # wakes this process sent
    stopped: bool = False  # released: ticks do nothing
    _ticking: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def tick(self) -> None:
        with self._ticking:
            if not self.stopped:
                self._tick()

    def _tick(self) -> None:
        now = self.clock.wall()
        if not wakestore.lead(self.db, self.repo, self.holder, now, self.lease):
            return  # another process wakes this control plane
        pending = self._watch(now)
        if pending is not None and pending.due is not None and now >= pending.due:
            self._send(pending)

    def _watch(self, now: float) -> Pending | None:
        """The verdicts compared with the last ones seen (by this process or the holder before
        it), the changes added to the pending wake and written; None when the lease was lost."""
        with self.db.transaction(write=False) as tx:
            current = self._verdicts(tx, now)
            last = wakestore.watch_of(tx, self.repo)
        seen = {key: verdict for key, verdict in current.items() if last.known.get(key) != verdict}
        gone = [key for key in last.known if key not in current]
        if last.watching and not seen and not gone:
            return last.pending
        # the first waker of a database learns the verdicts: what it finds was seen by the runs before it
        changes = changed(last.known, current) if last.watching else []
        pending = with_changes(last.pending, changes, now + self.debounce)
        return pending if wakestore.save(self.db, self.repo, self.holder, pending, seen, gone) else None

    def _verdicts(self, tx: Tx, now: float) -> dict[Key, Verdict]:
        """The verdict of each environment's newest recorded commit within ``watch_for``."""
        rows = tx.rows(
            "SELECT p.environment, p.sha FROM platform_commits p WHERE p.recorded_at >= ? AND "
            "p.position = (SELECT MAX(q.position) FROM platform_commits q WHERE q.environment = p.environment)"
            " ORDER BY p.recorded_at DESC LIMIT ?",
            (now - self.watch_for, MAX_ENVIRONMENTS),
        )
        return {
            (str(environment), str(sha)): verdict_of(
                rollout(tx, str(environment), str(sha), now, self.stale_after, with_times=False)
            )
            for environment, sha in rows
        }

    def _send(self, pending: Pending) -> None:
        payload = {
            "event": "hub",
            "environment": pending.environment,
            "sha": pending.sha,
            "verdict": pending.verdict,
            "changes": str(pending.changes),
        }
        try:
            self.send(payload)
        except PromoterError as err:
            self._failed(pending, err)
            return
        self.sent += 1
        log.info("woke %s: %s %s %s", self.repo, pending.environment, pending.sha[:12], pending.verdict)
        self._keep(Pending())

    def _failed(self, pending: Pending, err: PromoterError) -> None:
        """Back off from the end of the failed send (a send may take seconds), doubling; after
        ``attempts`` attempts drop the wake with one line: the heartbeat still covers the wait."""
        after, attempts = self.clock.wall(), pending.attempts + 1
        if attempts >= self.attempts:
            log.warning(
                "gave up waking %s after %d attempts (the heartbeat still covers the wait): %s",
                self.repo,
                attempts,
                mask(str(err)),
            )
            self._keep(Pending())
            return
        wait = self.backoff * 2 ** (attempts - 1)
        log.info("waking %s failed (%s); again in %.0fs", self.repo, mask(str(err)), wait)
        self._keep(replace(pending, attempts=attempts, due=after + wait))

    def _keep(self, pending: Pending) -> None:
        if not wakestore.save(self.db, self.repo, self.holder, pending):
            log.warning("another hub process took over waking %s during a send", self.repo)

    def release(self) -> None:
        """Stop, once a tick under way (a send) ended, and let the lease go, so another process
        takes over at its next tick; a database that is down is a logged line (the lease runs out)."""
        with self._ticking:
            self.stopped = True
            try:
                wakestore.release(self.db, self.repo, self.holder)
            except database_errors() as err:
                log.warning("could not let the wake-up lease go: %s", mask(str(err)))

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


def changed(known: Mapping[Key, str], current: Mapping[Key, Verdict]) -> list[dict[str, str]]:
    """The verdicts worth a wake: changed to anything but pending (a commit not seen before was
    pending)."""
    return [
        {"environment": environment, "sha": sha, "verdict": verdict}
        for (environment, sha), verdict in current.items()
        if verdict not in (known.get((environment, sha), "pending"), "pending")
    ]


def with_changes(pending: Pending, changes: list[dict[str, str]], due: float) -> Pending:
    """``pending`` with ``changes`` added: they ride on its wake, due when it was (a wake backing
    off keeps its time), else at ``due``."""
    if not changes:
        return pending
    newest = changes[-1]
    return Pending(
        pending.changes + len(changes),
        newest["environment"],
        newest["sha"],
        newest["verdict"],
        due if pending.due is None else pending.due,
        pending.attempts,
    )


def github_sender(
    repo: str, api_url: str, clock: Clock, environ: Mapping[str, str] | None = None
) -> Callable[[dict[str, Any]], None]:
    """Sends ``promoter-wake`` to ``repo`` through the GitHub layer, with the token or App of
    the environment (``PROMOTER_GITHUB_TOKEN``, or ``PROMOTER_GITHUB_APP_ID`` and its key: the App
    installed on the control plane with Contents write). Each send is one request (an App's
    token aside), of at most ``SEND_TIMEOUT`` seconds: the layer retries none of them, so the
    waker's own backoff is the only one, and the attempts the docs state are the requests made."""
    from promoter.forges.github.api import GitHubHttp  # heavy (PyGithub, 400 ms): only when waking
    from promoter.forges.github.auth import credentials_from_env  # heavy, as above
    from promoter.forges.github.dispatches import dispatch  # heavy, as above
    from promoter.forges.github.policy import RetryPolicy  # heavy, as above

    http = GitHubHttp(api_url, clock, RetryPolicy(attempts=1, timeout=SEND_TIMEOUT), say=log.info)
    credentials = credentials_from_env(http, environ, repositories=(repo,))
    return lambda payload: dispatch(http, credentials, repo, "promoter-wake", payload)


def release_on_exit(waker: Waker) -> None:
    """The waker lets its lease go when the process exits: at its end (``atexit``: Ctrl-C, or
    uvicorn's supervisor of ``--workers`` stopping) and on SIGTERM, which a single uvicorn
    process raises again once it shut down, to its handler of before (this one, then the default)."""
    atexit.register(waker.release)
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers are the main thread's
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return  # someone else's: left alone

    def terminated(signum: int, frame: object) -> None:
        waker.release()
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)

    signal.signal(signal.SIGTERM, terminated)


REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def start_waking(
    db: Database,
    repo: str,
    environ: Mapping[str, str] | None = None,
    stale_after: float = DEFAULT_STALE_AFTER,
) -> Waker:
    """``promoter hub serve --wake-repo OWNER/NAME [--wake-stale-after D]``: the waker on its
    thread, sending through GitHub's API (``GITHUB_API_URL``, else github.com's); it lets its
    lease go when the process exits."""
    if not REPO.fullmatch(repo):
        raise UsageError(f"--wake-repo {repo!r}: give the control plane as owner/name")
    env = os.environ if environ is None else environ
    clock = RealClock()
    sender = github_sender(repo, env.get("GITHUB_API_URL") or DEFAULT_API, clock, env)
    waker = Waker(db, repo, sender, clock, stale_after=stale_after)
    waker.start()
    release_on_exit(waker)
    log.info(
        "waking %s when a recorded commit's verdict changes (stale after %s; one hub process at a time)",
        repo,
        format_duration(stale_after),
    )
    return waker
