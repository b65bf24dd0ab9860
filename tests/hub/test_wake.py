"""The hub wakes promotions (promoter/hub/wake.py): one dispatch per verdict change of the newest
recorded commit, debounced, retried with backoff and bounded; sent through the GitHub layer in
GitHub's shapes (``responses``), the token never logged."""

from __future__ import annotations

import json
import logging
import re
import time
from pathlib import Path

import pytest
import responses

from promoter.clock import FakeClock, RealClock
from promoter.errors import ForgeError, GateTimedOut, UsageError
from promoter.forges.github.api import GitHubHttp
from promoter.forges.github.auth import StaticToken
from promoter.forges.github.dispatches import dispatch
from promoter.gates import GateContext, build_gate
from promoter.gates.runner import run_gates
from promoter.hub import keys
from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from promoter.hub.payloads import Report
from promoter.hub.store import store_report
from promoter.hub.wake import Waker, start_waking, verdict_of
from promoter.model import GateSpec, Source
from promoter.platform.repo import PlatformRepo
from tests.support.hub_support import LiveHub, flux_event, platform_repo, post_flux, register

M = "1" * 40
T = 1_000_000.0
API = "https://api.github.com"


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


@pytest.fixture
def db(tmp_path: Path) -> Database:
    database = Database(f"sqlite:///{tmp_path / 'hub.sqlite3'}")
    database.migrate()
    record_commit(
        database, CommitRecord("dev", M, "dev", None, "main-1", None, (("small", "t"),), ("dev",)), T
    )
    for name in ("c1", "c2", "c3"):
        keys.add_cluster_key(database, name, "dev", "small")
    return database


def report(db: Database, cluster: str, state: str, at: float) -> None:
    with db.transaction() as tx:
        found = keys.cluster(tx, cluster)
    assert found is not None
    event = Report("native", "platform", "apply", state, M, "dev", state, "", None)  # type: ignore[arg-type]
    store_report(db, found, event, f"{cluster}-{state}-{at}", at)


def test_one_wake_per_verdict_change_not_one_per_cluster(db: Database) -> None:
    clock, sent = At(T), []
    waker = Waker(db, sent.append, clock, debounce=1.0)
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

    waker = Waker(db, failing, clock, debounce=0.0, attempts=3, backoff=2.0)
    waker.tick()  # the first tick learns the verdicts: pending
    for cluster in ("c1", "c2", "c3"):
        report(db, cluster, "success", T + 10)
    caplog.set_level(logging.INFO, "promoter.hub.wake")
    for _ in range(20):
        waker.tick()
        clock.advance(1.0)
    assert [t - tries[0] for t in tries] == [0.0, 2.0, 6.0]  # 2 s, then 4 s
    assert waker.changes == [] and waker.due is None  # given up: the heartbeat still covers it
    assert "gave up waking the promotion after 3 attempts" in caplog.text


def test_what_a_hub_finds_when_it_starts_wakes_nothing(db: Database) -> None:
    for cluster in ("c1", "c2", "c3"):
        report(db, cluster, "success", T + 10)
    clock, sent = At(T + 20), []
    waker = Waker(db, sent.append, clock, debounce=0.0)
    waker.tick()
    waker.tick()
    assert sent == [] and waker.seen == {("dev", M): "success"}
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

    waker = Waker(live_hub.db, woken, clock, debounce=0.5)
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
