"""The lists of what is off course, for ``/v1/discrepancies``, ``/v1/drift`` and ``/v1/stale``
and their pages: promotions due between environments, clusters not at their environment's head,
stale clusters. A page reads only the clusters it lists (``names``; which ones, and how many
there are in all, ``promoter.hub.shown`` finds in SQL)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from promoter.hub.db import Tx
from promoter.hub.graph import graph
from promoter.hub.queries import clusters, environment_names, failing, head


def discrepancies(
    tx: Tx,
    now: float,
    stale_after: float,
    drifting: Sequence[str] | None = None,
    failed: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Between each environment and each it follows (the one before it, in a list Pipeline): a
    main commit the one runs and the other does not yet; and in every environment, clusters not
    at its head (of ``drifting``, or all) and failing clusters (of ``failed``, or all)."""
    items = promotions_due(tx)
    items += [{"kind": "drift", **item} for item in drift(tx, now, stale_after, names=drifting)]
    return items + [{"kind": "failing", **item} for item in failing(tx, now, stale_after, names=failed)]


def promotions_due(tx: Tx) -> list[dict[str, Any]]:
    """Each (upstream, downstream) pair of environments whose heads run different main commits."""
    items: list[dict[str, Any]] = []
    names = environment_names(tx)
    heads = {n: head(tx, n) for n in names}
    edges = [(u, d) for d, ups in graph(tx, names).items() for u in ups]
    for upstream, downstream in edges:
        up, down = heads[upstream], heads[downstream]
        if up and down and up["mainCommit"] != down["mainCommit"]:
            items.append(
                {
                    "kind": "promotion",
                    "upstream": upstream,
                    "downstream": downstream,
                    "upstreamMainCommit": up["mainCommit"],
                    "downstreamMainCommit": down["mainCommit"],
                }
            )
    return items


def drift(
    tx: Tx, now: float, stale_after: float, environment: str | None = None, names: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Clusters (of ``names``, or all) not at their environment's head (behind, or reporting no platform commit)."""
    out = []
    for c in clusters(tx, now, stale_after, environment, names=names):
        if c["behind"] != 0:
            out.append({k: c[k] for k in ("name", "environment", "clusterType", "commit", "behind", "stale")})
    return out


def stale(
    tx: Tx, now: float, stale_after: float, environment: str | None = None, names: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Stale clusters (of ``names``, or all)."""
    return [
        {k: c[k] for k in ("name", "environment", "clusterType", "lastSeen", "registeredAt")}
        for c in clusters(tx, now, stale_after, environment, names=names)
        if c["stale"]
    ]
