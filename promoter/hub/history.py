"""One environment's history as the DORA measures read it (``promoter.hub.dora``): its platform
commits in order, its clusters (and when each was lost), when each reached each commit, and the
reports received."""

from __future__ import annotations

from dataclasses import dataclass, field

from promoter.hub import fleet
from promoter.hub.db import Tx
from promoter.hub.fleet import Registration, Span


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
    types: dict[str, str]  # every cluster ever registered in the environment -> its cluster type
    reached: dict[tuple[str, str], float]  # (cluster, platform sha) -> the hub's receipt
    first_seen: dict[str, list[tuple[float, str]]]  # cluster -> (its own time, platform sha), in order
    reports: list[Report] = field(default_factory=list)
    fleet: list[Registration] = field(default_factory=list)
    folders: dict[str, dict[str, str | None]] = field(default_factory=dict)  # sha -> type -> main it holds
    lost: dict[str, list[Span]] = field(default_factory=dict)  # cluster -> the spans it was lost in


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
        for n, t in tx.rows("SELECT name, cluster_type FROM clusters WHERE environment = ?", (environment,))
    }
    folders: dict[str, dict[str, str | None]] = {}
    for sha, cluster_type, main in tx.rows(
        "SELECT sha, cluster_type, main_commit FROM commit_folders WHERE environment = ?", (environment,)
    ):
        folders.setdefault(str(sha), {})[str(cluster_type)] = main
    return History(
        commits,
        first,
        types,
        _reached(tx, environment),
        _first_seen(tx, environment),
        _reports(tx, environment, since),
        fleet.registrations(tx, environment),
        folders,
        fleet.silences(tx, environment),
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
