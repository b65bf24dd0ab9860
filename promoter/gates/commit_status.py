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
  contexts in ``success``; a ``success`` that Flux (up to 2.7) posts for a revision it has not
  applied yet ("dependency not ready") is waited on;
- no status at all is not success: the gate waits, and the environment's timeout ends it, with
  the contexts that never reported and the likely cause by the Flux release the cluster types
  run (``promoter.gates.flux``: Flux 2.8 posts no failure status, so a failure is silence).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from promoter.controlplane.fields import GateFields
from promoter.errors import PromoterError
from promoter.gates import flux
from promoter.gates.base import MESSAGE_LIMIT, Gate, GateContext, Observation
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

    @property
    def succeeded(self) -> bool:
        """``success`` that says the revision is applied (not Flux's "dependency not ready")."""
        return self.status.state == "success" and self.status.description not in flux.NOT_APPLIED

    def __str__(self) -> str:
        if self.status.state == "success" and not self.succeeded:
            return f"{self.context} success: {self.status.description} (not applied yet)"
        return f"{self.context} {self.status.state}"


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
        # What the last check read and saw, for the timeout's message.
        self._commits: list[str] = []
        self._seen: list[Seen] = []

    @classmethod
    def from_spec(cls, spec: Any, source: Source) -> CommitStatusGate:
        if isinstance(spec, str | list):
            spec = {"contexts": spec}
        f = GateFields(cls.type, spec, source)
        patterns = f.strings("contexts") or []
        required = f.strings("required") or []
        if not patterns and not required:
            f.fail("needs 'contexts' (patterns such as kustomization/*) or 'required' (exact contexts)")
        min_count = _min_count(f, required)
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
        self._commits, self._seen = commits, seen
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
            return _failure(failed)
        passed = _passed(seen)
        missing = self._absent(passed)
        if not missing and len(passed) >= self.min_count:
            return Observation("success", _listing(f"{len(passed)} success", passed))
        if not seen:
            where = _where(ctx, commits)
            return Observation("pending", f"no status matching {self._wanted()} on {where} yet")
        parts = [f"{len(passed)} of {self._needed()} success"]
        parts += _listings(("waiting for", missing), ("", _unfinished(seen, passed)))
        return Observation("pending", mask("; ".join(parts)))

    def at_timeout(self, ctx: GateContext, last: Observation) -> Observation:
        """The last look, said for the deadline: the required contexts that never reported, how
        many of ``minCount`` are missing (named when they reported on the commit before M), and
        the likely cause, by the Flux releases the cluster types run (``ctx.flux``). A missing
        status stays what it is: the gate does not pass."""
        if last.state != "pending" or not self._commits:
            return last
        reported = {s.context for s in self._seen}
        passed = _passed(self._seen)
        short = self._short(passed)
        quiet = self._silent_since(ctx, reported) if short > 0 else None
        for limit in (3, 1):  # shorter lists rather than a cut-off cause, which comes last
            text = mask("; ".join(self._missed(ctx, passed, reported, quiet, limit)))
            if len(text) <= MESSAGE_LIMIT:
                break
        return Observation("pending", text)

    def _missed(
        self,
        ctx: GateContext,
        passed: list[str],
        reported: set[str],
        quiet: tuple[str, list[str]] | None,
        limit: int,
    ) -> list[str]:
        """The parts of the timeout's message, each list shown up to ``limit`` items."""
        parts = [self._progress(ctx, passed, limit)]
        never = self._absent(reported)
        parts += _listings(
            ("never reported", never), ("not success", _unfinished(self._seen, passed)), limit=limit
        )
        short = self._short(passed)
        if short > 0:
            parts.append(f"{short} of minCount {self.min_count} missing")
        if quiet:
            before, names = quiet
            what = f"reported on {before[:12]}, the commit before, and not since:"
            parts.append(_listing(what, names, limit, parens=False))
        if never or short > 0:
            parts.append(flux.silence_cause(ctx.flux))
        return parts

    def _absent(self, contexts: Collection[str]) -> list[str]:
        """The required contexts not among ``contexts``."""
        return [r for r in self.required if r not in contexts]

    def _short(self, passed: list[str]) -> int:
        """How many successes ``minCount`` still misses (patterns only: required ones are named)."""
        return self.min_count - len(passed) if self.patterns else 0

    def _progress(self, ctx: GateContext, passed: list[str], limit: int) -> str:
        """How many succeeded of how many needed, or that no status matched at all."""
        if self._seen:
            return _listing(f"{len(passed)} of {self._needed()} success", passed, limit)
        return f"no status matching {self._wanted()} on {_where(ctx, self._commits)}"

    def _silent_since(self, ctx: GateContext, reported: set[str]) -> tuple[str, list[str]] | None:
        """The commit before M and the matching contexts that reported there and not on this
        rollout: most likely the silent clusters (read to name them, never to judge)."""
        found = _before(ctx)
        if found is None:
            return None
        before, earlier = found
        quiet = sorted(c for c in earlier - reported if self.matches(c) and c not in self.required)
        return (before, quiet) if before and quiet else None

    def _needed(self) -> int:
        return max(self.min_count, len(self.required), 1)

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


def _where(ctx: GateContext, commits: list[str]) -> str:
    """``8f14e45fceea or the 2 commits after it on qa``: the commits a check read."""
    after = f" or the {_count(len(commits) - 1, 'commit')} after it on {ctx.platform_branch}"
    return f"{ctx.platform_sha[:12]}{after if len(commits) > 1 else ''}"


def _min_count(f: GateFields, required: list[str]) -> int:
    """``minCount``: 0 by default with required contexts, else 1; 0 only with some required."""
    min_count = f.integer("minCount", 0 if required else 1, minimum=0)
    assert min_count is not None
    if min_count == 0 and not required:
        f.fail("'minCount' 0 with no 'required' would pass with no status at all: give at least 1")
    return min_count


def _before(ctx: GateContext) -> tuple[str | None, set[str]] | None:
    """The commit before M and the contexts that reported on it; None when it cannot be read
    (naming the silent clusters is a courtesy: the timeout stands without it)."""
    if ctx.platform is None:
        return None
    try:
        before = ctx.platform.git.rev_parse(f"{ctx.platform_sha}^")
        return before, {s.context for s in ctx.forge.platform_statuses(before)} if before else set()
    except PromoterError:
        return None


def _passed(seen: list[Seen]) -> list[str]:
    """The contexts that succeeded, sorted."""
    return sorted({s.context for s in seen if s.succeeded})


def _unfinished(seen: list[Seen], passed: list[str]) -> list[str]:
    """The statuses seen that did not succeed, of contexts that did not succeed elsewhere."""
    return [str(s) for s in seen if not s.succeeded and s.context not in passed]


def _failure(failed: list[Seen]) -> Observation:
    """The failure of the first failed status (and how many more failed)."""
    first = failed[0]
    detail = f": {first.status.description}" if first.status.description else ""
    more = f" (+{len(failed) - 1} more failed)" if len(failed) > 1 else ""
    return Observation(
        "failure", mask(f"{first.context} {first.status.state} on {first.commit[:12]}{detail}{more}")
    )


def _listings(*lists: tuple[str, list[str]], limit: int = 3) -> list[str]:
    """A ``_listing`` of each (head, items) whose items are not empty."""
    return [_listing(head, items, limit) for head, items in lists if items]


def _listing(head: str, items: list[str], limit: int = 3, *, parens: bool = True) -> str:
    shown = ", ".join(items[:limit]) + (f", +{len(items) - limit} more" if len(items) > limit else "")
    if not head:
        return shown
    return f"{head} ({shown})" if parens else f"{head} {shown}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
