"""The four DORA measures of an environment (and of each of its cluster types), from what the
hub already holds; every time here is the hub's own clock (a receipt or a recording), except
where one cluster's times are ordered among themselves.

- A cluster **reached** platform commit C when the hub received the success that made every
  applying reconciler of it that reported C successful there; it reached C when it reached C
  or any first-parent descendant of C.
- C is **deployed** to a cluster type when the last of its registered clusters reached it (to
  the environment: to every cluster type with clusters). A commit that its successor overtook
  before it finished shares the successor's deployment time: one deployment, two changes.
- **Deployment frequency**: deployments finished in the window (of commits recorded in it or
  in the window before), per day.
- **Lead time for changes**: per deployed commit carrying a main commit, from the hub's first
  record of that main commit (in any environment: the promoter records each commit it lands)
  to the deployment; the median.
- **Change failure rate**: of the platform commits recorded in the window that clusters
  reported, the share that failed: a reconciler reported a failure at it, or a HelmRelease
  (whose revision is a chart version) failed on a cluster after that cluster first reported
  it and before it reported a later one (the cluster's own clock on both sides), or a later
  commit brought back an earlier main commit (a rollback).
- **Time to restore**: per cluster, from the report that made one of its reconcilers fail to
  the report that left none failing (the hub's receipts; the reports are ordered by the
  cluster's own times); the median of the spells that ended in the window.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from promoter.hub.db import Tx

DAY = 86400.0


@dataclass(frozen=True)
class PlatformCommit:
    sha: str
    parent: str | None
    main: str | None
    recorded_at: float


@dataclass(frozen=True)
class Report:
    cluster: str
    reconciler: str
    state: str
    revision: str
    when: float  # the cluster's clock (or the receipt, for a sender that stamps nothing)
    received: float  # the hub's


@dataclass
class History:
    """What the measures of one environment are computed from (read once, by ``load``)."""

    commits: list[PlatformCommit]
    first_recorded: dict[str, float]  # main commit -> the hub's first record of it
    types: dict[str, str]  # registered cluster -> cluster type
    reached: dict[tuple[str, str], float]  # (cluster, platform sha) -> the hub's receipt
    first_seen: dict[str, list[tuple[float, str]]]  # cluster -> (its own time, platform sha), in order
    reports: list[Report] = field(default_factory=list)


def load(tx: Tx, environment: str, since: float) -> History:
    """The environment's commits, clusters, reach times and the reports received since ``since``."""
    commits = [
        PlatformCommit(str(s), p, m, float(r))
        for s, p, m, r in tx.rows(
            "SELECT sha, parent, main_commit, recorded_at FROM platform_commits WHERE environment = ?"
            " ORDER BY position",
            (environment,),
        )
    ]
    mains = {c.main for c in commits if c.main}
    first = {
        str(m): float(t)
        for m, t in tx.rows(
            "SELECT main_commit, MIN(recorded_at) FROM platform_commits WHERE main_commit IS NOT NULL"
            " GROUP BY main_commit"
        )
        if m in mains
    }
    types = {
        str(n): str(t)
        for n, t in tx.rows(
            "SELECT name, cluster_type FROM clusters WHERE environment = ? AND revoked_at IS NULL",
            (environment,),
        )
    }
    return History(
        commits,
        first,
        types,
        _reached(tx, environment),
        _first_seen(tx, environment),
        _reports(tx, environment, since),
    )


def _reached(tx: Tx, environment: str) -> dict[tuple[str, str], float]:
    rows = tx.rows(
        "SELECT d.cluster, d.revision, MAX(COALESCE(d.first_success_received, d.first_success)),"
        " COUNT(*), COUNT(COALESCE(d.first_success_received, d.first_success))"
        " FROM deployments d JOIN platform_commits pc ON pc.environment = d.environment AND pc.sha = d.revision"
        " JOIN reconcilers r ON r.cluster = d.cluster AND r.name = d.reconciler AND r.role = 'apply'"
        " WHERE d.environment = ? GROUP BY d.cluster, d.revision",
        (environment,),
    )
    return {(str(c), str(s)): float(t) for c, s, t, n, ok in rows if n == ok and t is not None}


def _first_seen(tx: Tx, environment: str) -> dict[str, list[tuple[float, str]]]:
    rows = tx.rows(
        "SELECT d.cluster, d.revision, MIN(d.first_seen) FROM deployments d JOIN platform_commits pc"
        " ON pc.environment = d.environment AND pc.sha = d.revision WHERE d.environment = ?"
        " GROUP BY d.cluster, d.revision ORDER BY 1, 3",
        (environment,),
    )
    out: dict[str, list[tuple[float, str]]] = {}
    for cluster, sha, at in rows:
        out.setdefault(str(cluster), []).append((float(at), str(sha)))
    return out


def _reports(tx: Tx, environment: str, since: float) -> list[Report]:
    rows = tx.rows(
        "SELECT cluster, reconciler, state, revision, COALESCE(event_time, received_at), received_at"
        " FROM reports WHERE environment = ? AND received_at >= ? ORDER BY cluster, 5, id",
        (environment, since),
    )
    return [Report(str(c), str(r), str(s), str(v), float(w), float(t)) for c, r, s, v, w, t in rows]


def descendants(commits: list[PlatformCommit], index: int) -> list[str]:
    """The commit at ``index`` and the commits after it on its first-parent line."""
    known = [commits[index].sha]
    for later in commits[index + 1 :]:
        if later.parent is None or later.parent in known:
            known.append(later.sha)
    return known


def deployed_at(history: History, index: int, clusters: Iterable[str]) -> float | None:
    """When the last of ``clusters`` reached the commit at ``index`` (None: not all have, or none)."""
    line = descendants(history.commits, index)
    latest: float | None = None
    for cluster in clusters:
        times = [history.reached[(cluster, sha)] for sha in line if (cluster, sha) in history.reached]
        if not times:
            return None
        latest = max(latest or 0.0, min(times))
    return latest


def failed_commits(history: History, clusters: set[str]) -> set[str]:
    """The platform commits that failed on one of ``clusters``, or were rolled back."""
    shas = {c.sha for c in history.commits}
    failed = set()
    for report in history.reports:
        if report.state != "failure" or report.cluster not in clusters:
            continue
        if report.revision in shas:
            failed.add(report.revision)
        else:  # a HelmRelease: the commit its cluster ran then, by the cluster's own clock
            running = [sha for at, sha in history.first_seen.get(report.cluster, []) if at <= report.when]
            if running:
                failed.add(running[-1])
    seen_mains: list[str | None] = []
    for i, commit in enumerate(history.commits):
        if commit.main and commit.main in seen_mains[:-1] and commit.main != seen_mains[-1] and i:
            failed.add(history.commits[i - 1].sha)
        seen_mains.append(commit.main)
    return failed


def restore_spells(history: History, clusters: set[str]) -> list[tuple[float, float]]:
    """(failing from, restored at) of each spell in which a cluster had a failing reconciler."""
    spells = []
    failing: dict[str, set[str]] = {}
    began: dict[str, float] = {}
    for report in history.reports:  # ordered by cluster, then the cluster's own time
        if report.cluster not in clusters:
            continue
        now_failing = failing.setdefault(report.cluster, set())
        was = bool(now_failing)
        if report.state == "failure":
            now_failing.add(report.reconciler)
        elif report.state == "success":
            now_failing.discard(report.reconciler)
        if not was and now_failing:
            began[report.cluster] = report.received
        elif was and not now_failing:
            spells.append((began[report.cluster], max(report.received, began[report.cluster])))
    return spells


def figures(history: History, clusters: set[str], start: float, end: float) -> dict[str, Any]:
    """The four measures over ``clusters`` (an environment's, or one cluster type's) between
    ``start`` and ``end`` (the hub's clock)."""
    deployments: set[float] = set()
    leads: list[float] = []
    reported = {sha for (cluster, sha) in history.reached if cluster in clusters}
    reported |= {sha for c in clusters for _, sha in history.first_seen.get(c, [])}
    for i, commit in enumerate(history.commits):
        if commit.recorded_at < start - (end - start):  # recorded more than a window before it
            continue
        done = deployed_at(history, i, sorted(clusters)) if clusters else None
        if done is None or not start <= done < end:
            continue
        deployments.add(done)
        if commit.main and commit.main in history.first_recorded:
            leads.append(max(done - history.first_recorded[commit.main], 0.0))
    changes = [c.sha for c in history.commits if start <= c.recorded_at < end and c.sha in reported]
    failed = failed_commits(history, clusters) & set(changes)
    restores = [b - a for a, b in restore_spells(history, clusters) if start <= b < end]
    days = (end - start) / DAY
    return {
        "deployments": len(deployments),
        "deploymentFrequencyPerDay": round(len(deployments) / days, 6) if days > 0 else None,
        "leadTimeSeconds": _median(leads),
        "changes": len(changes),
        "failedChanges": len(failed),
        "changeFailureRate": round(len(failed) / len(changes), 6) if changes else None,
        "restores": len(restores),
        "timeToRestoreSeconds": _median(restores),
    }


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def measures(tx: Tx, environment: str, now: float, window: float, trend: int = 0) -> dict[str, Any]:
    """The measures of ``environment`` over the ``window`` before ``now``, for it and per cluster
    type; with ``trend``, the environment's over each of the ``trend`` windows before, oldest first."""
    history = load(tx, environment, now - window * (trend + 1) - DAY)
    members = set(history.types)
    per_type = {
        t: figures(history, {c for c, ct in history.types.items() if ct == t}, now - window, now)
        for t in sorted(set(history.types.values()))
    }
    past = [
        {"end": now - window * k, **figures(history, members, now - window * (k + 1), now - window * k)}
        for k in range(trend, 0, -1)
    ]
    return {
        "environment": environment,
        "window": window,
        **figures(history, members, now - window, now),
        "clusterTypes": per_type,
        "trend": past,
    }
