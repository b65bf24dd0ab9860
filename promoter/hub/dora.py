"""The four DORA measures of an environment (and of each of its cluster types), from what the
hub already holds; every time here is the hub's own clock (a receipt or a recording), except
where one cluster's times are ordered among themselves.

History stays written: a deployment, a failure and a restore are facts of the moment they
happened, judged against the clusters registered then, so a window's figures are computed from
what the hub had received before the window ended. Registering, revoking or losing a cluster
later changes the present, never past figures (the trend): the hub keeps when each cluster was
heard (fleet.py ``heard``) to judge a past moment.

- **The fleet** of a moment (fleet.py): the clusters registered then (a revoked name registered
  again is a new registration) that had reported since they were registered and were not lost
  then. A cluster that never reported holds up no deployment (the pages show it stale). One
  that reported, then fell silent for longer than ``fleet.LOST_AFTER`` (30m, the reads' default
  ``staleAfter``) while it heartbeats, is lost from the end of the interval it was last heard in
  plus that: what it held up finishes then without it; it counts again from its next report.
  Revoking it lets what it held up finish at the revocation.
- A cluster **reached** platform commit C when the hub received the success that made every
  applying reconciler of it that reported C successful there; it reached C when it reached C
  or any first-parent descendant of C.
- A **change** is a main commit's arrival: the platform commits in a row on the environment's
  line that carry it. A waved environment lands one per wave; a change reaches the environment
  with the commit at which every cluster type's folder holds its main commit (the last wave's
  landing; earlier waves are partial) and a cluster type with the commit at which that type's
  folder first does (its own wave's). A change whose waves never all landed is no deployment of
  the environment.
- The change is **deployed** at the first moment when the fleet (of the environment, or of the
  cluster type) had at least one cluster and every one of them had reached that commit. Changes
  overtaken by their successor before they finished share its deployment time: one deployment.
- **Deployment frequency**: deployments finished in the window (of commits recorded in it or
  in the window before), per day.
- **Lead time for changes**: per deployed change carrying a main commit, from the hub's first
  record of that main commit (in any environment: the promoter records each commit it lands)
  to the deployment; the median.
- **Change failure rate**: of the changes first recorded in the window that the clusters
  reported (before its end; for a cluster type, those whose main commit reached its folder),
  the share that failed before its end: a reconciler reported a failure at one of its commits,
  or a HelmRelease (whose revision is a chart version) failed on a cluster after that cluster
  first reported it and before it reported a later one (the cluster's own clock on both sides),
  or a later commit brought back an earlier main commit (a rollback). Every report counts,
  whoever sent it (the hub takes reports only from registered clusters), so revoking a cluster
  keeps its failures and restores.
- **Time to restore**: per cluster, from the report that made one of its reconcilers fail to
  the report that left none failing (the hub's receipts; the reports are ordered by the
  cluster's own times); the median of the spells that ended in the window.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterator
from typing import Any

from promoter.hub import fleet
from promoter.hub.db import Tx
from promoter.hub.history import History, PlatformCommit, Report, load

DAY = 86400.0
Scope = frozenset[str] | None  # cluster types; None: the whole environment


def descendants(commits: list[PlatformCommit], index: int) -> list[str]:
    """The commit at ``index`` and the commits after it on its first-parent line."""
    known = [commits[index].sha]
    for later in commits[index + 1 :]:
        if later.parent is None or later.parent in known:
            known.append(later.sha)
    return known


def changes(commits: list[PlatformCommit]) -> list[list[int]]:
    """Each change, oldest first, as the indexes of its platform commits: the commits in a row on
    the line that carry one main commit (one per wave); a commit without one is a change alone."""
    out: list[list[int]] = []
    for i, commit in enumerate(commits):
        before = commits[i - 1] if i else None
        if before and commit.main and commit.main == before.main and commit.parent in (None, before.sha):
            out[-1].append(i)
        else:
            out.append([i])
    return out


def complete(history: History, index: int, types: Scope) -> bool:
    """Whether the commit at ``index`` holds its main commit in every folder of ``types`` (all of
    its folders for the environment, or when it has none of theirs); a commit without folders
    recorded (no waves) or without a main commit holds it everywhere."""
    commit = history.commits[index]
    folders = history.folders.get(commit.sha)
    if not folders or commit.main is None:
        return True
    scoped = [main for t, main in folders.items() if types is None or t in types] or list(folders.values())
    return all(main == commit.main for main in scoped)


def _first_reaches(history: History, indexes: list[int]) -> Iterator[tuple[int, dict[str, float]]]:
    """For each of ``indexes``, newest first: (index, cluster -> the hub's receipt of its first
    reach of that commit or of a first-parent descendant). Each commit's is built on the one
    after it when that one's line is the rest of its own (one pass along a straight branch); the
    dict yielded is reused for the next, older, commit."""
    by_sha: dict[str, list[tuple[str, float]]] = {}
    for (cluster, sha), at in history.reached.items():
        by_sha.setdefault(sha, []).append((cluster, at))
    wanted = set(indexes)
    first: dict[str, float] = {}
    after: list[str] = []
    for i in range(len(history.commits) - 1, min(indexes, default=len(history.commits)) - 1, -1):
        line = descendants(history.commits, i)
        if line[1:] == after:
            adding = line[:1]  # the reaches of its own, to those of the line after it
        else:
            first, adding = {}, line
        for sha in adding:
            for cluster, at in by_sha.get(sha, ()):
                if at < first.get(cluster, math.inf):
                    first[cluster] = at
        after = line
        if i in wanted:
            yield i, first


def deployments(
    history: History, scopes: list[Scope], since: float
) -> dict[Scope, list[tuple[PlatformCommit, float]]]:
    """Per scope: (the commit that completed it, when) of each change deployed to it, of the
    changes whose completing commit was recorded since ``since``, newest first."""
    wanted = _completing_commits(history, scopes, since)
    fleets = {s: [r for r in history.fleet if s is None or r.cluster_type in s] for s in scopes}
    out: dict[Scope, list[tuple[PlatformCommit, float]]] = {s: [] for s in scopes}
    for index, first in _first_reaches(history, sorted(wanted)):
        for scope in wanted[index]:
            done = fleet.completed_at(fleets[scope], first, history.lost)
            if done is not None:
                out[scope].append((history.commits[index], done))
    return out


def _completing_commits(history: History, scopes: list[Scope], since: float) -> dict[int, list[Scope]]:
    """Index of each commit recorded since ``since`` that completed a change in a scope -> those scopes."""
    wanted: dict[int, list[Scope]] = {}
    every = changes(history.commits)
    for scope in scopes:
        for change in every:
            index = next((i for i in change if complete(history, i, scope)), None)
            if index is not None and history.commits[index].recorded_at >= since:
                wanted.setdefault(index, []).append(scope)
    return wanted


def failed_commits(history: History, clusters: set[str], before: float = math.inf) -> set[str]:
    """The platform commits that failed on one of ``clusters``, or were rolled back, before ``before``."""
    return _failed_on(history, clusters, before) | _rolled_back(history, before)


def _failed_on(history: History, clusters: set[str], before: float) -> set[str]:
    """The platform commits a failure report of one of ``clusters`` received before ``before`` names."""
    shas = {c.sha for c in history.commits}
    failed = set()
    for report in history.reports:
        if report.state != "failure" or report.cluster not in clusters or report.received >= before:
            continue
        sha = report.revision if report.revision in shas else _running_then(history, report)
        if sha:
            failed.add(sha)
    return failed


def _running_then(history: History, report: Report) -> str | None:
    """A HelmRelease's failure: the commit its cluster ran then, by the cluster's own clock."""
    running = [sha for at, sha in history.first_seen.get(report.cluster, []) if at <= report.when]
    return running[-1] if running else None


def _rolled_back(history: History, before: float) -> set[str]:
    """The commits a rollback recorded before ``before`` undid: each one before a commit that
    returns to an earlier main commit (a rollback recorded later fails nothing yet)."""
    failed = set()
    seen_mains: list[str | None] = []
    for i, commit in enumerate(history.commits):
        if commit.recorded_at >= before:
            continue
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
        _follow(now_failing, report)
        if not was and now_failing:
            began[report.cluster] = report.received
        elif was and not now_failing:
            spells.append((began[report.cluster], max(report.received, began[report.cluster])))
    return spells


def _follow(failing: set[str], report: Report) -> None:
    """A cluster's failing reconcilers after ``report``: a failure adds its reconciler, a
    success takes it away, progress changes nothing."""
    if report.state == "failure":
        failing.add(report.reconciler)
    elif report.state == "success":
        failing.discard(report.reconciler)


def _reported(history: History, clusters: set[str], before: float) -> set[str]:
    """The platform commits one of ``clusters`` reported (reached, or reported at) before ``before``."""
    found = {sha for (c, sha), at in history.reached.items() if c in clusters and at < before}
    return found | {r.revision for r in history.reports if r.cluster in clusters and r.received < before}


def _finished(
    history: History, deployed: list[tuple[PlatformCommit, float]], start: float, end: float
) -> tuple[set[float], list[float]]:
    """The deployment times in [start, end) (of commits recorded up to a window before it) and
    the lead time of each change deployed then."""
    finished: set[float] = set()
    leads: list[float] = []
    for commit, done in deployed:
        if commit.recorded_at < start - (end - start) or not start <= done < end:
            continue
        finished.add(done)
        if commit.main and commit.main in history.first_recorded:
            leads.append(max(done - history.first_recorded[commit.main], 0.0))
    return finished, leads


def _changes(history: History, types: Scope, clusters: set[str], start: float, end: float) -> tuple[int, int]:
    """How many changes first recorded in [start, end) ``clusters`` reported before ``end`` (of
    ``types``: whose main commit reached one of their folders), and how many of them failed."""
    reported = _reported(history, clusters, end)
    failed = failed_commits(history, clusters, end)
    counted = failures = 0
    for change in changes(history.commits):
        shas = {history.commits[i].sha for i in change}
        if not start <= history.commits[change[0]].recorded_at < end or not reported & shas:
            continue
        if types is None or any(complete(history, i, types) for i in change):
            counted += 1
            failures += bool(failed & shas)
    return counted, failures


def figures(
    history: History,
    types: Scope,
    start: float,
    end: float,
    deployed: list[tuple[PlatformCommit, float]] | None = None,
) -> dict[str, Any]:
    """The four measures of ``types`` (None: the environment) between ``start`` and ``end`` (the
    hub's clock); ``deployed``, ``deployments`` of ``types`` read once for several windows."""
    clusters = {c for c, t in history.types.items() if types is None or t in types}
    if deployed is None:
        deployed = deployments(history, [types], start - (end - start))[types]
    finished, leads = _finished(history, deployed, start, end)
    counted, failed = _changes(history, types, clusters, start, end)
    restores = [b - a for a, b in restore_spells(history, clusters) if start <= b < end]
    days = (end - start) / DAY
    return {
        "deployments": len(finished),
        "deploymentFrequencyPerDay": round(len(finished) / days, 6) if days > 0 else None,
        "leadTimeSeconds": _median(leads),
        "changes": counted,
        "failedChanges": failed,
        "changeFailureRate": round(failed / counted, 6) if counted else None,
        "restores": len(restores),
        "timeToRestoreSeconds": _median(restores),
    }


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def measures(tx: Tx, environment: str, now: float, window: float, trend: int = 0) -> dict[str, Any]:
    """The measures of ``environment`` over the ``window`` before ``now``, for it and per cluster
    type (each that had a cluster registered in the window); with ``trend``, the environment's
    over each of the ``trend`` windows before, oldest first."""
    oldest = now - window * (trend + 1)
    history = load(tx, environment, oldest - DAY)
    types = fleet.types_between(history.fleet, now - window, now)
    deployed = deployments(history, [None, *(frozenset((t,)) for t in types)], oldest - window)
    per_type = {
        t: figures(history, frozenset((t,)), now - window, now, deployed[frozenset((t,))]) for t in types
    }
    past = [
        {
            "end": now - window * k,
            **figures(history, None, now - window * (k + 1), now - window * k, deployed[None]),
        }
        for k in range(trend, 0, -1)
    ]
    return {
        "environment": environment,
        "window": window,
        **figures(history, None, now - window, now, deployed[None]),
        "clusterTypes": per_type,
        "trend": past,
    }
