"""Environments as a graph at the hub: what each environment follows, as the promoter recorded
it with its platform commits (``follows``), and the Pipeline in tiers for the overview."""

from __future__ import annotations

import json
from collections.abc import Sequence

from promoter.hub.db import Tx


def graph(tx: Tx, names: Sequence[str]) -> dict[str, list[str]]:
    """The environments each of ``names`` (in the Pipeline's order) follows: as the promoter
    recorded the graph, else (a list Pipeline, or a hub told no graph) the one before it."""
    names = list(names)
    said = {str(n): f for n, f in tx.rows("SELECT name, follows FROM environments WHERE follows IS NOT NULL")}
    out: dict[str, list[str]] = {}
    for i, name in enumerate(names):
        if name in said:
            try:
                found = json.loads(said[name])
            except ValueError:
                found = []
            out[name] = [str(u) for u in found if u in names] if isinstance(found, list) else []
        else:
            out[name] = [names[i - 1]] if i else []
    return out


def tiers(follows: dict[str, list[str]]) -> list[list[str]]:
    """The environments in tiers: each after every environment it follows (a chain: one per tier)."""
    depth: dict[str, int] = {}

    def of(name: str, seen: frozenset[str]) -> int:
        if name not in depth:
            ups = [
                u for u in follows.get(name, []) if u not in seen
            ]  # a cycle (a hand-made record) ends here
            depth[name] = 1 + max((of(u, seen | {name}) for u in ups), default=-1)
        return depth[name]

    out: list[list[str]] = []
    for name in follows:
        level = of(name, frozenset())
        while len(out) <= level:
            out.append([])
        out[level].append(name)
    return [t for t in out if t]
