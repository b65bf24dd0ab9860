"""A waved environment's waves at its head, for its read and page (``queries.environment_state``):
which cluster types each wave holds, the main commit their folders hold, and the wave's state."""

from __future__ import annotations

from typing import Any

from promoter.hub import badges, holds
from promoter.hub.db import Tx

_LAST = 1 << 62  # a wave that never landed sorts after those that did


def waves(
    tx: Tx, environment: str, sha: str, progress: dict[str, Any], held: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """A waved environment's waves at its head, in the order they first landed: each wave's cluster
    types, the main commit their folders hold, and its state (its types' most urgent; ``held``
    when one of ``held`` covers it and none failed)."""
    grouped = _folders_by_wave(tx, environment, sha)
    first = _first_landed(tx, environment)
    order = sorted(grouped, key=lambda w: (first.get(w, _LAST), w))
    return [_wave(name, grouped[name], progress["clusterTypes"], held or []) for name in order]


def _folders_by_wave(tx: Tx, environment: str, sha: str) -> dict[str, list[tuple[str, str | None]]]:
    """Wave -> (cluster type, main commit its folder holds) of each folder of commit ``sha``."""
    rows = tx.rows(
        "SELECT cluster_type, wave, main_commit FROM commit_folders WHERE environment = ? AND sha = ?"
        " ORDER BY cluster_type",
        (environment, sha),
    )
    grouped: dict[str, list[tuple[str, str | None]]] = {}
    for cluster_type, wave, main in rows:
        grouped.setdefault(str(wave), []).append((str(cluster_type), main))
    return grouped


def _first_landed(tx: Tx, environment: str) -> dict[str, int]:
    """Wave -> the position of the first platform commit that landed it."""
    return {
        str(w): int(p)
        for w, p in tx.rows(
            "SELECT wave, MIN(position) FROM platform_commits WHERE environment = ? AND wave <> '' GROUP BY wave",
            (environment,),
        )
    }


def _wave(
    name: str, folders: list[tuple[str, str | None]], per_type: dict[str, Any], held: list[dict[str, Any]]
) -> dict[str, Any]:
    """One wave: its cluster types, their main commit(s), and its state."""
    types = [t for t, _ in folders]
    mains = sorted({str(m) for _, m in folders if m})
    return {
        "name": name or "(the whole environment)",
        "clusterTypes": types,
        "mainCommit": mains[0] if len(mains) == 1 else None,
        "mainCommits": mains,
        "state": holds.judged(badges.worst(per_type[t]["state"] for t in types if t in per_type), held, name),
    }
