"""What ``queries.clusters`` reads beside each cluster's row: the reconciler failing longest and
its message, the controllers that report for it, and the main commit each platform commit
carried. Each read is limited to an environment and, when a page lists a few clusters, to
theirs (a score of reconcilers each, not the environment's hundreds of thousands)."""

from __future__ import annotations

from collections.abc import Sequence

from promoter.hub.db import Tx


def scope(environment: str | None, names: Sequence[str] | None) -> tuple[str, list[str]]:
    """The ``AND ...`` of a reconcilers query limited to an environment, or to clusters ``names``
    (by the primary key: SQLite, which keeps no statistics, would read the environment's index,
    every reconciler of it, for a page's hundred clusters; the caller keeps those of
    ``environment``)."""
    if names is not None:
        return f" AND cluster IN ({', '.join('?' for _ in names) or 'NULL'})", list(names)
    return (" AND environment = ?", [environment]) if environment else ("", [])


def beside(
    tx: Tx, environment: str | None, names: Sequence[str] | None
) -> tuple[dict[str, tuple[str, str]], dict[str, list[str]]]:
    """``failing_reconcilers`` and ``senders``."""
    return failing_reconcilers(tx, environment, names), senders(tx, environment, names)


def failing_reconcilers(
    tx: Tx, environment: str | None, names: Sequence[str] | None
) -> dict[str, tuple[str, str]]:
    """Per cluster, the reconciler failing longest and its message."""
    where, params = scope(environment, names)
    rows = tx.rows(
        "SELECT cluster, name, message, environment FROM reconcilers WHERE state = 'failure'"
        f"{where} ORDER BY cluster, failing_since, name",
        params,
    )
    out: dict[str, tuple[str, str]] = {}
    for cluster, name, message, env in rows:
        if not environment or env == environment:
            out.setdefault(str(cluster), (str(name), str(message)))
    return out


def senders(tx: Tx, environment: str | None, names: Sequence[str] | None) -> dict[str, list[str]]:
    """Per cluster, the controllers that report for it (flux, argocd, native)."""
    where, params = scope(environment, names)
    rows = tx.rows(
        f"SELECT DISTINCT cluster, source, environment FROM reconcilers WHERE 1 = 1{where} ORDER BY cluster, source",
        params,
    )
    out: dict[str, list[str]] = {}
    for cluster, source, env in rows:
        if not environment or env == environment:
            out.setdefault(str(cluster), []).append(str(source))
    return out


def mains(tx: Tx, environment: str) -> dict[str, str | None]:
    """The main commit each platform commit of ``environment`` carried."""
    rows = tx.rows("SELECT sha, main_commit FROM platform_commits WHERE environment = ?", (environment,))
    return {str(sha): main for sha, main in rows}
