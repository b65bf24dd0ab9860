"""The reads behind the CLI, the JSON API and the pages; each returns plain JSON-ready data.

A cluster's platform commit is the oldest recorded platform commit that any of its applying
reconcilers is at (the cluster runs at least that). An environment's head is the last
platform commit recorded for it. Nothing here selects from ``sender_keys``.
"""

from __future__ import annotations

import itertools
from typing import Any

from promoter.hub.db import Tx
from promoter.hub.rollout import NotFound, rollout

HISTORY_LIMIT = 1000


def environment_names(tx: Tx) -> list[str]:
    """Environments in the Pipeline's order (as the promoter recorded it), then any others."""
    ordered = [str(r[0]) for r in tx.rows("SELECT name FROM environments ORDER BY position, name")]
    others = tx.rows("SELECT DISTINCT environment FROM clusters ORDER BY environment")
    return ordered + [str(r[0]) for r in others if r[0] not in ordered]


def head(tx: Tx, environment: str) -> dict[str, Any] | None:
    row = tx.one(
        "SELECT sha, main_commit, position, recorded_at FROM platform_commits WHERE environment = ?"
        " ORDER BY position DESC LIMIT 1",
        (environment,),
    )
    if row is None:
        return None
    return {"commit": row[0], "mainCommit": row[1], "position": int(row[2]), "recordedAt": row[3]}


def clusters(tx: Tx, now: float, stale_after: float, environment: str | None = None) -> list[dict[str, Any]]:
    """Each registered cluster: where it is, how far behind its environment's head, how healthy."""
    where, params = ("AND environment = ?", [environment]) if environment else ("", [])
    rows = tx.rows(
        "SELECT name, environment, cluster_type, last_seen, platform_position, platform_sha, failing"
        f" FROM clusters c WHERE revoked_at IS NULL {where} ORDER BY environment, cluster_type, name",
        params,
    )
    heads: dict[str, dict[str, Any] | None] = {}
    mains: dict[str, dict[str, str | None]] = {}
    out = []
    for name, env, cluster_type, last_seen, position, sha, failing in rows:
        if env not in heads:
            heads[env], mains[env] = head(tx, env), _mains(tx, env)
        top = heads[env]
        out.append(
            {
                "name": name,
                "environment": env,
                "clusterType": cluster_type,
                "lastSeen": last_seen,
                "stale": last_seen is None or last_seen < now - stale_after,
                "commit": sha,
                "mainCommit": mains[env].get(sha) if sha else None,
                "behind": top["position"] - int(position) if top and position is not None else None,
                "failingReconcilers": int(failing or 0),
            }
        )
    return out


def _mains(tx: Tx, environment: str) -> dict[str, str | None]:
    rows = tx.rows("SELECT sha, main_commit FROM platform_commits WHERE environment = ?", (environment,))
    return {str(sha): main for sha, main in rows}


def cluster_detail(tx: Tx, name: str, now: float, stale_after: float, limit: int = 50) -> dict[str, Any]:
    row = tx.one("SELECT environment FROM clusters WHERE name = ? AND revoked_at IS NULL", (name,))
    if row is None:
        raise NotFound(f"no registered cluster {name}")
    summary = next(c for c in clusters(tx, now, stale_after, str(row[0])) if c["name"] == name)
    reconcilers = tx.rows(
        "SELECT name, role, source, state, revision, reason, message, received_at, failing_since"
        " FROM reconcilers WHERE cluster = ? ORDER BY name",
        (name,),
    )
    keys = ("name", "role", "source", "state", "revision", "reason", "message", "receivedAt", "failingSince")
    return {
        **summary,
        "reconcilerStates": [dict(zip(keys, r, strict=True)) for r in reconcilers],
        "history": history(tx, cluster=name, limit=limit),
    }


def history(
    tx: Tx, cluster: str | None = None, environment: str | None = None, limit: int = 100
) -> list[dict[str, Any]]:
    """Reports, newest first."""
    clauses, params = [], []
    for column, value in (("cluster", cluster), ("environment", environment)):
        if value:
            clauses.append(f"{column} = ?")
            params.append(value)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = tx.rows(
        "SELECT id, cluster, environment, cluster_type, source, reconciler, state, revision, branch, reason,"
        f" message, event_time, received_at FROM reports {where} ORDER BY id DESC LIMIT ?",
        [*params, max(1, min(limit, HISTORY_LIMIT))],
    )
    keys = (
        "id",
        "cluster",
        "environment",
        "clusterType",
        "source",
        "reconciler",
        "state",
        "revision",
        "branch",
        "reason",
        "message",
        "eventTime",
        "receivedAt",
    )
    return [dict(zip(keys, r, strict=True)) for r in rows]


def environment_state(tx: Tx, environment: str, now: float, stale_after: float) -> dict[str, Any]:
    """Scheduled (the head's assignments) against deployed (clusters whose platform commit
    carries that assignment), per cluster type and deployment target; and the head's rollout."""
    top = head(tx, environment)
    members = clusters(tx, now, stale_after, environment)
    if top is None and not members:
        raise NotFound(f"environment {environment} is not known to the hub")
    targets: list[dict[str, Any]] = []
    if top:
        scheduled = tx.rows(
            "SELECT cluster_type, deployment_target FROM assignments WHERE environment = ? AND sha = ?"
            " ORDER BY cluster_type, deployment_target",
            (environment, top["commit"]),
        )
        for cluster_type, target in scheduled:
            of_type = [c for c in members if c["clusterType"] == cluster_type]
            carrying = _carrying(tx, environment, cluster_type, target)
            targets.append(
                {
                    "clusterType": cluster_type,
                    "deploymentTarget": target,
                    "clusters": len(of_type),
                    "deployed": sum(1 for c in of_type if c["commit"] in carrying),
                }
            )
    progress = rollout(tx, environment, top["commit"], now, stale_after) if top else None
    return {
        "environment": environment,
        "head": top,
        "targets": targets,
        "rollout": progress,
        "clusters": members,
    }


def _carrying(tx: Tx, environment: str, cluster_type: str, target: str) -> set[str]:
    rows = tx.rows(
        "SELECT sha FROM assignments WHERE environment = ? AND cluster_type = ? AND deployment_target = ?",
        (environment, cluster_type, target),
    )
    return {str(r[0]) for r in rows}


def overview(tx: Tx, now: float, stale_after: float) -> list[dict[str, Any]]:
    """Each environment in order: its head and the head's rollout per cluster type."""
    out = []
    for name in environment_names(tx):
        top = head(tx, name)
        progress = rollout(tx, name, top["commit"], now, stale_after) if top else None
        out.append({"environment": name, "head": top, "rollout": progress})
    return out


def discrepancies(tx: Tx, now: float, stale_after: float) -> list[dict[str, Any]]:
    """Between each environment and the next in the Pipeline's order: a main commit the one
    runs and the next does not yet; and in every environment, clusters not at its head."""
    items: list[dict[str, Any]] = []
    names = environment_names(tx)
    heads = {n: head(tx, n) for n in names}
    for upstream, downstream in itertools.pairwise(names):
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
    for item in drift(tx, now, stale_after):
        items.append({"kind": "drift", **item})
    return items


def drift(tx: Tx, now: float, stale_after: float, environment: str | None = None) -> list[dict[str, Any]]:
    """Clusters not at their environment's head (behind, or reporting no platform commit)."""
    out = []
    for c in clusters(tx, now, stale_after, environment):
        if c["behind"] != 0:
            out.append({k: c[k] for k in ("name", "environment", "clusterType", "commit", "behind", "stale")})
    return out


def stale(tx: Tx, now: float, stale_after: float, environment: str | None = None) -> list[dict[str, Any]]:
    return [
        {k: c[k] for k in ("name", "environment", "clusterType", "lastSeen")}
        for c in clusters(tx, now, stale_after, environment)
        if c["stale"]
    ]
