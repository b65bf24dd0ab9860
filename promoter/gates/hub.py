"""The ``hub`` gate: the deployment observability hub says the merged commit M is live on
enough clusters of each cluster type (DESIGN section 10, docs/hub.md).

Per cluster type (the wave's, or every type the hub knows in the environment), over the
registered clusters that reported within ``staleAfter``: a cluster counts as a success when its
latest reports are successes at M or a first-parent descendant of M. The gate

- **fails** when a type has more than ``maxFailures`` failed clusters (a count, or a percent
  of its fresh clusters);
- **passes** when every type has at least ``minClusters`` successes and ``minPercent`` percent
  of its fresh clusters, and has held so for ``bake``;
- **waits** otherwise. Zero clusters never passes: a type with no fresh cluster waits.

With a promoter key in ``tokenEnv`` (``PROMOTER_HUB_TOKEN``), the gate first records M (its
environment, main commit, parent and assignments) at the hub, so the hub knows what should run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from promoter.clock import format_duration
from promoter.controlplane.fields import GateFields
from promoter.gates.base import Gate, GateContext, Observation
from promoter.gates.http import HttpProblem, check_base_url
from promoter.gates.hubapi import TOKEN_ENV, HubClient, commit_record
from promoter.masking import mask
from promoter.model import Source


@dataclass(frozen=True)
class Thresholds:
    min_clusters: int = 1
    min_percent: float = 100.0
    max_failures: int = 0
    max_failures_percent: float | None = None

    def allowed_failures(self, fresh: int) -> int:
        if self.max_failures_percent is None:
            return self.max_failures
        return math.floor(fresh * self.max_failures_percent / 100)


class HubGate(Gate):
    type = "hub"

    def __init__(
        self,
        url: str,
        thresholds: Thresholds,
        per_type: dict[str, Thresholds],
        stale_after: float,
        bake: float,
        token_env: str,
        timeout: float,
        interval: float,
        source: Source,
    ) -> None:
        super().__init__(source, interval)
        self.url, self.thresholds, self.per_type = url, thresholds, per_type
        self.stale_after, self.bake, self.token_env, self.timeout = stale_after, bake, token_env, timeout
        self.recorded: str | None = None
        self.held_since: float | None = None
        self.seen = ""  # the last counts, as the run's table shows them

    @classmethod
    def from_spec(cls, spec: Any, source: Source) -> HubGate:
        f = GateFields(cls.type, spec, source)
        url = f.any("url")
        problem = check_base_url(url)
        if problem:
            f.problem("url", problem)
        thresholds = _thresholds(f, Thresholds())
        per_type: dict[str, Thresholds] = {}
        overrides = f.get("clusterTypes", dict) or {}
        for name, value in overrides.items():
            sub = GateFields(cls.type, value, source)
            per_type[str(name)] = _thresholds(sub, thresholds, prefix=f"clusterTypes.{name}.")
            sub.done()
        gate = cls(
            url.strip(),
            thresholds,
            per_type,
            stale_after=f.duration("staleAfter", "30m"),
            bake=f.duration("bake", "0s", positive=False),
            token_env=f.text("tokenEnv", TOKEN_ENV) or TOKEN_ENV,
            timeout=f.duration("timeout", "10s"),
            interval=f.duration("interval", "10s"),
            source=source,
        )
        f.done()
        return gate

    def describe(self) -> str:
        """What the gate asks, until it has seen the hub's counts; then the counts, per type."""
        if self.seen:
            return f"hub {self.seen}"
        t = self.thresholds
        return f"hub {t.min_percent:g}% of each cluster type (at least {t.min_clusters})"

    def check(self, ctx: GateContext) -> Observation:
        client = HubClient.from_env(self.url, self.token_env, self.timeout)
        try:
            if client.token and self.recorded != ctx.platform_sha:
                self._record(client, ctx)
            rollout = client.rollout(ctx.environment, ctx.platform_sha, self.stale_after, ctx.cluster_types)
        except HttpProblem as err:
            self.held_since = None
            if err.status == 401:
                return Observation("failure", f"the hub refused the key in {self.token_env}: {err}")
            if err.status == 404 and not client.token:
                return Observation(
                    "pending", f"{err}; set {self.token_env} to a promoter key so the gate records M"
                )
            return Observation("pending", str(err))
        return self.judge(rollout, ctx)

    def _record(self, client: HubClient, ctx: GateContext) -> None:
        if ctx.platform is not None:
            body = commit_record(
                ctx.platform,
                ctx.platform_sha,
                ctx.platform_path,
                ctx.environment,
                ctx.platform_branch,
                ctx.commit,
            )
        else:
            body = {
                "environment": ctx.environment,
                "sha": ctx.platform_sha,
                "branch": ctx.platform_branch,
                "mainCommit": ctx.commit,
            }
        client.record({**body, "failureBudget": self.budget()})
        self.recorded = ctx.platform_sha

    def budget(self) -> dict[str, Any]:
        """The failure budget, as the hub shows it beside the rollout (docs/hub.md)."""

        def limit(t: Thresholds) -> int | str:
            return t.max_failures if t.max_failures_percent is None else f"{t.max_failures_percent:g}%"

        types = {name: limit(t) for name, t in sorted(self.per_type.items())}
        return {"maxFailures": limit(self.thresholds), "clusterTypes": types}

    def judge(self, rollout: dict[str, Any], ctx: GateContext) -> Observation:
        """The verdict on a ``GET /v1/rollout`` answer, bake included."""
        types: dict[str, dict[str, int]] = rollout.get("clusterTypes") or {}
        if not types:
            self.held_since = None
            return Observation(
                "pending", f"no cluster of environment {ctx.environment} is registered at the hub"
            )
        verdicts = {name: self._type_verdict(name, counts) for name, counts in sorted(types.items())}
        summary = mask("; ".join(f"{n} {_counts(c, self._allowed(n, c))}" for n, c in sorted(types.items())))
        self.seen = _totals(types)
        failed = [name for name, verdict in verdicts.items() if verdict == "failure"]
        if failed:
            self.held_since = None
            return Observation("failure", f"too many failed clusters in {', '.join(failed)}: {summary}")
        if "pending" in verdicts.values():
            self.held_since = None
            return Observation("pending", summary)
        return self._baked(ctx, summary)

    def _baked(self, ctx: GateContext, summary: str) -> Observation:
        """Every type passes: success once they have passed for the bake time."""
        now = ctx.clock.now()
        self.held_since = self.held_since if self.held_since is not None else now
        baked = now - self.held_since
        if baked < self.bake:
            return Observation(
                "pending", f"baking {format_duration(baked)} of {format_duration(self.bake)}: {summary}"
            )
        return Observation("success", summary)

    def _allowed(self, name: str, counts: dict[str, int]) -> int:
        """The failures type ``name`` may have now: of its fresh clusters, as they are at this check."""
        fresh = counts.get("total", 0) - counts.get("stale", 0)
        return self.per_type.get(name, self.thresholds).allowed_failures(fresh)

    def _type_verdict(self, name: str, counts: dict[str, int]) -> str:
        t = self.per_type.get(name, self.thresholds)
        fresh = counts.get("total", 0) - counts.get("stale", 0)
        success, failures = counts.get("success", 0), counts.get("failed", 0)
        if failures > self._allowed(name, counts):
            return "failure"
        if fresh <= 0 or success < max(t.min_clusters, 1) or 100.0 * success < t.min_percent * fresh:
            return "pending"
        return "success"


def _thresholds(f: GateFields, base: Thresholds, prefix: str = "") -> Thresholds:
    out = base
    clusters = f.integer("minClusters", None, minimum=1)
    if clusters is not None:
        out = replace(out, min_clusters=clusters)
    percent = f.get("minPercent", (int, float))
    if percent is not None:
        if isinstance(percent, bool) or not 0 < percent <= 100:
            f.problem(f"{prefix}minPercent", f"must be a number above 0 and at most 100, got {percent!r}")
        out = replace(out, min_percent=float(percent))
    failures = f.get("maxFailures", (int, str))
    if failures is not None:
        out = _max_failures(f, out, failures, prefix)
    return out


def _max_failures(f: GateFields, out: Thresholds, value: int | str, prefix: str) -> Thresholds:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return replace(out, max_failures=value, max_failures_percent=None)
    text = str(value).strip()
    if text.endswith("%"):
        try:
            percent = float(text[:-1])
        except ValueError:
            percent = -1.0
        if 0 <= percent <= 100:
            return replace(out, max_failures_percent=percent)
    f.problem(f"{prefix}maxFailures", f"must be a count (0, 2) or a percent ('10%'), got {value!r}")


def _counts(counts: dict[str, int], allowed: int) -> str:
    """``117/120 success, 1 failed (1 of 2 failures allowed), 1 pending, 1 stale``: the budget is
    said once it is not nothing or spent."""
    failed = counts.get("failed", 0)
    budget = (
        f" ({failed} of {allowed} failure{'s' if allowed != 1 else ''} allowed)"
        if allowed
        else " (no failure allowed)"
        if failed
        else ""
    )
    return (
        f"{counts.get('success', 0)}/{counts.get('total', 0)} success, {failed} failed{budget},"
        f" {counts.get('pending', 0)} pending, {counts.get('stale', 0)} stale"
    )


def _totals(types: dict[str, dict[str, int]]) -> str:
    """``6/6 clusters (east-large 2/2, edge 2/2, west-small 2/2)``: successes over totals."""
    success = sum(c.get("success", 0) for c in types.values())
    total = sum(c.get("total", 0) for c in types.values())
    shown = [f"{name} {c.get('success', 0)}/{c.get('total', 0)}" for name, c in sorted(types.items())]
    more = f", +{len(shown) - 4} more" if len(shown) > 4 else ""
    return f"{success}/{total} clusters ({', '.join(shown[:4])}{more})"
