"""How much of a long list a page shows. At 10,000 clusters an environment's page listed every
cluster: 5 MB of HTML, 0.4 s to render and 0.1 s to read, again every 5 seconds in every open
tab. A page now lists the first ``ROWS`` clusters (in its own order) and names the first
``FAILING`` failing clusters under an environment (longest failing first), says how many there
are in all, and links to them all (``?all=1``, or ``/failing``). The JSON API and the CLI still
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
    """A page's rows, how many there are in all (``total``), and the environment they are
    limited to (None: every one)."""

    def __init__(self, rows: list[dict[str, Any]], total: int, environment: str | None = None) -> None:
        super().__init__(rows)
        self.total = total
        self.environment = environment


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
