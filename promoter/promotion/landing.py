"""Landing a commit on an environment's platform branch by its merge policy, the one place
that knows the policies; promotions and rollbacks both land through it.

- ``direct``: push straight onto the branch, only if it is still at the planned base;
- ``auto``: open (or update) a PR and merge it when the forge says it can, with the head sha
  as a guard, and only onto the planned base;
- ``manual``: open the PR and wait for a human to merge it.

While waiting it says how long it has waited at a steady pace, and it stops when the PR was
closed, its head moved (another promotion took over) or the deadline passed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from promoter.clock import Clock, format_duration
from promoter.console import Console
from promoter.errors import GitError, MergeRefused, Superseded
from promoter.forges.base import Forge, MergeNotReady, PullRequest
from promoter.model import Environment
from promoter.platform.repo import PlatformRepo
from promoter.promotion.prchecks import PRChecks


class BaseMoved(GitError):
    """The platform branch moved under a landing; plan again onto its new head."""

    def __init__(self, sha: str) -> None:
        super().__init__(f"the platform branch moved to {sha[:12]}")
        self.sha = sha


@dataclass(frozen=True)
class Landed:
    merge_sha: str | None  # None: a PR left for a human to merge (when not waiting for one)
    pr: PullRequest | None


class MergePending(Exception):  # not an error: a run that does not wait stops here
    """The PR is not merged yet and the run does not wait for it (``--wait none``); ``checks``:
    because its required checks (``prChecks``) are pending."""

    def __init__(self, pr: PullRequest, why: str, *, checks: bool = False) -> None:
        super().__init__(why)
        self.pr = pr
        self.why = why
        self.checks = checks


@dataclass(frozen=True)
class Pacing:
    poll_interval: float = 5.0
    progress_interval: float = 10.0
    wait: bool = True  # False: MergePending when it is not merged (after ``settle``, for auto)
    #: ``wait`` False: how long an automatic merge is tried before the run stops (GitHub works
    #: out a new PR's mergeability for a few seconds; checks may take minutes, a human longer)
    settle: float = 30.0


class Landing:
    def __init__(
        self, platform: PlatformRepo, forge: Forge, clock: Clock, console: Console, pacing: Pacing
    ) -> None:
        self.platform = platform
        self.forge = forge
        self.clock = clock
        self.out = console
        self.pacing = pacing

    def land(
        self,
        env: Environment,
        *,
        branch: str,
        base: str | None,
        sha: str,
        title: str,
        body: str,
        deadline: float,
        on_open: Callable[[PullRequest], None] = lambda pr: None,
        wait_for_human: bool = True,
        who: str = "",
        labels: tuple[str, ...] = (),
        checks: PRChecks | None = None,
    ) -> Landed:
        """Land ``sha`` (already pushed to ``branch``, the PR's head) on ``env``'s branch;
        ``who`` starts the progress lines (``prod: wave canary (1/2)``; the environment's name
        by default); ``labels`` go on its PR; ``checks``: the PR's own checks that must pass
        before it is merged."""
        if env.merge == "direct":
            self.push_onto(env, base, sha)
            return Landed(sha, None)
        pr = self.forge.open_pr(env, branch, sha, title, body, labels)
        on_open(pr)
        if env.merge == "manual" and not wait_for_human:
            return Landed(None, pr)
        try:
            return Landed(self.wait_merge(env, pr, sha, deadline, title, base, who, checks), pr)
        except MergePending:
            if wait_for_human:
                raise
            return Landed(None, pr)  # a rollback in a run that does not wait: its PR stays open

    def push_onto(self, env: Environment, base: str | None, sha: str) -> None:
        """Push straight to the platform branch if it is still at ``base``; BaseMoved if not."""
        try:
            self.platform.push({env.gitops_branch: (base, sha)})
        except GitError:
            self._moved_from(env, base)
            raise

    def push_branch(self, branch: str, existing: str | None, sha: str) -> None:
        """Point a promotion or rollback branch at ``sha``; BaseMoved when someone else moved it."""
        try:
            self.platform.push({branch: (existing, sha)})
        except GitError:
            now = self.platform.fetch([branch])[branch]
            if now == existing:
                raise
            raise BaseMoved(now or "nothing") from None

    def wait_merge(
        self,
        env: Environment,
        pr: PullRequest,
        sha: str,
        deadline: float,
        title: str,
        base: str | None = None,
        who: str = "",
        checks: PRChecks | None = None,
    ) -> str:
        """Until ``pr`` is merged: merge it (auto) or wait for a human (manual). With ``base``, an
        auto merge happens only onto that base: merging a render onto content it was not
        planned on would mix two promotions. With ``checks``, nothing is merged while a required
        check is pending, and one that fails fails the environment."""
        started = self.clock.now()
        next_progress = started + self.pacing.progress_interval
        last = "waiting"
        while True:
            now_pr = self._observe(env, pr, sha)
            if now_pr.state == "merged" and now_pr.merge_sha:
                return now_pr.merge_sha
            held = False
            if checks is not None and not checks.ready(now_pr):
                held, last = True, checks.why
            elif env.merge == "auto":
                merged, last = self._try_merge(env, now_pr, sha, title, base, last)
                if merged:
                    return merged
            now = self.clock.now()
            if now >= deadline:
                if held and checks is not None:
                    raise checks.timed_out(now_pr)
                raise self._refused(env, pr, last, now - started)
            if not self.pacing.wait and (env.merge != "auto" or held or now - started >= self.pacing.settle):
                raise MergePending(now_pr, last, checks=held)
            if now >= next_progress:
                self.out.progress(
                    f"{who or env.name}: waiting {format_duration(now - started)} "
                    f"({format_duration(deadline - now)} left), merge ({env.merge}): {last}"
                )
                next_progress = now + self.pacing.progress_interval
            self.clock.sleep(min(self.pacing.poll_interval, max(deadline - now, 0.05)))

    def _refused(self, env: Environment, pr: PullRequest, last: str, waited: float) -> MergeRefused:
        if not self.pacing.wait:
            return MergeRefused(f"{env.name}: {pr.url} was not merged within the timeout ({last})")
        return MergeRefused(f"{env.name}: {pr.url} was not merged within {format_duration(waited)} ({last})")

    def _observe(self, env: Environment, pr: PullRequest, sha: str) -> PullRequest:
        """The PR as the forge has it now: merged (with its merge sha), or still open on ``sha``."""
        now_pr = self.forge.refresh_pr(pr)
        if now_pr.state == "merged" and now_pr.merge_sha:
            return now_pr
        if now_pr.head_sha != sha:
            raise Superseded(f"{pr.head_branch} moved to {now_pr.head_sha[:12]}; another promotion took over")
        if now_pr.state == "closed":
            raise MergeRefused(f"{env.name}: the promotion PR {pr.url} was closed without merging")
        return now_pr

    def _try_merge(
        self, env: Environment, pr: PullRequest, sha: str, title: str, base: str | None, last: str
    ) -> tuple[str | None, str]:
        """One attempt to merge: (merge sha, or None and why not yet)."""
        if base is not None:
            self._moved_from(env, base)
        try:
            return self.forge.merge_pr(pr, sha, f"Merge {title}"), last
        except MergeNotReady as err:
            return None, str(err)
        except GitError:
            if base is not None:
                self._moved_from(env, base)
            raise

    def _moved_from(self, env: Environment, base: str | None) -> None:
        """BaseMoved when the platform branch is no longer at ``base``."""
        moved = self.platform.fetch([env.gitops_branch])[env.gitops_branch]
        if moved != base:
            raise BaseMoved(moved or "nothing")
