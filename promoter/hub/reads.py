"""Every read by name, for the JSON API, the pages and the CLI alike: one dispatcher, so the
three always answer the same."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from promoter.hub import queries
from promoter.hub.db import Database, Tx
from promoter.hub.payloads import IngestError
from promoter.hub.rollout import rollout

READS = (
    "rollout",
    "environments",
    "environment",
    "clusters",
    "cluster",
    "history",
    "discrepancies",
    "drift",
    "stale",
)


def read(db: Database, name: str, params: Mapping[str, Any], now: float, stale_after: float) -> Any:
    """The read ``name`` with ``params`` (query parameters; ``name`` for one environment or
    cluster; ``clusterType`` a list); NotFound or IngestError(400) when it cannot answer."""
    with db.transaction(write=False) as tx:
        return _readers(tx, params, now, stale_after)[name]()


def repo_urls(db: Database) -> dict[str, str]:
    """Each environment's platform repo web page, where the promoter recorded one (page links)."""
    with db.transaction(write=False) as tx:
        rows = tx.rows("SELECT name, repo_url FROM environments WHERE repo_url <> ''")
    return {str(name): str(url) for name, url in rows}


def _readers(tx: Tx, q: Mapping[str, Any], now: float, stale_after: float) -> dict[str, Callable[[], Any]]:
    return {
        "rollout": lambda: _rollout(tx, q, now, stale_after),
        "environments": lambda: queries.overview(tx, now, stale_after),
        "environment": lambda: queries.environment_state(tx, q["name"], now, stale_after),
        "clusters": lambda: queries.clusters(tx, now, stale_after, q.get("environment")),
        "cluster": lambda: queries.cluster_detail(
            tx, q["name"], now, stale_after, _limit(q.get("limit"), 50)
        ),
        "history": lambda: queries.history(
            tx, q.get("cluster"), q.get("environment"), _limit(q.get("limit"), 100)
        ),
        "discrepancies": lambda: queries.discrepancies(tx, now, stale_after),
        "drift": lambda: queries.drift(tx, now, stale_after, q.get("environment")),
        "stale": lambda: queries.stale(tx, now, stale_after, q.get("environment")),
    }


def _rollout(tx: Tx, q: Mapping[str, Any], now: float, stale_after: float) -> dict[str, Any]:
    environment, commit = q.get("environment"), q.get("commit")
    if not environment or not commit:
        raise IngestError(400, "rollout needs environment and commit")
    with_times = str(q.get("times", "true")).lower() not in ("0", "false", "no")
    return rollout(
        tx, str(environment), str(commit), now, stale_after, tuple(q.get("clusterType") or ()), with_times
    )


def _limit(value: Any, default: int) -> int:
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.isdigit() else default
