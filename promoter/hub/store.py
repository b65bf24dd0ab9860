"""Writes of a report: appended to history, with each reconciler's latest state and the
per-revision deployment times kept in the same transaction (a merged platform commit is
recorded by commits.py).

Idempotent: a report whose exact body this cluster already delivered is acknowledged again and
stored once (the digest is unique, so two concurrent deliveries cannot both land).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from promoter.hub.db import Database, Tx
from promoter.hub.keys import Cluster
from promoter.hub.payloads import IngestError, Report


@dataclass(frozen=True)
class Stored:
    id: int
    duplicate: bool
    #: Nothing a reader needs changed: the reconciler's last-seen time moved, no history was added.
    unchanged: bool = False


@dataclass(frozen=True)
class _Held:
    """A reconciler's latest state, as the hub holds it."""

    state: str
    revision: str
    reason: str
    when: float
    heartbeat: bool
    last_report: int
    digest: str | None


def report_digest(cluster: str, source: str, body: bytes) -> str:
    return hashlib.sha256(b"\0".join((cluster.encode(), source.encode(), body))).hexdigest()


MAX_SKEW = 900.0


def check_fresh(report: Report, now: float, max_age: float, max_skew: float = MAX_SKEW) -> None:
    """Refuse an event from too long ago (a replay) or from the future (a clock more than
    ``max_skew`` ahead of the hub's: the only place a cluster's clock meets the hub's)."""
    when = report.event_time
    if when is None:
        return
    if when < now - max_age:
        raise IngestError(409, f"the event is from {int(now - when)}s ago, older than the hub accepts")
    if when > now + max_skew:
        raise IngestError(422, f"the event is {int(when - now)}s in the future: check the sender's clock")


def check_identity(cluster: Cluster, report: Report) -> None:
    """Metadata that names another cluster, type or environment than the key's is refused."""
    actual = {
        "cluster": cluster.name,
        "clusterType": cluster.cluster_type,
        "environment": cluster.environment,
    }
    for key, claimed in report.claimed.items():
        if claimed != actual[key]:
            raise IngestError(
                403, f"metadata {key}={claimed!r} contradicts the key, which is {key} {actual[key]!r}"
            )


def stored_as(db: Database, digest: str) -> Stored | None:
    """The stored report with this digest, if any."""
    with db.transaction(write=False) as tx:
        row = tx.one("SELECT id FROM reports WHERE digest = ?", (digest,))
    return Stored(int(row[0]), True) if row else None


def store_report(db: Database, cluster: Cluster, report: Report, digest: str, now: float) -> Stored:
    """Append ``report`` and update the latest state, in a transaction of its own; returns once
    committed."""
    with db.transaction() as tx:
        return store_in(tx, cluster, report, digest, now)


def store_in(tx: Tx, cluster: Cluster, report: Report, digest: str, now: float) -> Stored:
    """Store ``report`` in the open transaction ``tx``: a report that changes nothing a reader
    needs (same state, revision and reason as the reconciler's latest) only moves last-seen
    times; any other is appended to history and, unless older than the latest, becomes it."""
    held = _held(tx, cluster.name, report.reconciler)
    # The cluster's own clock (its event's time), compared only with its own earlier times; a
    # report without one is placed by its arrival (the hub's clock), as all of that sender's are.
    when = report.event_time if report.event_time is not None else now
    if held is not None and _same(held, report):
        if when >= held.when:
            _seen(tx, cluster.name, report, when, now)
        return Stored(held.last_report, held.digest == digest, unchanged=True)
    row = tx.one(
        "INSERT INTO reports (cluster, environment, cluster_type, source, reconciler, role, state,"
        " revision, branch, reason, message, event_time, received_at, digest)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING RETURNING id",
        (
            cluster.name,
            cluster.environment,
            cluster.cluster_type,
            report.source,
            report.reconciler,
            report.role,
            report.state,
            report.revision,
            report.branch,
            report.reason,
            report.message,
            report.event_time,
            now,
            digest,
        ),
    )
    if row is None:
        found = tx.one("SELECT id FROM reports WHERE digest = ?", (digest,))
        return Stored(int(found[0]) if found else 0, True)
    report_id = int(row[0])
    if held is None or _supersedes(report.state, when, held):
        _latest(tx, cluster, report, report_id, now)
    if report.revision:
        _deployment(tx, cluster, report, when, now)
    refresh_cluster(tx, cluster.name, now)
    return Stored(report_id, False)


def _held(tx: Tx, cluster: str, reconciler: str) -> _Held | None:
    # Row-locked on PostgreSQL, where several writers run: the read and the write that follows
    # see the same latest state. SQLite has one writer at a time.
    lock = " FOR UPDATE" if tx.dialect == "postgresql" else ""
    row = tx.one(
        "SELECT state, revision, reason, COALESCE(event_time, received_at), heartbeat, last_report,"
        " (SELECT digest FROM reports WHERE id = reconcilers.last_report)"
        f" FROM reconcilers WHERE cluster = ? AND name = ?{lock}",
        (cluster, reconciler),
    )
    if row is None:
        return None
    state, revision, reason, when, heartbeat, last, held_digest = row
    return _Held(state, revision, reason, float(when), bool(heartbeat), int(last), held_digest)


def _same(held: _Held, report: Report) -> bool:
    """Whether ``report`` says what the reconciler's latest already says (a heartbeat)."""
    return (
        held.state == report.state
        and held.revision == (report.revision or held.revision)
        and held.reason == report.reason
        and held.heartbeat == report.heartbeat
    )


def _rank(state: str) -> int:
    """Within one second, an outcome outranks progress: Flux stamps events with whole seconds
    and posts each from its own goroutine, so a reconcile's "Health check passed"
    (``Progressing``) may land after its "Reconciliation finished" with the same timestamp."""
    return 0 if state == "progressing" else 1


def _supersedes(state: str, when: float, held: _Held) -> bool:
    return when > held.when or (when == held.when and _rank(state) >= _rank(held.state))


def _seen(tx: Tx, cluster: str, report: Report, when: float, now: float) -> None:
    tx.run(
        "UPDATE reconcilers SET message = ?, event_time = ?, received_at = ? WHERE cluster = ? AND name = ?",
        (report.message, report.event_time, now, cluster, report.reconciler),
    )
    tx.run(
        "UPDATE clusters SET last_seen = ? WHERE name = ? AND (last_seen IS NULL OR last_seen < ?)",
        (now, cluster, now),
    )


def prune(db: Database, before: float, batch: int = 5000) -> int:
    """Delete history received before ``before``, in batches (each its own short transaction, so
    ingest is never held up for long), and the per-revision rows of revisions no reconciler is at
    that saw nothing since; the number of reports deleted."""
    total = 0
    while True:
        with db.transaction() as tx:
            ids = [
                int(r[0])
                for r in tx.rows(
                    "SELECT id FROM reports WHERE received_at < ? ORDER BY id LIMIT ?", (before, batch)
                )
            ]
            if ids:
                tx.run(f"DELETE FROM reports WHERE id IN ({', '.join('?' for _ in ids)})", ids)
        total += len(ids)
        if len(ids) < batch:
            break
    with db.transaction() as tx:
        tx.run(
            "DELETE FROM deployments WHERE COALESCE(last_success, last_failure, first_seen) < ?"
            " AND NOT EXISTS (SELECT 1 FROM reconcilers r WHERE r.cluster = deployments.cluster"
            " AND r.name = deployments.reconciler AND r.revision = deployments.revision)",
            (before,),
        )
    return total


_SUMMARY = (
    "UPDATE clusters SET (platform_position, platform_sha, platform_reconcilers, platform_ok, failing,"
    " failing_position, failing_since, heartbeats, busy, failing_received) = (SELECT"
    " MIN(CASE WHEN r.role = 'apply' THEN pc.position END),"
    " (SELECT pc2.sha FROM reconcilers r2 JOIN platform_commits pc2"
    " ON pc2.environment = r2.environment AND pc2.sha = r2.revision"
    " WHERE r2.cluster = clusters.name AND r2.role = 'apply' ORDER BY pc2.position LIMIT 1),"
    " COALESCE(SUM(CASE WHEN r.role = 'apply' AND pc.sha IS NOT NULL THEN 1 ELSE 0 END), 0),"
    " COALESCE(SUM(CASE WHEN r.role = 'apply' AND pc.sha IS NOT NULL AND r.state = 'success' THEN 1 ELSE 0 END), 0),"
    " COALESCE(SUM(CASE WHEN r.state = 'failure' THEN 1 ELSE 0 END), 0),"
    " MAX(CASE WHEN r.state = 'failure' THEN pc.position END), MAX(r.failing_since),"
    " COALESCE(SUM(r.heartbeat), 0),"
    " COALESCE(SUM(CASE WHEN r.role = 'apply' AND pc.sha IS NULL AND r.state = 'progressing' THEN 1 ELSE 0 END), 0),"
    " MIN(r.failing_received)"
    " FROM reconcilers r LEFT JOIN platform_commits pc ON pc.environment = r.environment AND pc.sha = r.revision"
    " WHERE r.cluster = clusters.name)"
)


def refresh_cluster(tx: Tx, name: str, seen: float | None = None) -> None:
    """Recompute cluster ``name``'s summary columns from its reconcilers (a score of rows), in
    one statement; with ``seen``, also move its last-seen time forward."""
    if seen is None:
        tx.run(_SUMMARY + " WHERE name = ?", (name,))
        return
    tx.run(
        _SUMMARY + ", last_seen = CASE WHEN last_seen IS NULL OR last_seen < ? THEN ? ELSE last_seen END"
        " WHERE name = ?",
        (seen, seen, name),
    )


def _latest(tx: Tx, cluster: Cluster, report: Report, report_id: int, now: float) -> None:
    """The reconciler's latest state; an event older than the one held (a late retry) leaves it."""
    # When the failure began, on the cluster's clock (the event's own time: a delivery may come
    # late) and on the hub's (when the hub first heard of it).
    failing = (
        (report.event_time if report.event_time is not None else now) if report.state == "failure" else None
    )
    noticed = now if report.state == "failure" else None
    tx.run(
        "INSERT INTO reconcilers (cluster, name, environment, role, source, state, revision, reason,"
        " message, event_time, received_at, failing_since, last_report, heartbeat, failing_received)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (cluster, name) DO UPDATE SET role = excluded.role, source = excluded.source,"
        " heartbeat = excluded.heartbeat,"
        " state = excluded.state,"
        " revision = CASE WHEN excluded.revision = '' THEN reconcilers.revision ELSE excluded.revision END,"
        " reason = excluded.reason, message = excluded.message, event_time = excluded.event_time,"
        " received_at = excluded.received_at,"
        " failing_since = CASE WHEN excluded.state = 'failure'"
        " THEN COALESCE(reconcilers.failing_since, excluded.failing_since) ELSE NULL END,"
        " failing_received = CASE WHEN excluded.state = 'failure'"
        " THEN COALESCE(reconcilers.failing_received, excluded.failing_received) ELSE NULL END,"
        " last_report = excluded.last_report"
        # The guard of _supersedes, again: two PostgreSQL writers may insert the first row at once.
        " WHERE COALESCE(excluded.event_time, excluded.received_at)"
        " > COALESCE(reconcilers.event_time, reconcilers.received_at)"
        " OR (COALESCE(excluded.event_time, excluded.received_at)"
        " = COALESCE(reconcilers.event_time, reconcilers.received_at)"
        " AND (excluded.state <> 'progressing' OR reconcilers.state = 'progressing'))",
        (
            cluster.name,
            report.reconciler,
            cluster.environment,
            report.role,
            report.source,
            report.state,
            report.revision,
            report.reason,
            report.message,
            report.event_time,
            now,
            failing,
            report_id,
            1 if report.heartbeat else 0,
            noticed,
        ),
    )


def _deployment(tx: Tx, cluster: Cluster, report: Report, when: float, now: float) -> None:
    """The reconciler's times at this revision: ``when`` on the cluster's clock, ``now`` (the
    ``_received`` columns) on the hub's."""
    ok = when if report.state == "success" else None
    bad = when if report.state == "failure" else None
    ok_now = now if report.state == "success" else None
    bad_now = now if report.state == "failure" else None
    tx.run(
        "INSERT INTO deployments (cluster, reconciler, revision, environment, first_seen,"
        " first_success, last_success, first_failure, last_failure, first_success_received,"
        " last_success_received, first_failure_received) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (cluster, reconciler, revision) DO UPDATE SET"
        " first_seen = CASE WHEN excluded.first_seen < deployments.first_seen"
        " THEN excluded.first_seen ELSE deployments.first_seen END,"
        " first_success = COALESCE(deployments.first_success, excluded.first_success),"
        " last_success = COALESCE(excluded.last_success, deployments.last_success),"
        " first_failure = COALESCE(deployments.first_failure, excluded.first_failure),"
        " last_failure = COALESCE(excluded.last_failure, deployments.last_failure),"
        " first_success_received = COALESCE(deployments.first_success_received, excluded.first_success_received),"
        " last_success_received = COALESCE(excluded.last_success_received, deployments.last_success_received),"
        " first_failure_received = COALESCE(deployments.first_failure_received, excluded.first_failure_received)",
        (
            cluster.name,
            report.reconciler,
            report.revision,
            cluster.environment,
            when,
            ok,
            ok,
            bad,
            bad,
            ok_now,
            ok_now,
            bad_now,
        ),
    )
