"""The ``commitStatus`` gate: the statuses the clusters' reconcilers post on the platform repo.

Flux's notification-controller posts ``success`` or ``failure`` (never ``pending``) with the
context ``kustomization/<name>/<id>`` on the commit it reconciled, which may be a later commit
of the same branch than the merge commit M. Argo CD notifications post a context the user
chooses. The gate reads the statuses on M and (by default) on M's descendants on the
environment branch; statuses on older commits say nothing about this rollout and are never
read. On each commit, the last status posted for a context is that context's state there, as
on GitHub.

- any matching context in ``failure`` or ``error`` fails the gate at once;
- success needs every ``required`` context in ``success`` and at least ``minCount`` matching
  contexts in ``success``;
- no status at all is not success: the gate waits, and the environment's timeout ends it.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from promoter.controlplane.fields import GateFields
from promoter.gates.base import Gate, GateContext, Observation
from promoter.masking import mask
from promoter.model import Source, Status

FAILED = ("failure", "error")
#: Descendants of M read per check, nearest first: each is one request on GitHub.
MAX_DESCENDANTS = 20


@dataclass(frozen=True)
class Seen:
    """The current state of one context on one commit."""

    context: str
    commit: str
    status: Status


class CommitStatusGate(Gate):
    type = "commitStatus"

    def __init__(
        self,
        patterns: list[str],
        required: list[str],
        min_count: int,
        descendants: bool,
        interval: float,
        source: Source,
    ) -> None:
        super().__init__(source, interval)
        self.patterns = patterns
        self.required = required
        self.min_count = min_count
        self.descendants = descendants

    @classmethod
    def from_spec(cls, spec: Any, source: Source) -> CommitStatusGate:
        if isinstance(spec, str | list):
            spec = {"contexts": spec}
        f = GateFields(cls.type, spec, source)
        patterns = f.strings("contexts") or []
        required = f.strings("required") or []
        if not patterns and not required:
            f.fail("needs 'contexts' (patterns such as kustomization/*) or 'required' (exact contexts)")
        min_count = f.integer("minCount", 0 if required else 1, minimum=0)
        assert min_count is not None
        revision = f.choice("revision", ("descendants", "merge"), "descendants")
        interval = f.duration("interval", "15s")
        f.done()
        return cls(patterns, required, min_count, revision == "descendants", interval, source)

    def describe(self) -> str:
        parts = []
        if self.patterns:
            parts.append(",".join(self.patterns))
        if self.required:
            parts.append(f"{len(self.required)} required")
        if self.min_count > 1:
            parts.append(f"min {self.min_count}")
        return f"commitStatus {' '.join(parts)}"

    def matches(self, context: str) -> bool:
        return context in self.required or any(fnmatch.fnmatchcase(context, p) for p in self.patterns)

    def check(self, ctx: GateContext) -> Observation:
        if ctx.forge is None:
            return Observation("failure", "no forge to read platform statuses from")
        commits = rollout_commits(ctx, self.descendants)
        seen = [s for sha in commits for s in self._current(ctx, sha)]
        return self.judge(seen, commits, ctx)

    def _current(self, ctx: GateContext, sha: str) -> list[Seen]:
        latest: dict[str, Status] = {}
        for status in ctx.forge.platform_statuses(sha):
            if self.matches(status.context):
                latest[status.context] = status  # oldest first: the last one is current
        return [Seen(c, sha, s) for c, s in latest.items()]

    def judge(self, seen: list[Seen], commits: list[str], ctx: GateContext) -> Observation:
        """Failure if any is failed; success if required and minCount are met; else pending."""
        failed = [s for s in seen if s.status.state in FAILED]
        if failed:
            first = failed[0]
            detail = f": {first.status.description}" if first.status.description else ""
            more = f" (+{len(failed) - 1} more failed)" if len(failed) > 1 else ""
            return Observation(
                "failure", mask(f"{first.context} {first.status.state} on {first.commit[:12]}{detail}{more}")
            )
        passed = sorted({s.context for s in seen if s.status.state == "success"})
        missing = [r for r in self.required if r not in passed]
        if not missing and len(passed) >= self.min_count:
            return Observation("success", _listing(f"{len(passed)} success", passed))
        if not seen:
            where = f"{ctx.platform_sha[:12]}" + (
                f" or the {_count(len(commits) - 1, 'commit')} after it on {ctx.platform_branch}"
                if len(commits) > 1
                else ""
            )
            return Observation("pending", f"no status matching {self._wanted()} on {where} yet")
        waiting = [f"{s.context} {s.status.state}" for s in seen if s.status.state != "success"]
        parts = [f"{len(passed)} of {max(self.min_count, len(self.required), 1)} success"]
        if missing:
            parts.append(_listing("waiting for", missing))
        if waiting:
            parts.append(_listing("", waiting))
        return Observation("pending", mask("; ".join(parts)))

    def _wanted(self) -> str:
        return ", ".join([*self.patterns, *self.required])


def rollout_commits(ctx: GateContext, descendants: bool) -> list[str]:
    """M, then (with ``descendants``) the commits after M on the environment branch's
    first-parent line, nearest first. Commits before M are never included."""
    merge = ctx.platform_sha
    if not descendants or ctx.platform is None:
        return [merge]
    head = ctx.platform.fetch([ctx.platform_branch]).get(ctx.platform_branch)
    if not head or head == merge:
        return [merge]
    # --ancestry-path keeps only descendants of M; a branch reset behind M gives none.
    later = ctx.platform.git.out(
        "rev-list", "--first-parent", "--ancestry-path", "--reverse", operands=[f"{merge}..{head}"]
    ).split()
    return [merge, *later[:MAX_DESCENDANTS]]


def _listing(head: str, items: list[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit]) + (f", +{len(items) - limit} more" if len(items) > limit else "")
    return f"{head} ({shown})" if head else shown


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
