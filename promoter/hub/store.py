"""Writes of a report: appended to history, with each reconciler's latest state and the
per-revision deployment times kept in the same transaction (a merged platform commit is
recorded by commits.py).

Idempotent: a report whose exact body this cluster already delivered is acknowledged again and
stored once (the digest is unique, so two concurrent deliveries cannot both land).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from promoter.hub import fleet
from promoter.hub.db import Database, Row, Tx
from promoter.hub.keys import Cluster
from promoter.hub.payloads import IngestError, Report
from promoter.hub.rows import (
    DEPLOYMENT,
    DEPLOYMENT_TYPES,
    INSERT_REPORT,
    LATEST,
    LATEST_TYPES,
    REPORT_TYPES,
    deployment_row,
    latest_row,
    report_row,
)
from promoter.hub.sqlrows import FLOAT, TEXT, insert_many, json_param, pg_insert, rows_query
from promoter.hub.summary import refresh_many, seen_many

TOUCH_TYPES = (TEXT, FLOAT, FLOAT, TEXT, TEXT)


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
    refresh: dict[str, float] = {}  # cluster -> latest receipt: summary and last-seen
    seen: dict[str, float] = {}  # cluster -> latest receipt: last-seen alone
    for turn in _turns(items):
        _store_turn(tx, items, turn, results, refresh, seen)
    _update_clusters(tx, refresh, seen)
    stored = [r for r in results if r is not None]
    assert len(stored) == len(items)
    return stored


def _turns(items: Sequence[Pending]) -> list[list[int]]:
    """The indexes of ``items`` in turns: each reconciler's first report in the first turn, its
    second in the second, and so on."""
    turns: list[list[int]] = []
    seen_in_turn: dict[tuple[str, str], int] = {}
    for i, (cluster, report, _, _) in enumerate(items):
        key = (cluster.name, report.reconciler)
        nth = seen_in_turn.get(key, 0)
        seen_in_turn[key] = nth + 1
        if nth == len(turns):
            turns.append([])
        turns[nth].append(i)
    return turns


def _update_clusters(tx: Tx, refresh: dict[str, float], seen: dict[str, float]) -> None:
    """Refresh the summary of the clusters ``refresh`` names and the last-seen of those ``seen``
    does, and the interval in which each was heard."""
    if tx.dialect == "postgresql" and (refresh or seen):
        # Several writers (and hub processes) lock clusters' rows in one order: no deadlock.
        tx.run(
            "SELECT 1 FROM clusters WHERE name = ANY(?::text[]) ORDER BY name FOR UPDATE",
            (sorted(refresh.keys() | seen.keys()),),
        )
    refreshed = {name: max(at, seen.get(name, 0.0)) for name, at in refresh.items()}
    # When each cluster was heard, as coarse intervals (fleet.heard), before last-seen moves.
    fleet.heard(tx, seen | refreshed)
    refresh_many(tx, sorted(refreshed.items()))
    seen_many(tx, [(name, seen[name]) for name in sorted(seen) if name not in refresh])


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
    appended = _touch_unchanged(tx, items, zip(turn, held_rows, strict=True), results, seen)
    ids = _append_many(tx, [report_row(*items[i]) for i, _, _ in appended])
    latest, deployments, duplicates = _rows_of_appended(items, appended, ids, results, refresh)
    found = tx.many("SELECT id FROM reports WHERE digest = ?", [(items[i][2],) for i in duplicates])
    for i, row in zip(duplicates, found, strict=True):
        results[i] = Stored(int(row[0]) if row else 0, True)
    insert_many(tx, LATEST, LATEST_TYPES, latest)
    insert_many(tx, DEPLOYMENT, DEPLOYMENT_TYPES, deployments)


def _touch_unchanged(
    tx: Tx,
    items: Sequence[Pending],
    turn: Iterable[tuple[int, Row | None]],
    results: list[Stored | None],
    seen: dict[str, float],
) -> list[tuple[int, _Held | None, float]]:
    """Of the reports of ``turn`` (index, its reconciler's latest held), store those that change
    nothing a reader needs by moving last-seen times; the others, (index, held, when), to append."""
    touched: list[tuple[Any, ...]] = []
    appended: list[tuple[int, _Held | None, float]] = []
    for i, row in turn:
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
    return appended


def _rows_of_appended(
    items: Sequence[Pending],
    appended: list[tuple[int, _Held | None, float]],
    ids: dict[str, int],
    results: list[Stored | None],
    refresh: dict[str, float],
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[int]]:
    """The latest-state and deployment rows of the reports appended (``ids``: by digest), and
    the indexes of those left out as retries of one stored already."""
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
            latest.append(latest_row(cluster, report, report_id, now))
        if report.revision:
            deployments.append(deployment_row(cluster, report, when, now))
        refresh[cluster.name] = max(now, refresh.get(cluster.name, now))
    return latest, deployments, duplicates


def _append_many(tx: Tx, rows: Sequence[tuple[Any, ...]]) -> dict[str, int]:
    """Append ``rows`` (``report_row``s) to history: the id of each by its digest; a digest
    stored already (a retry) is left out."""
    if not rows:
        return {}
    if tx.dialect == "postgresql":
        sql = pg_insert(INSERT_REPORT, REPORT_TYPES) + ", digest"
        return {str(digest): int(report_id) for report_id, digest in tx.rows(sql, json_param(rows))}
    ids = tx.many(INSERT_REPORT, rows)
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
        f" FROM ({rows_query((TEXT, TEXT), ('cluster', 'name'))}) AS k"
        " JOIN reconcilers r ON r.cluster = k.cluster AND r.name = k.name"
        " ORDER BY r.cluster, r.name FOR UPDATE OF r",
        json_param(pairs),
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
            f" FROM ({rows_query(TOUCH_TYPES, ('message', 'event_time', 'received_at', 'cluster', 'name'))}) AS u"
            " WHERE reconcilers.cluster = u.cluster AND reconcilers.name = u.name",
            json_param(rows),
        )
        return
    tx.run_many(
        "UPDATE reconcilers SET message = ?, event_time = ?, received_at = ? WHERE cluster = ? AND name = ?",
        rows,
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
