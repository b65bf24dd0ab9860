"""States a person can act on, beside the rollout's counts: the environment reads (``/``,
``/environments/ENV`` and their JSON) through ``judge``. The gate's counts (``GET /v1/rollout``)
are not changed by any of this.

- A cluster pending at its environment's head is **behind** while its platform commit is an
  older one (nothing of the head runs there yet) and **progressing** once it is at the head.
- A rollout is **stuck** when it has not finished by when it was expected to: the head's
  recording plus the gates' ``timeout`` the promoter recorded with it (after which the gate
  gave up), else plus ``stuckAfter`` (30 minutes; ``?stuckAfter=`` on any read). Then each
  of its pending clusters, cluster types and waves, and the environment, are ``stuck``, not
  ``progressing``: a failure is more urgent, a hold is on purpose.
- A **failed or stuck** environment says what the promotion did (stopped; rolled back, or will,
  with ``onFailure: rollback``; held), links its promotion PR, run, platform and main commits
  where the promoter recorded them (``promotions``), and names the commands that act on it.
"""

from __future__ import annotations

from typing import Any

from promoter.hub import promotions
from promoter.hub.db import Tx
from promoter.hub.durations import duration

DEFAULT_STUCK_AFTER = 1800.0


def judge(tx: Tx, entry: dict[str, Any], now: float, stuck_after: float, repo: str = "") -> dict[str, Any]:
    """``entry`` (an environment as ``queries.overview`` or ``environment_state`` reads it) with
    stuck and behind states, its head's promotion and, when it failed or is stuck, ``attention``."""
    top, progress = entry.get("head"), entry.get("rollout")
    if not top or not progress:
        return entry
    top.update(promotions.of_commit(tx, entry["environment"], top["commit"]))
    _expect(top, progress, now, stuck_after)
    _mark(entry, top["stuck"])
    _budgets(entry)
    if entry["state"] in ("failed", "stuck") or progress["state"] == "failed":
        entry["attention"] = _attention(tx, entry, now, repo)
    return entry


def _mark(entry: dict[str, Any], stuck: bool) -> None:
    """Stuck where progressing (cluster types, waves, the environment) and each cluster's badge."""
    groups = [*entry["rollout"]["clusterTypes"].values(), *(entry.get("waves") or [])]
    for group in groups if stuck else []:
        if group["state"] == "progressing":
            group["state"] = "stuck"
    for cluster in entry.get("clusters") or []:
        cluster["badge"] = cluster_badge(cluster, stuck)
    if stuck and entry["state"] == "progressing":
        entry["state"] = "stuck"


def _budgets(entry: dict[str, Any]) -> None:
    """Each cluster type's failures allowed by the hub gate's budget (over its fresh clusters, as
    the gate counts them), and each wave's over its types, where the gate recorded its budget."""
    budget = entry["head"].get("failureBudget")
    if not budget:
        return
    types = entry["rollout"]["clusterTypes"]
    for name, counts in types.items():
        counts["failuresAllowed"] = promotions.allowed(budget, name, counts["total"] - counts["stale"])
    for wave in entry.get("waves") or []:
        _wave_budget(wave, types)


def _wave_budget(wave: dict[str, Any], types: dict[str, Any]) -> None:
    """A wave's failures and failures allowed: its cluster types', summed."""
    mine = [types[t] for t in wave["clusterTypes"] if t in types]
    wave["failed"] = sum(c["failed"] for c in mine)
    wave["failuresAllowed"] = sum(c["failuresAllowed"] for c in mine)


def cluster_badge(cluster: dict[str, Any], stuck: bool) -> str:
    """A cluster's badge at its head: ``stuck`` and ``behind`` told apart from ``progressing``."""
    badge = str(cluster["badge"])
    if badge != "progressing":
        return badge
    if stuck:
        return "stuck"
    return "behind" if (cluster.get("behind") or 0) > 0 else "progressing"


def _attention(tx: Tx, entry: dict[str, Any], now: float, repo: str) -> dict[str, Any]:
    env, top = entry["environment"], entry["head"]
    back = rolled_back(tx, env, top)
    links = _links(top, repo)
    commands = [
        (f"promoter rollback --env {env}", "restores its last healthy commit"),
        (f'promoter hold {env} --reason "..."', "keeps every run out of it while you look"),
    ]
    if top.get("mainCommit"):
        commands.append(
            (f"promoter status --commit {top['mainCommit'][:12]}", "where the main commit stands")
        )
    return {
        "did": did(entry, back, now),
        "rolledBack": back,
        "links": [{"text": text, "href": href} for text, href in links if href],
        "commands": [{"command": c, "what": w} for c, w in commands],
    }


def _expect(top: dict[str, Any], progress: dict[str, Any], now: float, stuck_after: float) -> None:
    """When the head was expected to run everywhere (its gates' timeout, else ``stuck_after``
    after it was recorded), and whether it is stuck: past then, with a cluster pending."""
    top["expectedBy"] = float(top["recordedAt"]) + float(top.get("timeout") or stuck_after)
    top["expectation"] = "the gates' timeout" if top.get("timeout") else "stuckAfter"
    late = now > top["expectedBy"] and top.get("runningSince") is None
    top["stuck"] = late and any(c["pending"] for c in progress["clusterTypes"].values())


def _links(top: dict[str, Any], repo: str) -> list[tuple[str, str | None]]:
    """(text, address or None) of the head's promotion PR, run, platform commit and main commit."""
    main = top.get("mainCommit")
    return [
        ("promotion PR", top.get("pullRequest")),
        ("run", top.get("run")),
        (f"platform commit {top['commit'][:12]}", f"{repo}/commit/{top['commit']}" if repo else None),
        (
            f"main commit {str(main or '')[:12]}",
            f"{top['controlPlaneRepo']}/commit/{main}" if top.get("controlPlaneRepo") and main else None,
        ),
    ]


def did(entry: dict[str, Any], back: dict[str, Any] | None, now: float) -> str:
    """What the promotion did about the head, in a sentence."""
    env, top = entry["environment"], entry["head"]
    if any(not h.get("wave") for h in entry.get("holds") or []):
        return f"The promotion holds {env}: no run pushes or merges there until the hold ends."
    why = _why_stopped(entry["state"], top, now)
    then = {
        "rollback": f"the promotion stopped here and rolls {env} back to its last healthy commit (onFailure: rollback)",
        "stop": f"the promotion stopped here (onFailure: stop); what follows {env} waits",
    }.get(
        str(top.get("onFailure") or ""),
        f"the promotion stops here when its gates do; what follows {env} waits",
    )
    first = f"This head is a rollback to main {back['to'][:12]} (from {back['from'][:12]}). " if back else ""
    return f"{first}{why[0].upper()}{why[1:]}: {then}.{_held_waves(entry)}"


def _why_stopped(state: str, top: dict[str, Any], now: float) -> str:
    """Why the head needs attention: a failed cluster, its gates' timeout, or it being stuck."""
    if state == "failed":
        return "its gates fail on a failed cluster"
    if top.get("timeout"):
        return f"its gates gave up {duration(now - top['expectedBy'])} ago, at their timeout"
    recorded = float(top["recordedAt"])
    return (
        f"it has not finished {duration(now - recorded)} after it was recorded"
        f" (stuckAfter {duration(top['expectedBy'] - recorded)})"
    )


def _held_waves(entry: dict[str, Any]) -> str:
    """`` Held: waves a, b.``: the environment's waves on hold, if any."""
    waves = sorted(str(h["wave"]) for h in entry.get("holds") or [] if h.get("wave"))
    return f" Held: wave{'s' if len(waves) > 1 else ''} {', '.join(waves)}." if waves else ""


def rolled_back(tx: Tx, environment: str, top: dict[str, Any]) -> dict[str, Any] | None:
    """``{"from", "to"}`` main commits when the head brought back an earlier main commit (a rollback)."""
    main = top.get("mainCommit")
    if not main:
        return None
    before = tx.one(
        "SELECT main_commit FROM platform_commits WHERE environment = ? AND position < ?"
        " ORDER BY position DESC LIMIT 1",
        (environment, top["position"]),
    )
    if before is None or not before[0] or before[0] == main:
        return None
    earlier = tx.one(
        "SELECT 1 FROM platform_commits WHERE environment = ? AND main_commit = ? AND position < ? LIMIT 1",
        (environment, main, top["position"]),
    )
    return {"from": str(before[0]), "to": str(main)} if earlier else None
