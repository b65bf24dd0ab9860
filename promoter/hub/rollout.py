"""Rollout progress of one platform commit M in one environment, per cluster type: what the
``hub`` gate judges, ``GET /v1/rollout`` answers and the pages draw.

Over the environment's registered clusters (revoked ones are not counted), each cluster is:

- **stale** when it never reported, or has not reported for ``stale_after`` although one of its
  reconcilers heartbeats (``is_stale``): it is not counted in the percentage, since nothing is
  known of it;
- **failed** when a reconciler's latest report is a failure at M or a later commit, or a failure
  (a HelmRelease's, whose revision is a chart version) that began, by the cluster's own clock, at
  or after the cluster's first report at M or a later commit (``first_at``): a cluster's
  timestamps are compared only with its own, never with the hub's recording of M;
- **success** when every reconciler that applies the platform repo (its latest revision is a
  recorded platform commit of the environment) is at M or a first-parent descendant of M, and
  its latest report there is a success, and no other applying reconciler (a HelmRelease, whose
  revision is a chart version) is progressing;
- **pending** otherwise (still at an older commit, progressing, or not reporting the platform).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from promoter.hub import badges
from promoter.hub.db import Tx

MAX_DESCENDANTS = 500
PERCENTS = (25, 50, 75, 90, 100)
SHOWN_FAILURES = 10


@dataclass(frozen=True)
class Commit:
    environment: str
    sha: str
    main_commit: str | None
    position: int
    recorded_at: float


class NotFound(Exception):
    """What was asked for is not (yet) known to the hub."""


def find_commit(tx: Tx, environment: str, ref: str) -> Commit:
    """The platform commit ``ref`` names in ``environment``: its sha (or a prefix of 7 or more),
    else the first platform commit that carried main commit ``ref``."""
    ref = ref.strip().lower()
    columns = "environment, sha, main_commit, position, recorded_at"
    if len(ref) >= 7 and all(c in "0123456789abcdef" for c in ref):
        rows = tx.rows(
            f"SELECT {columns} FROM platform_commits WHERE environment = ? AND sha >= ? AND sha < ? LIMIT 2",
            (environment, ref, ref + "g"),
        )
        if len(rows) > 1:
            raise NotFound(f"{ref} names more than one platform commit of {environment}; give more of it")
        if not rows:
            rows = tx.rows(
                f"SELECT {columns} FROM platform_commits WHERE environment = ? AND main_commit >= ?"
                " AND main_commit < ? ORDER BY position LIMIT 1",
                (environment, ref, ref + "g"),
            )
        if rows:
            env, sha, main, position, recorded = rows[0]
            return Commit(env, sha, main, int(position), float(recorded))
    raise NotFound(
        f"no platform commit or main commit {ref or '(empty)'} is recorded for environment {environment}"
    )


def descendants(tx: Tx, commit: Commit) -> list[str]:
    """M and the recorded commits after it on its first-parent line (a commit recorded without
    a parent follows the one recorded before it)."""
    rows = tx.rows(
        "SELECT sha, parent FROM platform_commits WHERE environment = ? AND position > ?"
        " ORDER BY position LIMIT ?",
        (commit.environment, commit.position, MAX_DESCENDANTS),
    )
    found = [commit.sha]
    known = {commit.sha}
    for sha, parent in rows:
        if parent is None or parent in known:
            found.append(sha)
            known.add(sha)
    return found


def cluster_states(
    tx: Tx,
    commit: Commit,
    now: float,
    stale_after: float,
    cluster_types: Sequence[str] = (),
    names: Sequence[str] = (),
) -> list[tuple[str, str, str]]:
    """(cluster, cluster type, state) of each registered cluster of the environment (of
    ``cluster_types``, or named ``names``), from the clusters' summary columns (one row per
    cluster, whatever the number of reconcilers)."""
    later = set(descendants(tx, commit))
    rows = tx.rows(
        "SELECT name, cluster_type, last_seen, platform_position, platform_sha, platform_reconcilers,"
        " platform_ok, failing_position, failing_since, heartbeats, busy FROM clusters"
        f" WHERE environment = ? AND revoked_at IS NULL{_among(cluster_types, names)}",
        (commit.environment, *cluster_types, *names),
    )
    return [(str(row[0]), str(row[1]), _state(tx, commit, later, row, now, stale_after)) for row in rows]


def _among(cluster_types: Sequence[str], names: Sequence[str]) -> str:
    """The SQL that keeps the clusters of ``cluster_types`` and named ``names`` (when given)."""
    types = f" AND cluster_type IN ({', '.join('?' for _ in cluster_types)})" if cluster_types else ""
    return types + (f" AND name IN ({', '.join('?' for _ in names)})" if names else "")


def _state(
    tx: Tx, commit: Commit, later: set[str], row: tuple[Any, ...], now: float, stale_after: float
) -> str:
    """One cluster's state at ``commit`` (``later``: it and its descendants) from its summary ``row``."""
    name, _, last_seen, _, _, _, _, failing_at, failing_since, beats, _ = row
    if is_stale(last_seen, beats, now, stale_after):
        return "stale"
    if (failing_at is not None and failing_at >= commit.position) or (
        failing_since is not None and _began_at(tx, str(name), commit, later, float(failing_since))
    ):
        return "failed"
    if _applied(commit, later, row):
        return "success"
    return "pending"


def _applied(commit: Commit, later: set[str], row: tuple[Any, ...]) -> bool:
    """Whether every reconciler applying the platform is healthy at ``commit`` or later and none is busy."""
    _, _, _, low, low_sha, platform, ok, _, _, _, busy = row
    at_least = low is not None and low >= commit.position and low_sha in later
    return bool(platform) and ok == platform and not busy and at_least


def first_at(tx: Tx, cluster: str, environment: str, shas: Sequence[str]) -> float | None:
    """When ``cluster`` first reported any of ``shas`` (M and its descendants), on its own clock."""
    marks = ", ".join("?" for _ in shas)
    row = tx.one(
        f"SELECT MIN(first_seen) FROM deployments WHERE cluster = ? AND environment = ? AND revision IN ({marks})",
        (cluster, environment, *shas),
    )
    return float(row[0]) if row and row[0] is not None else None


def _began_at(tx: Tx, cluster: str, commit: Commit, later: set[str], failing_since: float) -> bool:
    """Whether a failure that began at ``failing_since`` (the cluster's clock) is M's: it began at
    or after the cluster first reported M or a later commit (read only for a failing cluster)."""
    first = first_at(tx, cluster, commit.environment, sorted(later))
    return first is not None and failing_since >= first


def is_stale(last_seen: float | None, heartbeats: int | None, now: float, stale_after: float) -> bool:
    """A cluster that never reported is stale; one silent for ``stale_after`` is stale only when
    one of its reconcilers heartbeats (a Flux Kustomization, an Argo CD app with the documented
    heartbeat trigger): a HelmRelease or a transitions-only Argo CD says nothing while nothing
    changes, so its silence is no sign of trouble."""
    if last_seen is None:
        return True
    return bool(heartbeats) and last_seen < now - stale_after


def success_times(
    tx: Tx, commit: Commit, shas: Sequence[str], cluster_types: Sequence[str] = ()
) -> dict[str, float]:
    """When each cluster (of ``cluster_types``, or all) had all its reconcilers of this rollout
    first succeed at M or later, on the hub's clock (when it received the success), to be
    compared with M's recording, also the hub's."""
    marks = ", ".join("?" for _ in shas)
    # Only a filter by type needs the clusters' rows; the caller looks up the clusters it counts.
    join = " JOIN clusters c ON c.name = d.cluster" if cluster_types else ""
    types = f" AND c.cluster_type IN ({', '.join('?' for _ in cluster_types)})" if cluster_types else ""
    first = "COALESCE(d.first_success_received, d.first_success)"
    where = f" WHERE d.environment = ? AND d.revision IN ({marks}) AND d.first_success IS NOT NULL{types}"
    # Per cluster in SQL, one row each (its reconcilers' rows were a score each, read in Python).
    # At M alone (a head: nothing recorded after it) a reconciler has one row, its first success.
    sql = (
        f"SELECT d.cluster, MAX({first}) FROM deployments d{join}{where} GROUP BY d.cluster"
        if len(shas) == 1
        else f"SELECT cluster, MAX(earliest) FROM (SELECT d.cluster, d.reconciler, MIN({first}) AS earliest"
        f" FROM deployments d{join}{where} GROUP BY d.cluster, d.reconciler) AS per GROUP BY cluster"
    )
    rows = tx.rows(sql, (commit.environment, *shas, *cluster_types))
    return {str(cluster): max(float(first), 0.0) for cluster, first in rows}


def rollout(
    tx: Tx,
    environment: str,
    ref: str,
    now: float,
    stale_after: float,
    cluster_types: Sequence[str] = (),
    with_times: bool = True,
    times_if_done: bool = False,
) -> dict[str, Any]:
    """The rollout of ``ref`` in ``environment`` (the JSON of ``GET /v1/rollout``); without
    ``with_times`` (``times=false``, as the gate asks), no ``timeToPercent``, which reads history.
    With ``times_if_done`` instead (a page, which shows no more of them), only since when the
    head runs everywhere (``runningSince``, once no cluster failed and none is pending)."""
    commit = find_commit(tx, environment, ref)
    states = cluster_states(tx, commit, now, stale_after, cluster_types)
    types = set(cluster_types) or {t for _, t, _ in states} | _scheduled_types(tx, commit)
    by_type, tallies = _by_type(states, types)
    done = not any(tally["failed"] or tally["pending"] for tally in tallies.values())
    times: dict[str, float] | None = None
    since: dict[str, float | None] = {}
    if with_times or (times_if_done and done):
        times, since = _times(tx, commit, cluster_types, by_type, tallies, with_times)
    per_type = {t: _of_type(by_type[t], tallies[t], times, commit) for t in sorted(types)}
    return {
        "environment": environment,
        "commit": commit.sha,
        "mainCommit": commit.main_commit,
        "recordedAt": commit.recorded_at,
        "staleAfter": stale_after,
        "clusterTypes": per_type,
        "state": badges.worst(c["state"] for c in per_type.values()),
        **since,
    }


def _by_type(
    states: list[tuple[str, str, str]], types: set[str]
) -> tuple[dict[str, list[tuple[str, str]]], dict[str, Counter[str]]]:
    """Per cluster type of ``types``: its clusters' (name, state), and how many are in each state."""
    by_type: dict[str, list[tuple[str, str]]] = {t: [] for t in types}
    tallies: dict[str, Counter[str]] = {t: Counter() for t in types}
    for name, cluster_type, state in states:  # one pass, not one per type
        if cluster_type in by_type:
            by_type[cluster_type].append((name, state))
            tallies[cluster_type][state] += 1
    return by_type, tallies


def _times(
    tx: Tx,
    commit: Commit,
    cluster_types: Sequence[str],
    by_type: dict[str, list[tuple[str, str]]],
    tallies: dict[str, Counter[str]],
    with_times: bool,
) -> tuple[dict[str, float] | None, dict[str, float | None]]:
    """(each cluster's success time, ``{"runningSince": ...}``): the times, unless asked only when
    the head runs everywhere (not ``with_times``) and the receipts tell it without them."""
    shas = descendants(tx, commit)
    if not with_times and _receipts_tell(tx, commit, shas):
        return None, {"runningSince": _running_since(tx, commit, by_type, tallies)}
    return success_times(tx, commit, shas, cluster_types), {}


_LEGACY = (
    "SELECT 1 FROM deployments WHERE environment = ? AND revision = ? AND first_success_received IS NULL"
    " AND first_success IS NOT NULL LIMIT 1"
)
_LATEST = (
    "SELECT cluster, first_success_received FROM deployments WHERE environment = ? AND revision = ?"
    " AND first_success_received IS NOT NULL ORDER BY first_success_received DESC LIMIT ?"
)


def _receipts_tell(tx: Tx, commit: Commit, shas: Sequence[str]) -> bool:
    """Whether ``_running_since`` can tell: M alone (a head: nothing recorded after it), and each
    of its first successes with its receipt time (not one from before migration 3)."""
    return len(shas) == 1 and tx.one(_LEGACY, (commit.environment, commit.sha)) is None


def _running_since(
    tx: Tx, commit: Commit, by_type: dict[str, list[tuple[str, str]]], tallies: dict[str, Counter[str]]
) -> float | None:
    """What ``queries.running_since`` makes of the times to each percent of a head nothing
    failed or waits at, without reading each cluster's: a cluster that succeeds at M has each
    of its applying reconcilers' success at M in ``deployments`` (written with the report that
    made it so, kept while it is current), so M runs everywhere since the latest first success
    received of a cluster that succeeds: among the last entries of the receipt index, read no
    further than the first such (at 10,000 clusters of 20 reconcilers, 200,000 entries)."""
    if not by_type or not all(tally["success"] for tally in tallies.values()):
        return None  # a type without a fresh cluster: it does not run everywhere
    success = {name for mine in by_type.values() for name, state in mine if state == "success"}
    latest = _latest_receipt(tx, commit, success)
    return None if latest is None else commit.recorded_at + round(max(latest - commit.recorded_at, 0.0), 1)


def _latest_receipt(tx: Tx, commit: Commit, success: set[str]) -> float | None:
    """The latest first success received of one of the clusters ``success``, read newest first
    in growing batches."""
    limit = 64
    while True:
        rows = tx.rows(_LATEST, (commit.environment, commit.sha, limit))
        latest = next((float(at) for cluster, at in rows if cluster in success), None)
        if latest is not None or len(rows) < limit:
            return latest
        limit *= 8


def _of_type(
    mine: list[tuple[str, str]], tally: Counter[str], times: dict[str, float] | None, commit: Commit
) -> dict[str, Any]:
    """One cluster type's rollout from its clusters' states (and success times, when read)."""
    counts = {s: tally[s] for s in ("success", "failed", "pending", "stale")}
    fresh = len(mine) - counts["stale"]
    out: dict[str, Any] = {
        "total": len(mine),
        **counts,
        "percent": round(100.0 * counts["success"] / fresh, 1) if fresh else 0.0,
        **(
            {"timeToPercent": _time_to_percent(_delays(mine, times, commit), fresh)}
            if times is not None
            else {}
        ),
        "failedClusters": sorted(n for n, s in mine if s == "failed")[:SHOWN_FAILURES],
    }
    out["state"] = badges.of_counts(out)
    return out


def _delays(mine: list[tuple[str, str]], times: dict[str, float], commit: Commit) -> list[float]:
    """Seconds from M's recording to each succeeding cluster's success, in order."""
    return sorted(times[n] - commit.recorded_at for n, s in mine if s == "success" and n in times)


def scheduled_targets(tx: Tx, progress: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The assignments of a rollout's commit, each with its cluster type's clusters and how many
    of them run the commit (or later), healthy: as the rollout counts them (its types include
    every scheduled one)."""
    if progress is None:
        return []
    scheduled = tx.rows(
        "SELECT cluster_type, deployment_target FROM assignments WHERE environment = ? AND sha = ?"
        " ORDER BY cluster_type, deployment_target",
        (progress["environment"], progress["commit"]),
    )
    per_type = progress["clusterTypes"]
    return [
        {
            "clusterType": cluster_type,
            "deploymentTarget": target,
            "clusters": per_type[cluster_type]["total"],
            "deployed": per_type[cluster_type]["success"],
        }
        for cluster_type, target in scheduled
    ]


def _scheduled_types(tx: Tx, commit: Commit) -> set[str]:
    rows = tx.rows(
        "SELECT DISTINCT cluster_type FROM assignments WHERE environment = ? AND sha = ?",
        (commit.environment, commit.sha),
    )
    return {str(r[0]) for r in rows}


def _time_to_percent(done: list[float], fresh: int) -> dict[str, float | None]:
    """Seconds from M's recording until each percent of the fresh clusters succeeded (0 for a
    success the hub received before the promoter recorded M: order of arrival)."""
    out: dict[str, float | None] = {}
    for percent in PERCENTS:
        needed = math.ceil(percent * fresh / 100)
        out[str(percent)] = (
            round(max(done[needed - 1], 0.0), 1) if fresh and 0 < needed <= len(done) else None
        )
    return out
