"""Writes of a report: appended to history, with each reconciler's latest state and the
per-revision deployment times kept in the same transaction (a merged platform commit is
recorded by commits.py).

Idempotent: a report whose exact body this cluster already delivered is acknowledged again and
stored once (the digest is unique, so two concurrent deliveries cannot both land).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from promoter.hub.db import Database, Row, Tx
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
    return store_many(tx, [(cluster, report, digest, now)])[0]


Pending = tuple[Cluster, Report, str, float]
"""A report to store: its cluster, the report, its digest and when the hub received it."""


def store_many(tx: Tx, items: Sequence[Pending]) -> list[Stored]:
    """Store each of ``items`` in the open transaction ``tx`` as ``store_in`` would one after
    the other, in the same order, with a few statements for them all: each reconciler's latest
    states are read in one statement, the new reports appended in one, and so on (on SQLite,
    where a statement costs no round trip, one call each). Each cluster's summary is refreshed
    once, after all of its reports: it is a function of its reconcilers' final states, so the
    outcome is the one of refreshing it after each. The reports of one reconciler are taken in
    turns (its second report is read against what its first one wrote)."""
    results: list[Stored | None] = [None] * len(items)
    turns: list[list[int]] = []
    seen_in_turn: dict[tuple[str, str], int] = {}
    for i, (cluster, report, _, _) in enumerate(items):
        key = (cluster.name, report.reconciler)
        nth = seen_in_turn.get(key, 0)
        seen_in_turn[key] = nth + 1
        if nth == len(turns):
            turns.append([])
        turns[nth].append(i)
    refresh: dict[str, float] = {}  # cluster -> latest receipt: summary and last-seen
    seen: dict[str, float] = {}  # cluster -> latest receipt: last-seen alone
    for turn in turns:
        _store_turn(tx, items, turn, results, refresh, seen)
    if tx.dialect == "postgresql" and (refresh or seen):
        # Several writers (and hub processes) lock clusters' rows in one order: no deadlock.
        tx.run(
            "SELECT 1 FROM clusters WHERE name = ANY(?::text[]) ORDER BY name FOR UPDATE",
            (sorted(refresh.keys() | seen.keys()),),
        )
    _refresh_many(tx, [(name, max(refresh[name], seen.get(name, 0.0))) for name in sorted(refresh)])
    _seen_many(tx, [(name, seen[name]) for name in sorted(seen) if name not in refresh])
    stored = [r for r in results if r is not None]
    assert len(stored) == len(items)
    return stored


def _store_turn(
    tx: Tx,
    items: Sequence[Pending],
    turn: list[int],
    results: list[Stored | None],
    refresh: dict[str, float],
    seen: dict[str, float],
) -> None:
    """Store the reports ``turn`` indexes in ``items``, of as many different reconcilers."""
    held_rows = _read_held(tx, [(items[i][0].name, items[i][1].reconciler) for i in turn])
    touched: list[tuple[Any, ...]] = []
    appended: list[tuple[int, _Held | None, float]] = []
    for i, row in zip(turn, held_rows, strict=True):
        cluster, report, digest, now = items[i]
        held = _held(row)
        # The cluster's own clock (its event's time), compared only with its own earlier times;
        # a report without one is placed by its arrival (the hub's clock), as all of that
        # sender's are.
        when = report.event_time if report.event_time is not None else now
        if held is not None and _same(held, report):
            if when >= held.when:
                touched.append((report.message, report.event_time, now, cluster.name, report.reconciler))
                seen[cluster.name] = max(now, seen.get(cluster.name, now))
            results[i] = Stored(held.last_report, held.digest == digest, unchanged=True)
        else:
            appended.append((i, held, when))
    _touch_many(tx, touched)
    ids = _append_many(tx, [_report_row(*items[i]) for i, _, _ in appended])
    latest: list[tuple[Any, ...]] = []
    deployments: list[tuple[Any, ...]] = []
    duplicates: list[int] = []
    for i, held, when in appended:
        cluster, report, digest, now = items[i]
        report_id = ids.get(digest)
        if report_id is None:
            duplicates.append(i)
            continue
        results[i] = Stored(report_id, False)
        if held is None or _supersedes(report.state, when, held):
            latest.append(_latest_row(cluster, report, report_id, now))
        if report.revision:
            deployments.append(_deployment_row(cluster, report, when, now))
        refresh[cluster.name] = max(now, refresh.get(cluster.name, now))
    found = tx.many("SELECT id FROM reports WHERE digest = ?", [(items[i][2],) for i in duplicates])
    for i, row in zip(duplicates, found, strict=True):
        results[i] = Stored(int(row[0]) if row else 0, True)
    _insert_many(tx, _LATEST, _LATEST_TYPES, latest)
    _insert_many(tx, _DEPLOYMENT, _DEPLOYMENT_TYPES, deployments)


def _rows(types: tuple[str, ...], names: tuple[str, ...] = ()) -> str:
    """PostgreSQL: the rows of one JSON parameter (an array of arrays, ``_json``), as a query
    of ``types``-typed columns (named ``names``). One text parameter costs the hub less than
    one array per column (psycopg adapts each element of an array in Python; a JSON text is
    one ``json.dumps``) and keeps one statement text, prepared once, for any number of rows."""
    columns = ", ".join(f"(e->>{i})::{t}" + (f" AS {names[i]}" if names else "") for i, t in enumerate(types))
    return f"SELECT {columns} FROM json_array_elements(?::json) AS e"


def _json(rows: Iterable[Sequence[Any]]) -> tuple[str]:
    return (json.dumps(list(rows), separators=(",", ":")),)


@functools.cache
def _pg_insert(sql: str, types: tuple[str, ...]) -> str:
    """PostgreSQL's form of an ``INSERT ... VALUES (?, ...)`` of one row: the rows of ``_rows``."""
    values = " VALUES (" + ", ".join("?" for _ in types) + ")"
    assert values in sql
    return sql.replace(values, " " + _rows(types))


def _insert_many(tx: Tx, sql: str, types: tuple[str, ...], rows: Sequence[Sequence[Any]]) -> None:
    """Run the one-row ``INSERT`` ``sql`` for each of ``rows``, in order."""
    if not rows:
        return
    if tx.dialect == "postgresql":
        tx.run(_pg_insert(sql, types), _json(rows))
    else:
        tx.run_many(sql, rows)


_TEXT, _FLOAT = "text", "float8"
_REPORT_TYPES = (*(_TEXT,) * 11, _FLOAT, _FLOAT, _TEXT)
_TOUCH_TYPES = (_TEXT, _FLOAT, _FLOAT, _TEXT, _TEXT)
_SEEN_TYPES = (_TEXT, _FLOAT)


def _append_many(tx: Tx, rows: Sequence[tuple[Any, ...]]) -> dict[str, int]:
    """Append ``rows`` (``_report_row``s) to history: the id of each by its digest; a digest
    stored already (a retry) is left out."""
    if not rows:
        return {}
    if tx.dialect == "postgresql":
        sql = _pg_insert(_INSERT_REPORT, _REPORT_TYPES) + ", digest"
        return {str(digest): int(report_id) for report_id, digest in tx.rows(sql, _json(rows))}
    ids = tx.many(_INSERT_REPORT, rows)
    return {str(row[-1]): int(found[0]) for row, found in zip(rows, ids, strict=True) if found is not None}


def _read_held(tx: Tx, pairs: list[tuple[str, str]]) -> list[Row | None]:
    """The latest state held of each (cluster, reconciler), in order; None for a new one.
    Row-locked on PostgreSQL, in one order, where several writers run: the read and the write
    that follows see the same latest state. SQLite has one writer at a time."""
    if tx.dialect == "sqlite":
        return tx.many(_HELD, pairs)
    rows = tx.rows(
        "SELECT r.cluster, r.name, r.state, r.revision, r.reason, COALESCE(r.event_time, r.received_at),"
        " r.heartbeat, r.last_report, (SELECT digest FROM reports WHERE id = r.last_report)"
        f" FROM ({_rows((_TEXT, _TEXT), ('cluster', 'name'))}) AS k"
        " JOIN reconcilers r ON r.cluster = k.cluster AND r.name = k.name"
        " ORDER BY r.cluster, r.name FOR UPDATE OF r",
        _json(pairs),
    )
    held = {(str(r[0]), str(r[1])): r[2:] for r in rows}
    return [held.get(pair) for pair in pairs]


def _touch_many(tx: Tx, rows: list[tuple[Any, ...]]) -> None:
    """A report that changed nothing: its reconciler's message and last-seen times move."""
    if not rows:
        return
    if tx.dialect == "postgresql":
        tx.run(
            "UPDATE reconcilers SET message = u.message, event_time = u.event_time, received_at = u.received_at"
            f" FROM ({_rows(_TOUCH_TYPES, ('message', 'event_time', 'received_at', 'cluster', 'name'))}) AS u"
            " WHERE reconcilers.cluster = u.cluster AND reconcilers.name = u.name",
            _json(rows),
        )
        return
    tx.run_many(
        "UPDATE reconcilers SET message = ?, event_time = ?, received_at = ? WHERE cluster = ? AND name = ?",
        rows,
    )


def _seen_many(tx: Tx, clusters: list[tuple[str, float]]) -> None:
    """Each (cluster, receipt)'s last-seen time moves forward."""
    if not clusters:
        return
    if tx.dialect == "postgresql":
        tx.run(
            f"UPDATE clusters SET last_seen = u.seen FROM ({_rows(_SEEN_TYPES, ('name', 'seen'))}) AS u"
            " WHERE clusters.name = u.name AND (clusters.last_seen IS NULL OR clusters.last_seen < u.seen)"
            " AND clusters.name = ANY(?::text[])",
            (*_json(clusters), [name for name, _ in clusters]),
        )
        return
    tx.run_many(
        "UPDATE clusters SET last_seen = ? WHERE name = ? AND (last_seen IS NULL OR last_seen < ?)",
        [(when, name, when) for name, when in clusters],
    )


_INSERT_REPORT = (
    "INSERT INTO reports (cluster, environment, cluster_type, source, reconciler, role, state,"
    " revision, branch, reason, message, event_time, received_at, digest)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING RETURNING id"
)


def _report_row(cluster: Cluster, report: Report, digest: str, now: float) -> tuple[Any, ...]:
    return (
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
    )


_HELD = (
    "SELECT state, revision, reason, COALESCE(event_time, received_at), heartbeat, last_report,"
    " (SELECT digest FROM reports WHERE id = reconcilers.last_report)"
    " FROM reconcilers WHERE cluster = ? AND name = ?"
)


def _held(row: tuple[Any, ...] | None) -> _Held | None:
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


_SUMMARY_TEMPLATE = (
    "UPDATE clusters SET (platform_position, platform_sha, platform_reconcilers, platform_ok, failing,"
    " failing_position, failing_since, heartbeats, busy, failing_received) = (SELECT"
    " MIN(CASE WHEN r.role = 'apply' THEN pc.position END),"
    # The platform commit at that position, in the same pass: the least of position-and-sha
    # texts (the position zero-padded), its sha (of two at one position, the least).
    " substr(MIN(CASE WHEN r.role = 'apply' THEN {position_sha} END), 21),"
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
_POSITION_SHA = {
    "sqlite": "printf('%020d', pc.position) || pc.sha",
    "postgresql": "(lpad(pc.position::text, 20, '0') || pc.sha) COLLATE \"C\"",
}


_SUMMARY = {
    dialect: _SUMMARY_TEMPLATE.replace("{position_sha}", sql) for dialect, sql in _POSITION_SHA.items()
}


def refresh_cluster(tx: Tx, name: str, seen: float | None = None) -> None:
    """Recompute cluster ``name``'s summary columns from its reconcilers (a score of rows), in
    one statement; with ``seen``, also move its last-seen time forward."""
    if seen is None:
        tx.run(_SUMMARY[tx.dialect] + " WHERE name = ?", (name,))
        return
    _refresh_many(tx, [(name, seen)])


_REFRESH_SEEN = (
    _SUMMARY["sqlite"]
    + ", last_seen = CASE WHEN last_seen IS NULL OR last_seen < ? THEN ? ELSE last_seen END"
    " WHERE name = ?"
)


def _refresh_many(tx: Tx, clusters: Sequence[tuple[str, float]]) -> None:
    """``refresh_cluster(tx, name, seen)`` of each (name, seen)."""
    if not clusters:
        return
    if tx.dialect == "postgresql":
        tx.run(
            _SUMMARY["postgresql"]
            + ", last_seen = CASE WHEN clusters.last_seen IS NULL OR clusters.last_seen < u.seen"
            " THEN u.seen ELSE clusters.last_seen END"
            f" FROM ({_rows(_SEEN_TYPES, ('name', 'seen'))}) AS u WHERE clusters.name = u.name"
            # The names again, as an array: the planner then reads them by the primary key (it
            # takes a JSON array for a hundred rows, and would read every cluster's).
            " AND clusters.name = ANY(?::text[])",
            (*_json(clusters), [name for name, _ in clusters]),
        )
        return
    tx.run_many(_REFRESH_SEEN, [(seen, seen, name) for name, seen in clusters])


#: A reconciler's latest state; an event older than the one held (a late retry) leaves it.
_LATEST = (
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
    " AND (excluded.state <> 'progressing' OR reconcilers.state = 'progressing'))"
)


_LATEST_TYPES = (*(_TEXT,) * 9, _FLOAT, _FLOAT, _FLOAT, "int8", "int4", _FLOAT)


def _latest_row(cluster: Cluster, report: Report, report_id: int, now: float) -> tuple[Any, ...]:
    """The parameters of ``_LATEST``."""
    # When the failure began, on the cluster's clock (the event's own time: a delivery may come
    # late) and on the hub's (when the hub first heard of it).
    failing = (
        (report.event_time if report.event_time is not None else now) if report.state == "failure" else None
    )
    noticed = now if report.state == "failure" else None
    return (
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
    )


#: The reconciler's times at a revision: on the cluster's clock, and (the ``_received``
#: columns) on the hub's.
_DEPLOYMENT = (
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
    " first_failure_received = COALESCE(deployments.first_failure_received, excluded.first_failure_received)"
)


_DEPLOYMENT_TYPES = (*(_TEXT,) * 4, *(_FLOAT,) * 8)


def _deployment_row(cluster: Cluster, report: Report, when: float, now: float) -> tuple[Any, ...]:
    """The parameters of ``_DEPLOYMENT``: ``when`` on the cluster's clock, ``now`` on the hub's."""
    ok = when if report.state == "success" else None
    bad = when if report.state == "failure" else None
    ok_now = now if report.state == "success" else None
    bad_now = now if report.state == "failure" else None
    return (
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
    )
