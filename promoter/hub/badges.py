"""The state a page shows at a glance, for a cluster, a cluster type, a wave and an environment.

``held`` comes from the holds in force (``holds.judged``); ``stuck`` and ``behind`` from
``attention`` (the pages and the environment reads): the rollout's counts know neither.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

Badge = Literal["healthy", "progressing", "failed", "stale", "held", "stuck", "behind"]
#: Most urgent first: a group shows the most urgent state of its members.
ORDER: tuple[Badge, ...] = ("failed", "stuck", "held", "progressing", "behind", "stale", "healthy")
_OF_CLUSTER: dict[str, Badge] = {
    "success": "healthy",
    "pending": "progressing",
    "failed": "failed",
    "stale": "stale",
    "held": "held",
}


def of_cluster(state: str | None) -> Badge:
    """A cluster's state in its environment's head rollout, as a badge (no state: stale)."""
    return _OF_CLUSTER.get(state or "", "stale")


def of_counts(counts: Mapping[str, Any]) -> Badge:
    """A cluster type's: failed when one of its clusters failed, progressing while one is
    pending, stale when no fresh cluster runs the head (or it has none), healthy when every
    fresh cluster does (stale ones aside: they are not counted, as the gate counts)."""
    if counts.get("failed"):
        return "failed"
    if counts.get("held"):
        return "held"
    if counts.get("pending"):
        return "progressing"
    if not counts.get("success"):
        return "stale"
    return "healthy"


def worst(badges: Iterable[Badge]) -> Badge:
    """The most urgent of ``badges`` (none: stale, nothing is known)."""
    found = set(badges)
    return next((b for b in ORDER if b in found), "stale")
