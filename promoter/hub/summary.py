"""Each cluster's summary columns, kept with its reports (a rollout reads one row per cluster,
not one per reconciler), its last-seen time and its first report since it was registered (from
which the DORA figures count it: dora.py)."""

from __future__ import annotations

from collections.abc import Sequence

from promoter.hub.db import Tx
from promoter.hub.sqlrows import FLOAT, TEXT, json_param, rows_query

SEEN_TYPES = (TEXT, FLOAT)


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
    refresh_many(tx, [(name, seen)])


_REFRESH_SEEN = (
    _SUMMARY["sqlite"]
    + ", last_seen = CASE WHEN last_seen IS NULL OR last_seen < ? THEN ? ELSE last_seen END,"
    " first_report = COALESCE(first_report, ?) WHERE name = ?"
)


def refresh_many(tx: Tx, clusters: Sequence[tuple[str, float]]) -> None:
    """``refresh_cluster(tx, name, seen)`` of each (name, seen)."""
    if not clusters:
        return
    if tx.dialect == "postgresql":
        tx.run(
            _SUMMARY["postgresql"]
            + ", last_seen = CASE WHEN clusters.last_seen IS NULL OR clusters.last_seen < u.seen"
            " THEN u.seen ELSE clusters.last_seen END, first_report = COALESCE(clusters.first_report, u.seen)"
            f" FROM ({rows_query(SEEN_TYPES, ('name', 'seen'))}) AS u WHERE clusters.name = u.name"
            # The names again, as an array: the planner then reads them by the primary key (it
            # takes a JSON array for a hundred rows, and would read every cluster's).
            " AND clusters.name = ANY(?::text[])",
            (*json_param(clusters), [name for name, _ in clusters]),
        )
        return
    tx.run_many(_REFRESH_SEEN, [(seen, seen, seen, name) for name, seen in clusters])


def seen_many(tx: Tx, clusters: list[tuple[str, float]]) -> None:
    """Each (cluster, receipt)'s last-seen time moves forward."""
    if not clusters:
        return
    if tx.dialect == "postgresql":
        tx.run(
            "UPDATE clusters SET last_seen = u.seen, first_report = COALESCE(clusters.first_report, u.seen)"
            f" FROM ({rows_query(SEEN_TYPES, ('name', 'seen'))}) AS u"
            " WHERE clusters.name = u.name AND (clusters.last_seen IS NULL OR clusters.last_seen < u.seen)"
            " AND clusters.name = ANY(?::text[])",
            (*json_param(clusters), [name for name, _ in clusters]),
        )
        return
    tx.run_many(
        "UPDATE clusters SET last_seen = ?, first_report = COALESCE(first_report, ?)"
        " WHERE name = ? AND (last_seen IS NULL OR last_seen < ?)",
        [(when, when, name, when) for name, when in clusters],
    )
