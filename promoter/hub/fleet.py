"""Which clusters an environment's fleet held when, for the DORA figures (dora.py): each
registration of a cluster (``keys add`` until ``keys revoke``; a revoked name registered again
starts another) and the hub's receipt of its first report in it.

A registration **counts** from its first report until it is revoked. A cluster registered that
never reported counts for nothing (the pages show it stale); one that reported and then fell
silent still counts: the hub keeps no heartbeat as history, so it cannot tell afterwards when a
cluster went quiet. A deployment is judged against the registrations that counted at its
moment (``completed_at``), so a cluster registered, revoked or lost later changes the present,
never past figures.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from promoter.hub.db import Tx


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


def completed_at(fleet: Iterable[Registration], reached: Mapping[str, float]) -> float | None:
    """The first moment at which at least one of ``fleet`` counted and every registration that
    counted then had its cluster reach the commit (``reached``: cluster -> the hub's receipt);
    None while there is no such moment. A registration holds the commit up from when it counts
    until its cluster reaches it or it is revoked, whichever is first."""
    events = sorted(e for registration in fleet for e in _events(registration, reached))
    return _first_complete(events)


def _events(registration: Registration, reached: Mapping[str, float]) -> list[tuple[float, int, int]]:
    """(when, change in counted, change in holding up) of one registration: it counts from
    ``counts_from`` until revoked, and holds the commit up until its cluster reaches it."""
    start = registration.counts_from
    end = math.inf if registration.revoked is None else registration.revoked
    if start is None or end <= start:
        return []
    held_until = min(end, reached.get(registration.cluster, math.inf))
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
