"""The hub wakes promotions (promoter/hub/wake.py, wakestore.py): one dispatch per verdict change
of the newest recorded commit, however many hub processes serve the database (a lease in it),
debounced, retried from the end of each failed send and bounded; sent through the GitHub layer in
GitHub's shapes (``responses``, and a loopback stand-in for real ``hub serve`` processes), the
token never logged. On SQLite and PostgreSQL."""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import responses
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.clock import FakeClock, RealClock
from promoter.errors import ForgeError, GateTimedOut, UsageError
from promoter.forges.github.api import GitHubHttp
from promoter.forges.github.auth import StaticToken
from promoter.forges.github.dispatches import dispatch
from promoter.gates import GateContext, build_gate
from promoter.gates.runner import run_gates
from promoter.hub import keys, wakestore
from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from promoter.hub.payloads import Report
from promoter.hub.store import store_report
from promoter.hub.wake import ATTEMPTS, BACKOFF, LEASE, Waker, github_sender, start_waking, verdict_of
from promoter.model import GateSpec, Source
from promoter.platform.repo import PlatformRepo
from tests.support.hub_support import (
    LiveHub,
    flux_event,
    give_back_pg_database,
    new_pg_database,
    platform_repo,
    post_flux,
    register,
    served,
)

M = "1" * 40
T = 1_000_000.0
API = "https://api.github.com"
REPO = "acme/control-plane"


class At:
    """A clock whose wall time is the hub's (the reports' and commits' times)."""

    def __init__(self, t: float) -> None:
        self.t = t

    def now(self) -> float:
        return self.t

    wall = now

    def sleep(self, seconds: float) -> None:
        self.t += seconds

    advance = sleep


def dev_with_three_clusters(database: Database, at: float = T) -> None:
    record_commit(
        database, CommitRecord("dev", M, "dev", None, "main-1", None, (("small", "t"),), ("dev",)), at
    )
    for name in ("c1", "c2", "c3"):
        keys.add_cluster_key(database, name, "dev", "small")


@pytest.fixture
def db(hub_db: Database) -> Database:
    """M recorded in dev, three clusters of one type: on SQLite and on PostgreSQL."""
    dev_with_three_clusters(hub_db)
    return hub_db


@pytest.fixture
def other(db: Database) -> Iterator[Database]:
    """The same database through connections of its own: another hub process's."""
    second = Database(db.url)
    yield second
    second.close()


def report(db: Database, cluster: str, state: str, at: float) -> None:
    with db.transaction() as tx:
        found = keys.cluster(tx, cluster)
    assert found is not None
    event = Report("native", "platform", "apply", state, M, "dev", state, "", None)  # type: ignore[arg-type]
    store_report(db, found, event, f"{cluster}-{state}-{at}", at)


def watched(database: Database) -> wakestore.Watch:
    with database.transaction(write=False) as tx:
        return wakestore.watch_of(tx, REPO)


def pending(database: Database) -> wakestore.Pending:
    return watched(database).pending


def known(database: Database) -> dict[tuple[str, str], str]:
    return dict(watched(database).known)


def test_one_wake_per_verdict_change_not_one_per_cluster(db: Database) -> None:
    clock, sent = At(T), []
    waker = Waker(db, REPO, sent.append, clock, debounce=1.0)
    waker.tick()  # nothing reported yet: pending
    for i, cluster in enumerate(("c1", "c2", "c3")):
        report(db, cluster, "success", T + 10 + i)
        clock.advance(0.4)
        waker.tick()
    assert sent == []  # still within the debounce of the change
    clock.advance(1.0)
    waker.tick()
    waker.tick()
    assert sent == [{"event": "hub", "environment": "dev", "sha": M, "verdict": "success", "changes": "1"}]
    report(db, "c2", "failure", T + 30)
    clock.advance(2.0)
    waker.tick()
    clock.advance(2.0)
    waker.tick()
    assert [p["verdict"] for p in sent] == ["success", "failure"]


def test_a_failed_dispatch_is_retried_with_backoff_then_given_up(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    clock, tries = At(T), []

    def failing(payload: dict[str, str]) -> None:
        tries.append(clock.wall())
        raise ForgeError("GitHub dispatch: 502 Bad Gateway, token ghs_secret0123456789")

    waker = Waker(db, REPO, failing, clock, debounce=0.0, attempts=3, backoff=2.0)
    waker.tick()  # the first tick learns the verdicts: pending
    for cluster in ("c1", "c2", "c3"):
        report(db, cluster, "success", T + 10)
    caplog.set_level(logging.INFO, "promoter.hub.wake")
    for _ in range(20):
        waker.tick()
        clock.advance(1.0)
    assert [t - tries[0] for t in tries] == [0.0, 2.0, 6.0]  # 2 s, then 4 s
    assert pending(db) == wakestore.Pending()  # given up: the heartbeat still covers it
    assert "gave up waking acme/control-plane after 3 attempts" in caplog.text


def test_what_a_hub_finds_when_it_starts_wakes_nothing(db: Database) -> None:
    for cluster in ("c1", "c2", "c3"):
        report(db, cluster, "success", T + 10)
    clock, sent = At(T + 20), []
    waker = Waker(db, REPO, sent.append, clock, debounce=0.0)
    waker.tick()
    waker.tick()
    assert sent == [] and known(db) == {("dev", M): "success"}
    report(db, "c1", "failure", T + 30)  # a change after it started: a wake
    waker.tick()
    assert [p["verdict"] for p in sent] == ["failure"]


def test_the_verdicts() -> None:
    def counts(**c: int) -> dict[str, int]:
        return {"total": sum(c.values()), "success": 0, "failed": 0, "pending": 0, "stale": 0, **c}

    assert (
        verdict_of({"clusterTypes": {"a": counts(success=2), "b": counts(success=1, stale=1)}}) == "success"
    )
    assert verdict_of({"clusterTypes": {"a": counts(success=2, failed=1)}}) == "failure"
    assert verdict_of({"clusterTypes": {"a": counts(stale=2)}}) == "stale"
    assert verdict_of({"clusterTypes": {"a": counts(success=1, pending=1)}}) == "pending"
    assert verdict_of({"clusterTypes": {}}) == "pending"


@responses.activate
def test_the_dispatch_is_githubs_repository_dispatch() -> None:
    responses.post(
        re.compile(r"https://api\.github\.com(:443)?/repos/acme/control-plane/dispatches"), status=204
    )
    http = GitHubHttp(API, FakeClock(start=T))
    dispatch(
        http, StaticToken("ghs_token"), "acme/control-plane", "promoter-wake", {"event": "hub", "sha": M}
    )
    (call,) = responses.calls
    assert json.loads(call.request.body or b"") == {
        "event_type": "promoter-wake",
        "client_payload": {"event": "hub", "sha": M},
    }
    assert call.request.headers["Authorization"] == "token ghs_token"


def test_a_bad_wake_repo_is_a_usage_error(db: Database) -> None:
    with pytest.raises(UsageError, match="--wake-repo 'acme': give the control plane as owner/name"):
        start_waking(db, "acme", {})


def test_the_hub_wakes_a_waiting_hub_gate_within_5s_of_the_verdict(
    live_hub: LiveHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real hub over HTTP, the waker on its thread (as ``hub serve --wake-repo`` runs it),
    and on the dispatch the woken run's check of the ``hub`` gate (what a control-plane run does
    first): from the last cluster's report to the gate's pass. GitHub's start-up of the run is
    not in it."""
    url, (_, m) = platform_repo(tmp_path)
    platform = PlatformRepo(url)
    platform.fetch(["dev"])
    monkeypatch.setenv("PROMOTER_HUB_TOKEN", keys.add_promoter_key(live_hub.db, "ci")[1])
    small, large = register(live_hub.db, "edge-1"), register(live_hub.db, "east-1", cluster_type="large")
    g = build_gate(GateSpec("hub", {"url": live_hub.url, "interval": "1s"}, Source("promoter.yaml", 3)))
    clock = RealClock()
    context = GateContext("dev", "c" * 40, m, url, "dev", clock, platform=platform)
    with pytest.raises(GateTimedOut):  # the first run records M and waits: the promotion waits on the hub
        run_gates([g], context, clock.now() + 0.5, lambda _: None, 3600)
    passed: list[float] = []

    def woken(payload: dict[str, str]) -> None:  # the dispatched run checks the gate once
        [outcome] = run_gates([g], context, clock.now() + 30, lambda _: None, 3600)
        assert (payload["verdict"], outcome.state) == ("success", "success")
        passed.append(time.time())

    waker = Waker(live_hub.db, REPO, woken, clock, debounce=0.5)
    stop = waker.start(every=0.25)
    try:
        time.sleep(0.5)  # a tick or two: pending, nothing sent
        post_flux(live_hub.url, "east-1", large, flux_event(f"dev@sha1:{m}"))
        time.sleep(0.5)  # one type of two: still pending
        verdict = time.time()  # the last cluster's report: the verdict
        post_flux(live_hub.url, "edge-1", small, flux_event(f"dev@sha1:{m}"))
        deadline = time.time() + 10
        while not passed and time.time() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
    assert passed, "no wake within 10 s"
    print(f"\n(d) the hub's verdict to the hub gate's pass in the woken run: {passed[0] - verdict:.2f}s")
    assert passed[0] - verdict <= 5.0 and waker.sent == 1


def test_two_hub_processes_send_one_wake_per_verdict_change(db: Database, other: Database) -> None:
    """Two hub processes of one database (each its own connections), ticking in turn as their
    threads do, in either order: the lease's holder alone watches and sends, one wake a change."""
    clock, first, second = At(T), [], []
    a = Waker(db, REPO, first.append, clock, debounce=0.0)
    b = Waker(other, REPO, second.append, clock, debounce=0.0)

    def ticks(n: int) -> None:
        for i in range(n):
            for waker in (a, b) if i % 2 else (b, a):
                waker.tick()
            clock.advance(1.0)

    ticks(2)  # one of them took the lease and learned the verdict: pending
    for cluster in ("c1", "c2", "c3"):
        report(db, cluster, "success", T + 10)
    ticks(4)
    report(db, "c2", "failure", T + 20)
    ticks(4)
    sent = first + second
    assert [p["verdict"] for p in sent] == ["success", "failure"] and [] in (first, second)
    assert known(db) == {("dev", M): "failure"} and pending(db) == wakestore.Pending()


def test_the_process_that_takes_over_goes_on_where_the_holder_stopped(db: Database, other: Database) -> None:
    """The holder failed an attempt and stopped (killed: its lease runs out); the other process
    takes over once it ran out, with the attempt made and a change seen while nobody watched."""
    clock, tries, sent = At(T), [], []

    def failing(payload: dict[str, str]) -> None:
        tries.append(clock.wall())
        raise ForgeError("GitHub dispatch promoter-wake to acme/control-plane: HTTP 500")

    a = Waker(db, REPO, failing, clock, debounce=0.0)
    b = Waker(other, REPO, sent.append, clock, debounce=0.0)
    a.tick()
    b.tick()
    for cluster in ("c1", "c2", "c3"):
        report(db, cluster, "success", T + 10)
    a.tick()  # the change; an attempt failed, the next one due 2 s after it
    assert tries == [T] and pending(db) == wakestore.Pending(1, "dev", M, "success", T + BACKOFF, 1)
    report(db, "c1", "failure", T + 20)  # a change while nobody watches: a is gone
    while clock.wall() <= T + LEASE:
        b.tick()  # a's lease holds: b only reads it
        clock.advance(1.0)
    assert sent == []
    b.tick()
    assert sent == [{"event": "hub", "environment": "dev", "sha": M, "verdict": "failure", "changes": "2"}]
    assert tries == [T] and pending(db) == wakestore.Pending()


def test_a_process_that_stops_lets_the_lease_go(db: Database, other: Database) -> None:
    clock = At(T)
    a, b = Waker(db, REPO, print, clock), Waker(other, REPO, print, clock)
    a.tick()
    assert not wakestore.lead(other, REPO, b.holder, clock.wall(), LEASE)
    a.release()
    a.tick()  # stopped: it takes nothing back
    assert wakestore.lead(other, REPO, b.holder, clock.wall(), LEASE)


def test_one_holder_however_many_processes_ask_at_once(hub_db: Database) -> None:
    """Eight processes (each its own connections) ask for the lease at the same moment."""
    dbs = [Database(hub_db.url) for _ in range(8)]
    start, got = threading.Barrier(len(dbs)), []

    def ask(i: int) -> None:
        start.wait(10)
        got.append((i, wakestore.lead(dbs[i], REPO, f"holder-{i}", T, LEASE)))

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(dbs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    for database in dbs:
        database.close()
    assert len(got) == 8 and sum(held for _, held in got) == 1


def test_backoff_is_measured_from_the_end_of_each_send_and_bounded(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """Each send blocks 30 s (GitHub's answer slow to come) and fails: the next attempt is 2, 4,
    8, 16 s after the failed one ended, five attempts in all, then one line."""
    clock, tries = At(T), []

    def slow_failing(payload: dict[str, str]) -> None:
        tries.append(clock.wall())
        clock.advance(30.0)
        raise ForgeError("GitHub dispatch promoter-wake to acme/control-plane: HTTP 500")

    waker = Waker(db, REPO, slow_failing, clock, debounce=0.0)
    waker.tick()
    for cluster in ("c1", "c2", "c3"):
        report(db, cluster, "success", T + 10)
    caplog.set_level(logging.INFO, "promoter.hub.wake")
    for _ in range(600):  # ten minutes of ticks, a second apart
        waker.tick()
        clock.advance(1.0)
    assert len(tries) == ATTEMPTS == 5
    assert [later - (earlier + 30.0) for earlier, later in itertools.pairwise(tries)] == [2.0, 4.0, 8.0, 16.0]
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith("gave up waking acme/control-plane after 5 attempts")
    assert pending(db) == wakestore.Pending()


@pytest.mark.parametrize(("failures", "requests_made", "sent"), [(2, 3, 1), (99, ATTEMPTS, 0)])
@responses.activate
def test_each_attempt_is_one_request_the_github_layer_retries_none(
    db: Database, failures: int, requests_made: int, sent: int
) -> None:
    """Through the real GitHub layer: GitHub answers 500 ``failures`` times, then 204. Each
    attempt is one request (the layer retried each five times before: 25 requests)."""
    clock, hits = At(T), []

    def github(request: Any) -> tuple[int, dict[str, str], str]:
        hits.append(clock.wall())
        if len(hits) <= failures:
            return 500, {}, json.dumps({"message": "Server Error"})
        return 204, {}, ""

    responses.add_callback(
        responses.POST,
        re.compile(r"https://api\.github\.com(:443)?/repos/acme/control-plane/dispatches"),
        github,
    )
    send = github_sender(REPO, API, clock, {"PROMOTER_GITHUB_TOKEN": "ghs_token0123456789"})
    waker = Waker(db, REPO, send, clock, debounce=0.0)
    waker.tick()
    for cluster in ("c1", "c2", "c3"):
        report(db, cluster, "success", T + 10)
    for _ in range(120):
        waker.tick()
        clock.advance(1.0)
    assert [t - hits[0] for t in hits] == [0.0, 2.0, 6.0, 14.0, 30.0][:requests_made]
    assert waker.sent == sent and pending(db) == wakestore.Pending()


def test_stale_after_is_the_hubs_30_minutes_unless_told(db: Database) -> None:
    """The verdict's staleness is the hub gate's default, 30 minutes; --wake-stale-after 10m is
    10 minutes. Two control planes on one database: a lease and a wake each."""
    for cluster in ("c1", "c2", "c3"):
        report(db, cluster, "success", T)
    clock, default, told = At(T + 1), [], []
    wakers = [
        Waker(db, REPO, default.append, clock, debounce=0.0),
        Waker(db, "acme/other-plane", told.append, clock, debounce=0.0, stale_after=600.0),
    ]
    for silent in (0.0, 1000.0, 1900.0):  # seconds since the clusters last reported
        clock.t = T + 1 + silent
        for waker in wakers:
            waker.tick()
        if silent == 1000.0:
            assert (default, [p["verdict"] for p in told]) == ([], ["stale"])
    assert [p["verdict"] for p in default] == ["stale"] and len(told) == 1


def test_wake_stale_after_is_the_wakers_and_a_duration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = ["hub", "serve", "--database", str(tmp_path / "hub.sqlite3")]
    alone = CliRunner().invoke(cli, [*database, "--wake-stale-after", "10m"])
    assert (
        alone.exit_code == 2 and "--wake-stale-after is the waker's: give it with --wake-repo" in alone.output
    )
    zero = CliRunner().invoke(cli, [*database, "--wake-repo", REPO, "--wake-stale-after", "0s"])
    assert zero.exit_code == 2 and "--wake-stale-after '0s': must be more than zero" in zero.output
    started: list[tuple[str, float]] = []
    monkeypatch.setattr(
        "promoter.hub.wake.start_waking", lambda db, repo, stale_after: started.append((repo, stale_after))
    )
    monkeypatch.setattr("promoter.hub.server.serve", lambda *args: None)
    for extra, seconds in (([], 1800.0), (["--wake-stale-after", "45m"], 2700.0)):
        result = CliRunner().invoke(cli, [*database, "--wake-repo", REPO, *extra])
        assert result.exit_code == 0 and started.pop() == (REPO, seconds), result.output


class GitHub:
    """GitHub's ``POST /repos/{owner}/{repo}/dispatches`` on 127.0.0.1: 500 (GitHub's body) for
    the first ``failures`` requests, then 204; each request's arrival (monotonic), status, body."""

    def __init__(self, failures: int) -> None:
        github, self.failures = self, failures
        self.hits: list[tuple[float, int, dict[str, Any], str]] = []
        self.lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with github.lock:
                    status = 500 if len(github.hits) < github.failures else 204
                    github.hits.append((time.monotonic(), status, body, self.headers["Authorization"]))
                data = json.dumps({"message": "Server Error"}).encode() if status == 500 else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/api/v3"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def answered(self) -> list[int]:
        with self.lock:
            return [status for _, status, _, _ in self.hits]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def wait_until(done: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"not within {seconds:.0f}s: {what}"
        time.sleep(0.05)


@pytest.mark.asleep  # real processes on real time: the backoff (2 s, then 4 s) and ticks of a second
def test_two_hub_serve_processes_send_one_dispatch_per_verdict_change(postgres: str) -> None:
    """Two ``promoter hub serve --wake-repo`` on one PostgreSQL, GitHub failing twice (500)
    then answering: one dispatch per verdict change, three requests for the first (2 s, then 4 s
    after the failed one), none of them twice. The holder stopped (SIGTERM), the other sends the
    next at once."""
    url, name = new_pg_database(postgres)
    db, github = Database(url), GitHub(failures=2)
    token = "ghs_wake0123456789abcdef"
    env = {
        **os.environ,
        "GITHUB_API_URL": github.url,
        "PROMOTER_GITHUB_TOKEN": token,
        "PYTHONUNBUFFERED": "1",
    }
    logs: list[str] = []
    try:
        db.migrate()
        dev_with_three_clusters(db, time.time())
        with (
            served(url, "--wake-repo", REPO, env=env) as (one, _),
            served(url, "--wake-repo", REPO, env=env) as (two, _),
        ):
            wait_until(lambda: watched(db).watching, 20, "a waker learned the verdicts")
            for cluster in ("c1", "c2", "c3"):
                report(db, cluster, "success", time.time())
            wait_until(lambda: 204 in github.answered(), 30, "the first dispatch")
            time.sleep(3)  # three more ticks of each process: no second dispatch of the change
            assert github.answered() == [500, 500, 204]
            with db.transaction(write=False) as tx:
                holder = str(tx.one("SELECT holder FROM wakers WHERE repo = ?", (REPO,))[0])
            stopped, left = (one, two) if holder.split(":")[1] == str(one.pid) else (two, one)
            stopped.send_signal(signal.SIGTERM)
            stopped.wait(20)
            report(db, "c2", "failure", time.time())
            wait_until(lambda: github.answered().count(204) == 2, 10, "the second dispatch, from the other")
            time.sleep(3)  # and nothing more
        logs = [p.stderr.read().decode() for p in (stopped, left) if p.stderr]
    finally:
        github.stop()
        db.close()
        give_back_pg_database(postgres, name)
    times = [at for at, _, _, _ in github.hits]
    assert github.answered() == [500, 500, 204, 204]
    assert 2.0 <= times[1] - times[0] < 4.5 and 4.0 <= times[2] - times[1] < 6.5
    assert [body["client_payload"]["verdict"] for _, status, body, _ in github.hits if status == 204] == [
        "success",
        "failure",
    ]
    assert {auth for _, _, _, auth in github.hits} == {f"token {token}"}
    assert logs[0].count("woke acme/control-plane") == 1 and logs[1].count("woke acme/control-plane") == 1
    assert "waking acme/control-plane failed" not in logs[1] and token not in "".join(logs)
