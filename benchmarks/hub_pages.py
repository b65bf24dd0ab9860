"""The hub's pages in ``python -m benchmarks.hub`` (docs/performance.md#the-hub): each page a
platform engineer keeps open, timed over HTTP (read, rendered, sent; p50 of ``TIMES``), in two
states of the same fleet:

- **rolling out**, after the ingest and steady phases, with ``--failing`` clusters failing at
  the new commit (a Flux ``HealthCheckFailed`` each, posted through the server): most clusters
  are on their way, some run it, some fail; ``overview_ms``, ``environment_ms``, ``failing_ms``
  (each read and rendered), and ``overview_kept_ms`` (the overview as a second tab gets it,
  within 2 s of the first); beside each, the CPU it took per page (``overview_cpu_ms``, ...: the
  hub's processes and, on PostgreSQL, the database server's), which moves far less than the time
  when other work shares the machine;
- **done**, every reconciler's latest report a success at the new commit, as the ingest would
  leave them (written in bulk, untimed, like the seed): the head runs everywhere, and the pages
  say since when; ``overview_done_ms``, ``environment_done_ms``;
- **history**, ``HISTORY`` more platform commits recorded after it (a change each, an hour apart
  in the past), every cluster having reached each (one reconciler's deployment at each, written
  in bulk): 30 commits in all; then the JSON reads a script or a dashboard asks in full,
  ``delivery_ms`` (``/v1/delivery``, the DORA figures over that history), ``discrepancies_ms``,
  ``drift_ms`` (every cluster is behind the last of them) and ``stale_ms``, and the pages of the
  two long ones, ``drift_page_ms`` and ``discrepancies_page_ms`` (each p50 of ``TIMES``).

On PostgreSQL each state is timed after a ``VACUUM ANALYZE`` of the tables written (``vacuumed``).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import requests

from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database

NEW = "b" * 40
TIMES = 5
_RUNS = itertools.count()
PAGES = {"overview_ms": "/", "environment_ms": "/environments/prod", "failing_ms": "/failing"}
DONE = {"overview_done_ms": "/", "environment_done_ms": "/environments/prod"}
#: Platform commits recorded after the new one for the JSON reads (30 in all, with the seed's two).
HISTORY = 28
READS = {
    "delivery_ms": "/v1/delivery",
    "discrepancies_ms": "/v1/discrepancies",
    "drift_ms": "/v1/drift",
    "stale_ms": "/v1/stale",
    "drift_page_ms": "/drift",
    "discrepancies_page_ms": "/discrepancies",
}


def timed(url: str, times: int = TIMES, kept: bool = False) -> float:
    """``GET url`` ``times`` times, one after the other: the median, in milliseconds. Each asks
    a page of its own (``?run=<n>``, never the same twice: a hub keeps a rendered page 2 s for the tabs that ask
    again, promoter/hub/pagecache.py), so that each is read and rendered; with ``kept``, the
    same page again, as a second tab gets it."""
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        requests.get(url, params=None if kept else {"run": str(next(_RUNS))}, timeout=120).raise_for_status()
        spent.append(time.perf_counter() - started)
    return round(1000 * statistics.median(spent), 1)


def failure_requests(senders: list[tuple[str, str]], count: int) -> list[bytes]:
    """A signed Flux failure at the new commit from ``count`` clusters spread over the fleet
    (every n-th: every cluster type has some), each a whole HTTP/1.1 request."""
    step = max(1, len(senders) // max(count, 1))
    out = []
    for name, key in senders[::step][:count]:
        event = {
            "involvedObject": {"kind": "Kustomization", "namespace": "flux-system", "name": "r00"},
            "severity": "error",
            "reason": "HealthCheckFailed",
            "message": "Health check failed after 5m0s: timeout waiting for: [Deployment/apps/web status: 'InProgress']",
            # A second ahead: Flux stamps whole seconds, and a failure stamped before the latest
            # report held (the seed's, a moment ago in a short run) would be history, not state.
            "timestamp": (datetime.now(UTC) + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "metadata": {"revision": f"prod@sha1:{NEW}", "cluster": name},
        }
        out.append(signed_request(name, key, json.dumps(event).encode()))
    return out


def signed_request(name: str, key: str, body: bytes) -> bytes:
    """``body`` as cluster ``name``'s Flux event, signed with its ``key``: a whole HTTP/1.1 request."""
    signature = "sha256=" + hmac.new(key.encode(), body, hashlib.sha256).hexdigest()
    head = (
        f"POST /v1/ingest/flux/{name} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"X-Signature: {signature}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def settle(url: str, reconcilers: int) -> None:
    """Every reconciler's latest report a success at the new commit, each with its deployment's
    first success (received when its cluster last reported), and each cluster's summary so: what
    the ingest leaves once the rollout is done, written in bulk."""
    db = Database(url)
    with db.transaction() as tx:
        row = tx.one("SELECT position FROM platform_commits WHERE environment = 'prod' AND sha = ?", (NEW,))
        assert row is not None
        tx.run(
            "INSERT INTO deployments (cluster, reconciler, revision, environment, first_seen, first_success,"
            " last_success, first_success_received, last_success_received) SELECT r.cluster, r.name, ?,"
            " r.environment, c.last_seen, c.last_seen, c.last_seen, c.last_seen, c.last_seen"
            " FROM reconcilers r JOIN clusters c ON c.name = r.cluster WHERE 1 = 1"
            " ON CONFLICT (cluster, reconciler, revision) DO UPDATE SET"
            " first_success = COALESCE(deployments.first_success, excluded.first_success),"
            " first_success_received = COALESCE(deployments.first_success_received, excluded.first_success_received)",
            (NEW,),
        )
        tx.run(
            "UPDATE reconcilers SET state = 'success', revision = ?, reason = 'ReconciliationSucceeded',"
            " failing_since = NULL, failing_received = NULL",
            (NEW,),
        )
        tx.run(
            "UPDATE clusters SET platform_position = ?, platform_sha = ?, platform_reconcilers = ?,"
            " platform_ok = ?, failing = 0, failing_position = NULL, failing_since = NULL,"
            " failing_received = NULL, busy = 0, last_seen = ?",
            (int(row[0]), NEW, reconcilers, reconcilers, time.time()),
        )
    db.close()


def history(url: str, commits: int = HISTORY) -> None:
    """``commits`` platform commits recorded after the new one (each a change of its own, with a
    main commit of its own), every cluster having reached each a minute after it was recorded
    (one reconciler's deployment at each: its cluster's only one at that commit), in bulk."""
    db = Database(url)
    start = time.time() - 3600 * (commits + 1)
    parent = NEW
    for k in range(commits):
        sha, at = f"c{k:039x}", start + 3600 * k
        record_commit(db, CommitRecord("prod", sha, "prod", parent, f"{k + 3:040d}"), at)
        with db.transaction() as tx:
            tx.run(
                "INSERT INTO deployments (cluster, reconciler, revision, environment, first_seen, first_success,"
                " last_success, first_success_received, last_success_received) SELECT name,"
                " 'Kustomization/flux-system/r00', ?, environment, ?, ?, ?, ?, ? FROM clusters",
                (sha, at + 60, at + 60, at + 60, at + 60, at + 60),
            )
        parent = sha
    db.close()


def vacuumed(url: str) -> None:
    """On PostgreSQL, the written tables vacuumed and analysed, as autovacuum leaves them after
    a burst of writes: timed while autovacuum ran after the ingest or the bulk write, on this
    2-core machine the pages took two to four times as long (the server's CPU, not the pages')."""
    if not url.startswith("postgresql://"):
        return
    import psycopg  # the hub extra's driver, as database_bytes imports it

    with psycopg.connect(url, autocommit=True) as conn:
        for table in ("clusters", "reconcilers", "deployments", "reports"):
            conn.execute(f"VACUUM ANALYZE {table}")


def measure(
    base: str,
    url: str,
    senders: list[tuple[str, str]],
    reconcilers: int,
    failing: int,
    post: Any,
    cpu: Callable[[], float],
) -> dict[str, Any]:
    """The pages while rolling out (``failing`` clusters failing, posted with ``post``, the
    ingest phase's client), then once done; beside each page's time, the CPU it took (``cpu``:
    seconds of the hub's processes and, on PostgreSQL, the database server's), per page."""
    port = int(base.rsplit(":", 1)[1])
    latencies, statuses = asyncio.run(post(port, failure_requests(senders, failing), 16, 120.0))
    figures: dict[str, Any] = {
        "failing_clusters": sum(status in (200, 201) for status in statuses) if latencies else 0
    }
    vacuumed(url)
    figures.update(_pages(base, PAGES, cpu))
    figures["overview_kept_ms"] = timed(base + "/", kept=True)
    settle(url, reconcilers)
    vacuumed(url)
    figures.update(_pages(base, DONE, cpu))
    history(url)
    vacuumed(url)
    figures.update(_pages(base, READS, cpu))
    return figures


def _pages(base: str, paths: dict[str, str], cpu: Callable[[], float]) -> dict[str, float]:
    out = {}
    for key, path in paths.items():
        before = cpu()
        out[key] = timed(base + path)
        out[key.replace("_ms", "_cpu_ms")] = round(1000 * (cpu() - before) / TIMES, 1)
    return out
