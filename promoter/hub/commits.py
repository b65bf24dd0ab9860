"""Writes of a merged platform commit, what the promoter put on an environment's branch:
recorded once however often it is sent, with its place on the environment's line, its
folders and assignments, and the clusters that reported it before it was recorded refreshed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from promoter.hub.db import Database, Tx
from promoter.hub.promotions import Promotion
from promoter.hub.promotions import record as record_promotion
from promoter.hub.summary import refresh_cluster


@dataclass(frozen=True)
class CommitRecord:
    """A merged platform commit: what the promoter put on an environment's branch."""

    environment: str
    sha: str
    branch: str
    parent: str | None = None
    main_commit: str | None = None
    committed_at: float | None = None
    assignments: tuple[tuple[str, str], ...] = ()  # (cluster type, deployment target)
    order: tuple[str, ...] = ()  # the Pipeline's environments, in order, when known
    repo_url: str = ""  # the platform repo's web page, when it has one (links on the pages)
    wave: str = ""  # the wave whose landing made this commit ('' : the whole environment)
    folders: tuple[tuple[str, str, str | None], ...] = ()  # (cluster type, its wave, its main commit)
    follows: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (environment, the environments it follows)
    promotion: Promotion = field(
        default_factory=Promotion
    )  # its PR, run, failure policy, gates' timeout (promotions.py)


def record_commit(db: Database, record: CommitRecord, now: float) -> bool:
    """Record a merged platform commit; False when it was recorded already."""
    with db.transaction() as tx:
        _environments(tx, record.environment, record.branch, record.order)
        for name, upstreams in record.follows:
            tx.run("UPDATE environments SET follows = ? WHERE name = ?", (json.dumps(list(upstreams)), name))
        if record.repo_url:
            tx.run(
                "UPDATE environments SET repo_url = ? WHERE name = ?", (record.repo_url, record.environment)
            )
        known = tx.one(
            "SELECT 1 FROM platform_commits WHERE environment = ? AND sha = ?",
            (record.environment, record.sha),
        )
        if known:
            record_promotion(tx, record.environment, record.sha, record.promotion)
            return False
        position = _position(tx, record)
        tx.run(
            "INSERT INTO platform_commits (environment, sha, parent, branch, main_commit, position,"
            " committed_at, recorded_at, wave) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.environment,
                record.sha,
                record.parent,
                record.branch,
                record.main_commit,
                position,
                record.committed_at,
                now,
                record.wave,
            ),
        )
        record_promotion(tx, record.environment, record.sha, record.promotion)
        _contents(tx, record)
        # Clusters may have reported this commit before the promoter recorded it: each reconciler
        # at it has its row in deployments (written with its latest state, kept while it is there).
        for (name,) in tx.rows(
            "SELECT DISTINCT cluster FROM deployments WHERE environment = ? AND revision = ?",
            (record.environment, record.sha),
        ):
            refresh_cluster(tx, str(name))
    return True


def _contents(tx: Tx, record: CommitRecord) -> None:
    """The commit's folders (each cluster type's wave and main commit) and its assignments."""
    for cluster_type, wave, main in sorted(set(record.folders)):
        tx.run(
            "INSERT INTO commit_folders (environment, sha, cluster_type, wave, main_commit) VALUES (?, ?, ?, ?, ?)",
            (record.environment, record.sha, cluster_type, wave, main),
        )
    for cluster_type, target in sorted(set(record.assignments)):
        tx.run(
            "INSERT INTO assignments (environment, sha, cluster_type, deployment_target) VALUES (?, ?, ?, ?)",
            (record.environment, record.sha, cluster_type, target),
        )


def _position(tx: Tx, record: CommitRecord) -> int:
    """A commit's place on its environment's line: after its parent, else after the last one."""
    parent = (
        tx.one(
            "SELECT position FROM platform_commits WHERE environment = ? AND sha = ?",
            (record.environment, record.parent),
        )
        if record.parent
        else None
    )
    if parent:
        return int(parent[0]) + 1
    top = tx.one("SELECT MAX(position) FROM platform_commits WHERE environment = ?", (record.environment,))
    return int(top[0]) + 1 if top and top[0] is not None else 0


def _environments(tx: Tx, environment: str, branch: str, order: Sequence[str]) -> None:
    """Keep the Pipeline's order of environments (discrepancies are read in it)."""
    names = list(order) or [environment]
    top = tx.one("SELECT MAX(position) FROM environments")
    base = int(top[0]) + 1 if top and top[0] is not None and not order else 0
    for i, name in enumerate(names):
        tx.run(
            "INSERT INTO environments (name, position, branch) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET"
            f" position = {'excluded.position' if order else 'environments.position'}",
            (name, base + i, branch if name == environment else ""),
        )
    tx.run("UPDATE environments SET branch = ? WHERE name = ?", (branch, environment))
