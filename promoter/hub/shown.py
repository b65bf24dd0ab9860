"""How much of a long list a page shows. At 10,000 clusters an environment's page listed every
cluster: 5 MB of HTML, 0.4 s to render and 0.1 s to read, again every 5 seconds in every open
tab. A page now lists the first ``ROWS`` clusters (in its own order) and names the first
``FAILING`` failing clusters under an environment (longest failing first), says how many there
are in all, and links to them all (``?all=1``, or ``/failing``); ``/failing``, ``/drift``,
``/stale`` and ``/discrepancies`` list their first ``ROWS`` the same way, found and counted in
SQL (``first_failing``, ``first_drifting``, ``first_stale``). The JSON API and the CLI still
answer in full: a script asks for what it needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from promoter.hub.db import Tx

#: Clusters in an environment's table, failing clusters on ``/failing``.
ROWS = 50
#: Failing clusters named under each environment on ``/`` and on an environment's page.
FAILING = 10


@dataclass(frozen=True)
class Page:
    """A read as a page shows it: at most ``rows`` clusters in a table (None: all of them), at
    most ``failing`` failing clusters named under an environment."""

    rows: int | None = ROWS
    failing: int = FAILING


class Listed(list[dict[str, Any]]):
    """A page's rows, how many there are in all (``total``; of each kind, ``counts``), and the
    environment they are limited to (None: every one)."""

    def __init__(
        self,
        rows: list[dict[str, Any]],
        total: int,
        environment: str | None = None,
        counts: dict[str, int] | None = None,
    ) -> None:
        super().__init__(rows)
        self.total = total
        self.environment = environment
        self.counts = counts or {}


def first_failing(
    tx: Tx, now: float, environment: str | None, each: int | None, overall: int | None = None
) -> tuple[list[str], dict[str, int]]:
    """The failing clusters a page names, longest failing first as ``queries.failing`` orders
    them: at most ``each`` of each environment and ``overall`` in all (None: no bound); and how
    many fail in each environment. Reads one short row per failing cluster, nothing else."""
    where, params = (" AND environment = ?", (environment,)) if environment else ("", ())
    rows = tx.rows(
        "SELECT name, environment, COALESCE(failing_received, failing_since) FROM clusters"
        f" WHERE revoked_at IS NULL AND failing > 0{where}",
        params,
    )
    rows.sort(key=lambda r: (r[2] or now, r[1], r[0]))
    totals: dict[str, int] = {}
    picked: list[str] = []
    for name, env, _ in rows:
        totals[str(env)] = totals.get(str(env), 0) + 1
        if (each is None or totals[str(env)] <= each) and (overall is None or len(picked) < overall):
            picked.append(str(name))
    return picked, totals


def first_clusters(tx: Tx, environment: str, page: Page | None) -> list[str] | None:
    """The clusters of ``environment`` a page lists, first in ``queries.clusters``' order (None:
    every one, as the JSON lists them)."""
    if page is None or page.rows is None:
        return None
    rows = tx.rows(
        "SELECT name FROM clusters WHERE environment = ? AND revoked_at IS NULL ORDER BY cluster_type, name LIMIT ?",
        (environment, page.rows),
    )
    return [str(r[0]) for r in rows]


def count_clusters(tx: Tx, environment: str) -> int:
    """How many registered clusters ``environment`` has."""
    row = tx.one("SELECT COUNT(*) FROM clusters WHERE environment = ? AND revoked_at IS NULL", (environment,))
    return int(row[0]) if row else 0


#: Clusters not at their environment's head (``offcourse.drift``): behind it, reporting no platform
#: commit, or of an environment without one.
_DRIFTING = (
    "FROM clusters c LEFT JOIN (SELECT environment, MAX(position) AS top FROM platform_commits"
    " GROUP BY environment) h ON h.environment = c.environment WHERE c.revoked_at IS NULL"
    " AND (h.top IS NULL OR c.platform_position IS NULL OR c.platform_position <> h.top)"
)
#: Stale clusters (``rollout.is_stale``): never reported, or silent since ``?`` with a sender
#: that heartbeats.
_STALE = (
    "FROM clusters c WHERE c.revoked_at IS NULL"
    " AND (c.last_seen IS NULL OR (c.heartbeats <> 0 AND c.last_seen < ?))"
)


def first_drifting(tx: Tx, environment: str | None, rows: int | None) -> tuple[list[str], int]:
    """The first ``rows`` (None: every one) clusters not at their environment's head, in
    ``offcourse.drift``'s order (environment, type, name), and how many there are."""
    return _first(tx, _DRIFTING, (), environment, rows)


def first_stale(
    tx: Tx, now: float, stale_after: float, environment: str | None, rows: int | None
) -> tuple[list[str], int]:
    """The first ``rows`` (None: every one) stale clusters, in ``offcourse.stale``'s order, and
    how many there are."""
    return _first(tx, _STALE, (now - stale_after,), environment, rows)


def _first(
    tx: Tx, where: str, params: tuple[Any, ...], environment: str | None, rows: int | None
) -> tuple[list[str], int]:
    """The names of the first ``rows`` clusters of ``where`` (by environment, type and name), and
    how many it selects: two short reads, whatever the size of the fleet."""
    if environment:
        where, params = f"{where} AND c.environment = ?", (*params, environment)
    limit, bound = (" LIMIT ?", (rows,)) if rows is not None else ("", ())
    order = "ORDER BY c.environment, c.cluster_type, c.name"
    names = [str(r[0]) for r in tx.rows(f"SELECT c.name {where} {order}{limit}", (*params, *bound))]
    if rows is None or len(names) < rows:
        return names, len(names)
    counted = tx.one(f"SELECT COUNT(*) {where}", params)
    return names, int(counted[0]) if counted else 0
