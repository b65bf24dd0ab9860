"""The ingest path's shortcuts keep its contract: a batch written with a few statements leaves
the database as writing its reports one by one does (on both engines); the key cache forgets a
revoked key at its next check; the raw ASGI path reads only the headers it needs and answers as
Starlette would."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from promoter.hub import keys
from promoter.hub.app import _headers, build_app
from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from promoter.hub.ingest import KeyCache, KeyMiss, prepare
from promoter.hub.payloads import IngestError, Report
from promoter.hub.store import Pending, store_in, store_many
from tests.support.hub_support import flux_event, register, sign

M0, M = "0" * 40, "1" * 40
T = 1_000_000.0


def _report(reconciler: str, state: str, revision: str, at: float | None, message: str = "") -> Report:
    return Report("native", reconciler, "apply", state, revision, "dev", state, message, at)  # type: ignore[arg-type]


def _batch(db: Database) -> list[Pending]:
    """Reports of two clusters: transitions, a heartbeat, retries (of a delivery in the batch, and
    a late one of a delivery its reconciler has moved on from), four of one reconciler (each read
    against what the one before wrote), a failure, and an event older than the latest held."""
    with db.transaction() as tx:
        one, two = keys.cluster(tx, "edge-1"), keys.cluster(tx, "edge-2")
    assert one is not None and two is not None
    return [
        (one, _report("a", "progressing", M, T + 1), "d1", T + 2),
        (one, _report("a", "success", M, T + 3), "d2", T + 4),
        (one, _report("a", "success", M, T + 5, "again"), "d3", T + 6),  # a heartbeat of d2's state
        (one, _report("a", "progressing", M, T + 1), "d1", T + 7),  # a late retry of d1: stored already
        (one, _report("b", "failure", M, T + 1), "d4", T + 2),
        (one, _report("b", "failure", M, T + 1), "d4", T + 3),  # a retry of d4
        (two, _report("a", "success", M, T + 1), "d5", T + 2),
        (two, _report("c", "success", M0, T - 100), "d6", T + 2),  # older than its latest
        (two, _report("d", "progressing", "", None), "d7", T + 8),
    ]


def _state(db: Database) -> dict[str, Any]:
    """Every table a report writes, without ids and creation times (two runs number them apart)."""
    last = "(SELECT digest FROM reports WHERE id = last_report)"
    tables = {
        "reconcilers": f"SELECT cluster, name, environment, role, source, state, revision, reason, message,"
        f" event_time, received_at, failing_since, heartbeat, failing_received, {last}"
        " FROM reconcilers ORDER BY cluster, name",
        "clusters": "SELECT name, last_seen, platform_position, platform_sha, platform_reconcilers, platform_ok,"
        " failing, failing_position, failing_since, heartbeats, busy, failing_received FROM clusters ORDER BY name",
        "deployments": "SELECT * FROM deployments ORDER BY cluster, reconciler, revision",
        "reports": "SELECT cluster, reconciler, state, revision, event_time, received_at, digest"
        " FROM reports ORDER BY digest",
    }
    with db.transaction(write=False) as tx:
        return {name: tx.rows(sql) for name, sql in tables.items()}


def _world(db: Database) -> None:
    db.migrate()
    record_commit(db, CommitRecord("dev", M0, "dev", None, "m0"), T - 500)
    record_commit(db, CommitRecord("dev", M, "dev", M0, "m1"), T - 400)
    register(db, "edge-1")
    register(db, "edge-2")
    with db.transaction() as tx:
        two = keys.cluster(tx, "edge-2")
        assert two is not None
        store_in(tx, two, _report("c", "success", M, T), "d0", T)  # edge-2's "c" is at M already


def test_a_batch_is_stored_as_its_reports_one_by_one(hub_url: str) -> None:
    apart = Database(hub_url)
    _world(apart)
    one_by_one = []
    for item in _batch(apart):
        with apart.transaction() as tx:
            one_by_one.append(store_in(tx, *item))
    expected = _state(apart)
    with apart.transaction() as tx:  # the same again, as one batch, on a fresh database
        for table in ("reports", "reconcilers", "deployments", "clusters", "platform_commits", "sender_keys"):
            tx.run(f"DELETE FROM {table}")
    _world(apart)
    items = _batch(apart)
    with apart.transaction(pipeline=True) as tx:
        together = store_many(tx, items)
    apart.close()
    assert [(s.duplicate, s.unchanged) for s in together] == [(s.duplicate, s.unchanged) for s in one_by_one]
    assert [(s.duplicate, s.unchanged) for s in together] == [
        (False, False),
        (False, False),
        (False, True),
        (True, False),
        (False, False),
        (True, True),
        (False, False),
        (False, False),
        (False, False),
    ]
    assert together[2].unchanged and together[2].id == together[1].id
    assert together[3].id == together[0].id and together[5].id == together[4].id
    again = Database(hub_url)
    # The same rows, and the same summaries and last-seen times (refreshed once per cluster).
    assert _state(again) == expected
    again.close()


def test_the_key_cache_forgets_a_revoked_key_at_its_next_check(tmp_path) -> None:
    db = Database(str(tmp_path / "hub.sqlite3"))
    db.migrate()
    register(db, "edge-1")
    now = [0.0]
    cache = KeyCache(ttl=5.0, clock=lambda: now[0])
    assert cache.due()
    cache.check(db)  # the first check reads every cluster's keys
    found = cache.get("flux", "edge-1")
    assert found is not None and found[0].name == "edge-1" and len(found[1]) == 1
    bearer = keys.digest(found[1][0])
    assert cache.get("bearer", bearer) == (found[0], [])
    now[0] = 60.0  # long after: trusted while checks find nothing changed
    assert cache.due()
    cache.check(db)
    assert cache.get("flux", "edge-1") is not None
    generation = cache.generation
    keys.revoke(db, "edge-1")
    now[0] = 61.0
    assert cache.due()
    cache.check(db)
    assert cache.get("flux", "edge-1") is None and cache.get("bearer", bearer) is None
    assert cache.generation == generation + 1
    # A sender read before that check (with the generation before it) is not kept.
    cache.put("flux", "edge-1", found[0], found[1], generation)
    assert cache.get("flux", "edge-1") is None
    # Without checks, an entry lapses ``ttl`` after it was read.
    cache.put("flux", "edge-9", found[0], [], cache.generation)
    now[0] = 61.0 + 4.0
    assert cache.get("flux", "edge-9") is not None
    now[0] = 61.0 + 10.0
    assert cache.get("flux", "edge-9") is None
    db.close()


def test_a_key_the_cache_does_not_hold_is_looked_up_before_a_refusal(tmp_path) -> None:
    """A key made after the cache read its cluster's (on PostgreSQL one may commit after a key
    with a later id, which the check's fingerprint then misses): a signature the cached keys do
    not match is checked against the database, off the event loop, before it is refused."""
    db = Database(str(tmp_path / "hub.sqlite3"))
    db.migrate()
    register(db, "edge-1")
    cache = KeyCache(ttl=5.0, clock=lambda: 0.0)
    cache.check(db)
    _, second = keys.add_cluster_key(db, "edge-1", "dev", "small")
    body = json.dumps(flux_event(f"dev@sha1:{M}")).encode()
    headers = {"content-type": "application/json", "x-signature": sign(body, second)}
    with pytest.raises(KeyMiss):  # not decided in the event loop, without the database
        prepare(db, "flux", "edge-1", headers, body, cache=cache, offline=True)
    who, report, _ = prepare(db, "flux", "edge-1", headers, body, cache=cache)
    assert who.name == "edge-1" and report.revision == M
    # Kept: the next one is decided in the event loop.
    assert prepare(db, "flux", "edge-1", headers, body, cache=cache, offline=True)[0].name == "edge-1"
    forged = {**headers, "x-signature": sign(body, "phk_not-a-key")}
    with pytest.raises(IngestError, match="does not match") as refused:
        prepare(db, "flux", "edge-1", forged, body, cache=cache)
    assert refused.value.status == 401
    db.close()


def test_the_raw_ingest_path(tmp_path) -> None:
    db = Database(str(tmp_path / "hub.sqlite3"))
    db.migrate()
    key = register(db, "edge-1")
    app = build_app(db)
    raw = [
        (b"Content-Type", b"text/plain"),
        (b"x-signature", b"sha256=0"),
        (b"content-type", b"application/json"),
    ]
    assert _headers(raw) == {"content-type": "application/json", "x-signature": "sha256=0"}

    def post(path: str, body: bytes, headers: list[tuple[bytes, bytes]]) -> tuple[int, dict[str, Any]]:
        chunks = [body[: len(body) // 2], body[len(body) // 2 :]]  # the body in two messages
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": chunks.pop(0), "more_body": bool(chunks)}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "POST", "path": path, "headers": headers}
        asyncio.run(app(scope, receive, send))
        start, answer = sent
        assert dict(start["headers"])[b"content-length"] == str(len(answer["body"])).encode()
        return start["status"], json.loads(answer["body"])

    bearer = [(b"content-type", b"application/json"), (b"authorization", f"Bearer {key}".encode())]
    native = {"reconciler": "platform", "state": "success", "revision": M}
    body = json.dumps({**native, "timestamp": time.time()}).encode()
    assert post("/v1/reports", body, bearer) == (201, {"id": 1, "cluster": "edge-1", "duplicate": False})
    assert post("/v1/reports", body, bearer) == (
        200,
        {"id": 1, "cluster": "edge-1", "duplicate": True, "unchanged": True},
    )
    status, answer = post("/v1/reports", body, [(b"content-type", b"text/plain")])
    assert (status, answer) == (415, {"error": "Content-Type must be application/json, got 'text/plain'"})
    status, answer = post("/v1/ingest/flux/edge-1", body, [(b"content-type", b"application/json")])
    assert status == 401 and "missing X-Signature" in answer["error"]
    status, answer = post("/v1/reports", json.dumps(native).encode(), bearer)
    assert (status, answer) == (422, {"error": "missing 'timestamp'"})
    signed = [(b"content-type", b"application/json"), (b"x-signature", sign(body, key).encode())]
    status, answer = post("/v1/ingest/flux/edge-1", body, signed)  # signed, but not a Flux event
    assert status == 422 and answer == {"error": "missing 'involvedObject' (an object)"}
    db.close()
