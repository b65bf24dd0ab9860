"""The reads behind the CLI, the JSON API and the pages; each returns plain JSON-ready data.

A cluster's platform commit is the oldest recorded platform commit that any of its applying
reconcilers is at (the cluster runs at least that). An environment's head is the last
platform commit recorded for it. Nothing here selects from ``sender_keys``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from promoter.hub import badges, clusterfacts, holds
from promoter.hub.db import Tx
from promoter.hub.graph import graph
from promoter.hub.rollout import NotFound, cluster_states, find_commit, is_stale, rollout, scheduled_targets
from promoter.hub.shown import Page, count_clusters, first_clusters, first_failing
from promoter.hub.waves import waves

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
    repo = tx.one("SELECT repo_url FROM environments WHERE name = ?", (environment,))
    return {
        "commit": row[0],
        "mainCommit": row[1],
        "position": int(row[2]),
        "recordedAt": row[3],
        "platformRepo": str(repo[0]) if repo and repo[0] else None,
    }


def clusters(
    tx: Tx,
    now: float,
    stale_after: float,
    environment: str | None = None,
    only_failing: bool = False,
    names: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Each registered cluster (with ``only_failing``, those with a failing reconciler; with ``names``,
    those named): where it is, how far behind its environment's head, its state in the head's
    rollout, since when and why it fails, and which controllers report for it."""
    rows = _cluster_rows(tx, environment, only_failing, names)
    heads: dict[str, dict[str, Any] | None] = {}
    mains: dict[str, dict[str, str | None]] = {}
    states: dict[str, str] = {}
    few = only_failing or names is not None  # a few: read only theirs
    names = [str(r[0]) for r in rows] if few else None
    failing, senders = clusterfacts.beside(tx, environment, names)
    out = []
    for row in rows:
        name, env = row[0], row[1]
        if env not in heads:
            heads[env], mains[env] = head(tx, env), clusterfacts.mains(tx, env)
            states.update(_head_states(tx, env, heads[env], now, stale_after, names or ()))
        entry = _cluster_entry(row, heads[env], mains[env], states.get(name), now, stale_after)
        out.append({**entry, **_failing_fields(row, failing.get(name)), "senders": senders.get(name, [])})
    return out


def _cluster_entry(
    row: tuple[Any, ...],
    top: dict[str, Any] | None,
    mains: dict[str, str | None],
    state: str | None,
    now: float,
    stale_after: float,
) -> dict[str, Any]:
    """Where a cluster is (one of ``_cluster_rows``): its commit, how far behind ``top`` (its
    environment's head), and its ``state`` in the head's rollout."""
    name, env, cluster_type, last_seen, position, sha, _, _, beats, created = row
    return {
        "name": name,
        "environment": env,
        "clusterType": cluster_type,
        "lastSeen": last_seen,
        "registeredAt": created,
        "stale": is_stale(last_seen, beats, now, stale_after),
        "commit": sha,
        "mainCommit": mains.get(sha) if sha else None,
        "behind": top["position"] - int(position) if top and position is not None else None,
        "state": state,
        "badge": badges.of_cluster(state),
    }


def _failing_fields(row: tuple[Any, ...], first: tuple[str, str] | None) -> dict[str, Any]:
    """How many of a cluster's reconcilers fail, since when, and the ``first`` failing one's name and message."""
    count, since = row[6], row[7]
    return {
        "failingReconcilers": int(count or 0),
        "failingSince": since if count else None,
        "failingReconciler": first[0] if first else None,
        "failingMessage": first[1] if first else None,
    }


def _cluster_rows(
    tx: Tx, environment: str | None, only_failing: bool, names: Sequence[str] | None
) -> list[tuple[Any, ...]]:
    where, params = ("AND environment = ?", [environment]) if environment else ("", [])
    if only_failing:
        where += " AND failing > 0"
    if names is not None:
        where += f" AND name IN ({', '.join('?' for _ in names) or 'NULL'})"
        params += names
    return tx.rows(
        "SELECT name, environment, cluster_type, last_seen, platform_position, platform_sha, failing,"
        f" COALESCE(failing_received, failing_since), heartbeats, created_at FROM clusters c"
        f" WHERE revoked_at IS NULL {where} ORDER BY environment, cluster_type, name",
        params,
    )


def _head_states(
    tx: Tx, environment: str, top: dict[str, Any] | None, now: float, stale_after: float, names: Sequence[str]
) -> dict[str, str]:
    """Each cluster's (or the clusters ``names``') state in the rollout of its environment's head
    (as the gate counts it)."""
    if top is None:
        return {}
    commit = find_commit(tx, environment, top["commit"])
    return {name: state for name, _, state in cluster_states(tx, commit, now, stale_after, (), names)}


def cluster_detail(tx: Tx, name: str, now: float, stale_after: float, limit: int = 50) -> dict[str, Any]:
    row = tx.one("SELECT environment FROM clusters WHERE name = ? AND revoked_at IS NULL", (name,))
    if row is None:
        raise NotFound(f"no registered cluster {name}")
    summary = next(c for c in clusters(tx, now, stale_after, str(row[0]), names=[name]) if c["name"] == name)
    reconcilers = tx.rows(
        "SELECT name, role, source, state, revision, reason, message, received_at,"
        " COALESCE(failing_received, failing_since), event_time FROM reconcilers WHERE cluster = ? ORDER BY name",
        (name,),
    )
    keys = (
        "name",
        "role",
        "source",
        "state",
        "revision",
        "reason",
        "message",
        "receivedAt",
        "failingSince",
        "eventTime",
    )
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


def environment_state(
    tx: Tx, environment: str, now: float, stale_after: float, page: Page | None = None
) -> dict[str, Any]:
    """Scheduled (the head's assignments) against deployed (clusters whose platform commit
    carries that assignment), per cluster type and deployment target; and the head's rollout.
    With ``page``, as its page shows it: its first ``page.rows`` clusters (``clustersTotal``
    counts them all), its first failing ones (``failing``, ``failingTotal``), and the time to
    each percent only once the head runs everywhere (the page says since when, no more)."""
    top = head(tx, environment)
    members, lists = _members(tx, environment, now, stale_after, page)
    held = holds.in_force(tx, now, environment)
    if top is None and not members and not held:
        raise NotFound(f"environment {environment} is not known to the hub")
    progress = _head_rollout(tx, environment, top, now, stale_after, page)
    if page:
        lists["clustersTotal"] = _clusters_total(tx, environment, progress)
    return {
        "environment": environment,
        "state": holds.judged(progress["state"] if progress else "stale", held),
        "holds": held,
        "follows": graph(tx, environment_names(tx)).get(environment, []),
        "head": top,
        "waves": waves(tx, environment, top["commit"], progress, held) if top and progress else [],
        "targets": scheduled_targets(tx, progress),
        "rollout": progress,
        "clusters": members,
        **lists,
    }


def _head_rollout(
    tx: Tx, environment: str, top: dict[str, Any] | None, now: float, stale_after: float, page: Page | None
) -> dict[str, Any] | None:
    """The rollout of ``top`` (the environment's head; a page's without the times, which it
    does not show), whose ``runningSince`` it sets; None without a head."""
    if top is None:
        return None
    progress = rollout(
        tx, environment, top["commit"], now, stale_after, with_times=not page, times_if_done=True
    )
    top["runningSince"] = running_since(progress)
    return progress


def _clusters_total(tx: Tx, environment: str, progress: dict[str, Any] | None) -> int:
    """How many clusters the environment has: each is counted in its type's rollout."""
    if progress is None:
        return count_clusters(tx, environment)
    return sum(t["total"] for t in progress["clusterTypes"].values())


def _members(
    tx: Tx, environment: str, now: float, stale_after: float, page: Page | None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The clusters an environment's read lists: every one; or its page's first ``page.rows``
    and, read with them, its first failing ones (``failing``, ``failingTotal``)."""
    if page is None:
        return clusters(tx, now, stale_after, environment), {}
    first = first_clusters(tx, environment, page)
    picked, totals = first_failing(tx, now, environment, page.failing)
    listed = clusters(tx, now, stale_after, environment, names=None if first is None else [*first, *picked])
    shown, failing = set(first or ()), set(picked)
    return [c for c in listed if first is None or c["name"] in shown], {
        "failing": [c for c in listed if c["name"] in failing],
        "failingTotal": totals.get(environment, 0),
    }


def running_since(progress: dict[str, Any] | None) -> float | None:
    """When the last fresh cluster of every type first succeeded at the head (the head runs
    everywhere since then), or None while it does not yet."""
    if not progress or not progress["clusterTypes"]:
        return None
    if "runningSince" in progress:  # a page's rollout tells it without the times
        since: float | None = progress["runningSince"]
        return since
    latest = 0.0
    for counts in progress["clusterTypes"].values():
        done = (counts.get("timeToPercent") or {}).get("100")
        if done is None or counts["failed"] or counts["pending"]:
            return None
        latest = max(latest, float(done))
    return float(progress["recordedAt"]) + latest


def overview(tx: Tx, now: float, stale_after: float, page: Page | None = None) -> list[dict[str, Any]]:
    """Each environment in order: its state, its holds, the environments it follows and those of
    them that run a main commit it does not yet (``waitsOn``), its head and the head's rollout per
    cluster type, and its failing clusters (named, since when, why). With ``page``, as the page
    shows it: the first ``page.failing`` failing clusters of each (``failingTotal`` counts them
    all), and the time to each percent only where the head runs everywhere."""
    out: list[dict[str, Any]] = []
    picked, totals = first_failing(tx, now, None, page.failing) if page else (None, {})
    failing_now = failing(tx, now, stale_after, names=picked)
    held = holds.by_environment(holds.in_force(tx, now))
    names = environment_names(tx)
    follows = graph(tx, names)
    for name in names:
        top = head(tx, name)
        progress = _head_rollout(tx, name, top, now, stale_after, page)
        out.append(
            {
                "environment": name,
                "state": holds.judged(progress["state"] if progress else "stale", held.get(name, [])),
                "holds": held.get(name, []),
                "follows": follows[name],
                "head": top,
                "rollout": progress,
                "failing": [c for c in failing_now if c["environment"] == name],
                **({"failingTotal": totals.get(name, 0)} if page else {}),
            }
        )
    _set_waits_on(out)
    return out


def _set_waits_on(entries: list[dict[str, Any]]) -> None:
    """What each environment waits on: each it follows that runs a main commit it does not yet."""
    mains = {e["environment"]: (e["head"] or {}).get("mainCommit") for e in entries}
    for e in entries:
        e["waitsOn"] = [
            {"environment": u, "mainCommit": mains[u]}
            for u in e["follows"]
            if mains.get(u) and mains[u] != mains[e["environment"]]
        ]


def failing(
    tx: Tx, now: float, stale_after: float, environment: str | None = None, names: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Clusters failing now (of ``names``, or all): failed in their head's rollout, or with a
    reconciler whose latest report is a failure (an older failure the head's verdict leaves
    aside, too); longest first."""
    keys = ("name", "environment", "clusterType", "state", "badge", "commit", "failingSince")
    more = ("failingReconciler", "failingReconcilers", "failingMessage", "lastSeen", "stale")
    rows = [
        {k: c[k] for k in (*keys, *more)}
        for c in clusters(tx, now, stale_after, environment, only_failing=True, names=names)
    ]
    return sorted(rows, key=lambda c: (c["failingSince"] or now, c["environment"], c["name"]))
