"""Which clusters an environment's fleet held when, for the DORA figures (dora.py): each
registration of a cluster (``keys add`` until ``keys revoke``; a revoked name registered again
starts another) and the hub's receipt of its first report in it.

A registration **counts** from its first report until it is revoked, except while its cluster
is **lost**: silent for longer than ``LOST_AFTER`` (the reads' default ``staleAfter``) although
one of its reconcilers heartbeats, from the end of the interval in which it was last heard plus
``LOST_AFTER`` until it is heard from again. A cluster registered that never reported counts
for nothing (the pages show it stale). The hub keeps when each cluster was heard as coarse
intervals (``heard``, with each batch of reports: the current one in ``clusters.seen_since`` to
``clusters.last_seen``, the closed ones in ``cluster_seen``), not every heartbeat. A deployment
is judged against the registrations that counted at its moment (``completed_at``), so a cluster
registered, revoked, lost or back later changes the present, never past figures.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from promoter.hub.db import Tx
from promoter.hub.sqlrows import FLOAT, TEXT, json_param, rows_query

#: Seconds of silence after which a cluster that heartbeats is lost for the DORA figures: the
#: default ``staleAfter`` of the reads (app.py's ``DEFAULT_STALE_AFTER``, 30m). Fixed, not a
#: read's parameter: the intervals are written with it at ingest, so past figures stay written.
LOST_AFTER = 1800.0
Span = tuple[float, float]  # [from, until) on the hub's clock; until may be math.inf


@dataclass(frozen=True)
class Registration:
    cluster: str
    cluster_type: str
    registered: float  # the hub's clock, as every time here
    revoked: float | None  # None: registered still
    first_report: float | None  # None: no report since it was registered

    @property
    def counts_from(self) -> float | None:
        """When the registration starts to count (its first report), None when it never does."""
        return None if self.first_report is None else max(self.registered, self.first_report)

    def overlaps(self, start: float, end: float) -> bool:
        """Whether the cluster was registered at some moment of [start, end)."""
        return self.registered < end and (self.revoked is None or self.revoked > start)


def registrations(tx: Tx, environment: str) -> list[Registration]:
    """Every registration of the environment's clusters, revoked ones too. A cluster written
    without one (by hand, or by an older hub) is registered from its ``created_at``."""
    rows = tx.rows(
        "SELECT g.cluster, g.cluster_type, g.registered_at, g.revoked_at,"
        " COALESCE(g.first_report, CASE WHEN g.revoked_at IS NULL THEN c.first_report END)"
        " FROM cluster_registrations g JOIN clusters c ON c.name = g.cluster WHERE g.environment = ?"
        " UNION ALL SELECT c.name, c.cluster_type, c.created_at, c.revoked_at,"
        " COALESCE(c.first_report, CASE WHEN c.last_seen IS NOT NULL THEN c.created_at END)"
        " FROM clusters c WHERE c.environment = ?"
        " AND NOT EXISTS (SELECT 1 FROM cluster_registrations g WHERE g.cluster = c.name)"
        " ORDER BY 1, 3",
        (environment, environment),
    )
    return [
        Registration(
            str(c), str(t), float(r), None if v is None else float(v), None if f is None else float(f)
        )
        for c, t, r, v, f in rows
    ]


def completed_at(
    fleet: Iterable[Registration],
    reached: Mapping[str, float],
    lost: Mapping[str, Sequence[Span]] | None = None,
) -> float | None:
    """The first moment at which at least one of ``fleet`` counted and every registration that
    counted then had its cluster reach the commit (``reached``: cluster -> the hub's receipt);
    None while there is no such moment. A registration counts while registered, from its first
    report, outside its cluster's ``lost`` spans (cluster -> spans, in order); in each stretch
    it counts, it holds the commit up until its cluster reaches it."""
    lost = lost or {}
    events = sorted(
        e
        for registration in fleet
        for a, b in _counting(registration, lost.get(registration.cluster, ()))
        for e in _events(a, b, reached.get(registration.cluster, math.inf))
    )
    return _first_complete(events)


def _counting(registration: Registration, lost: Sequence[Span]) -> list[Span]:
    """The stretches in which ``registration`` counts: from ``counts_from`` until revoked, less
    the ``lost`` spans (in order, not overlapping)."""
    start = registration.counts_from
    end = math.inf if registration.revoked is None else registration.revoked
    if start is None:
        return []
    out = []
    for lost_from, lost_until in lost:
        if lost_from > start:
            out.append((start, min(lost_from, end)))
        start = max(start, lost_until)
    out.append((start, end))
    return [(a, b) for a, b in out if b > a]


def _events(start: float, end: float, reached: float) -> list[tuple[float, int, int]]:
    """(when, change in counted, change in holding up) of a stretch [start, end) in which a
    registration counts: it holds the commit up until its cluster ``reached`` it."""
    held_until = min(end, reached)
    holds = [(start, 0, 1), (held_until, 0, -1)] if held_until > start else []
    return [(start, 1, 0), (end, -1, 0), *holds]


def _first_complete(events: list[tuple[float, int, int]]) -> float | None:
    """The first moment of the sorted ``events`` at which one counts and none holds up."""
    counted = holding = 0
    for i, (when, more, held) in enumerate(events):
        counted, holding = counted + more, holding + held
        if math.isinf(when) or (i + 1 < len(events) and events[i + 1][0] == when):
            continue  # the state at ``when`` is known once all of its events are in
        if counted > 0 and holding == 0:
            return when
    return None


def types_between(fleet: Iterable[Registration], start: float, end: float) -> list[str]:
    """The cluster types with a cluster registered at some moment of [start, end), sorted."""
    return sorted({r.cluster_type for r in fleet if r.overlaps(start, end)})


def lost_spans(seen: Sequence[Span], heartbeats: bool, after: float = LOST_AFTER) -> list[Span]:
    """The spans in which a cluster was lost, from the intervals it was heard in (in order, the
    last one the current): between two, from the end of the first plus ``after`` to the start
    of the next; after the last, from its end plus ``after`` on, unless none of its reconcilers
    heartbeats now (its silence is no sign of trouble: ingest starts no new interval then)."""
    out = [(a[1] + after, b[0]) for a, b in itertools.pairwise(seen) if b[0] > a[1] + after]
    if seen and heartbeats:
        out.append((seen[-1][1] + after, math.inf))
    return out


def silences(tx: Tx, environment: str) -> dict[str, list[Span]]:
    """Cluster -> the spans in which it was lost, of every cluster registered in ``environment``."""
    names = (
        "SELECT cluster FROM cluster_registrations WHERE environment = ?"
        " UNION SELECT name FROM clusters WHERE environment = ?"
    )
    closed: dict[str, list[Span]] = {}
    for cluster, a, b in tx.rows(
        f"SELECT cluster, seen_from, seen_until FROM cluster_seen WHERE cluster IN ({names}) ORDER BY 1, 2",
        (environment, environment),
    ):
        closed.setdefault(str(cluster), []).append((float(a), float(b)))
    out = {}
    for name, since, last, beats in tx.rows(
        "SELECT name, COALESCE(seen_since, first_report, created_at), last_seen, heartbeats FROM clusters"
        f" WHERE name IN ({names}) AND last_seen IS NOT NULL",
        (environment, environment),
    ):
        seen = [*closed.get(str(name), []), (float(since), float(last))]
        out[str(name)] = lost_spans(seen, bool(beats))
    return out


_GAP = f"c.last_seen IS NULL OR (c.heartbeats > 0 AND c.last_seen < u.seen - {LOST_AFTER})"
_PG_HEARD = (
    f"WITH u AS ({rows_query((TEXT, FLOAT), ('name', 'seen'))}), gap AS ("
    " SELECT c.name, u.seen, COALESCE(c.seen_since, c.first_report, c.created_at) AS since, c.last_seen"
    f" FROM clusters c JOIN u ON c.name = u.name WHERE c.name = ANY(?::text[]) AND ({_GAP})),"
    " moved AS (UPDATE clusters SET seen_since = gap.seen FROM gap WHERE clusters.name = gap.name)"
    " INSERT INTO cluster_seen (cluster, seen_from, seen_until) SELECT name, since, last_seen FROM gap"
    " WHERE last_seen IS NOT NULL ON CONFLICT DO NOTHING"
)


# SQLite: the clusters of a batch as one JSON object (name -> receipt), each read by its key;
# only those heard after a silence come back.
_SQLITE_GAPS = (
    "SELECT c.name, u.value AS seen, c.last_seen, COALESCE(c.seen_since, c.first_report, c.created_at)"
    " FROM json_each(?) AS u JOIN clusters c ON c.name = u.key WHERE " + _GAP.replace("u.seen", "u.value")
)


def heard(tx: Tx, clusters: Mapping[str, float]) -> None:
    """Each cluster -> its latest receipt in a batch of reports, before its ``last_seen`` moves there: a
    receipt more than ``LOST_AFTER`` after the end of the cluster's current interval (of a
    cluster one of whose reconcilers heartbeats) closes that interval into ``cluster_seen`` and
    starts a new one; any other extends it (``last_seen`` is its end). Nothing is written but
    for a cluster heard after a silence; the batch's clusters are read in one statement."""
    if not clusters:
        return
    if tx.dialect == "postgresql":
        tx.run(_PG_HEARD, (*json_param(clusters.items()), list(clusters)))
        return
    closed, moved = [], []
    for name, when, last, since in tx.rows(_SQLITE_GAPS, (json.dumps(clusters),)):
        moved.append((when, name))
        if last is not None:
            closed.append((name, since, last))
    tx.run_many(
        "INSERT INTO cluster_seen (cluster, seen_from, seen_until) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        closed,
    )
    tx.run_many("UPDATE clusters SET seen_since = ? WHERE name = ?", moved)
