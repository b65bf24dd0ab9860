"""``merge: next`` (docs/hydrator.md): an environment's promotion is pushed to its ``-next``
branch, GitOps Promoter's proposed branch, and the merge into the environment's branch is left
to GitOps Promoter or a person, as ``manual`` leaves a PR's merge to a person.

It has landed when the environment's branch holds the promoted tree under ``gitops.path`` (a
merge commit, a squash, a fast-forward: whichever way it was merged) or has the pushed commit
in its history; the gates then run on the branch's head. A ``-next`` branch deleted, or moved
to a commit that holds another tree, before it landed, is a promotion refused.
"""

from __future__ import annotations

from promoter.clock import Clock, format_duration
from promoter.console import Console
from promoter.controlplane.hydrator import next_branch
from promoter.errors import MergeRefused
from promoter.model import Environment, promotion_branch
from promoter.platform.repo import PlatformRepo
from promoter.promotion.landing import Pacing
from promoter.promotion.waiting import PROPOSED


class NextPending(Exception):  # not an error: a run that does not wait stops here
    """The ``-next`` branch is not merged yet and the run does not wait for it."""


def head_branch(env: Environment) -> str:
    """The branch a promotion of ``env`` is pushed to: ``-next`` for ``merge: next``, else the
    promoter's own promotion branch (the PR's head)."""
    return next_branch(env) if env.merge == "next" else promotion_branch(env.name)


def proposed_description(env: Environment) -> str:
    """The pending status's text while ``-next`` waits for its merge (``waiting.phase_of`` reads
    it back as the ``merge`` phase)."""
    return f"{PROPOSED}{next_branch(env)}: waiting for its merge into {env.gitops_branch}"


def tree_at(platform: PlatformRepo, commit: str, path: str) -> str | None:
    """The tree id of ``path`` (the whole tree for "") at ``commit``."""
    return platform.git.rev_parse(f"{commit}:{path}" if path else f"{commit}^{{tree}}")


def holds(platform: PlatformRepo, head: str, sha: str, path: str) -> bool:
    """Whether ``head`` holds what ``sha`` promoted: the same tree under ``path``, or ``sha`` in
    its history (merged, and moved on since)."""
    return tree_at(platform, head, path) == tree_at(platform, sha, path) or platform.git.is_ancestor(
        sha, head
    )


class NextLanding:
    """Waits for the environment's branch to hold a commit pushed to ``-next``."""

    def __init__(self, platform: PlatformRepo, clock: Clock, console: Console, pacing: Pacing) -> None:
        self.platform = platform
        self.clock = clock
        self.out = console
        self.pacing = pacing

    def wait(self, env: Environment, sha: str, deadline: float, who: str) -> str:
        """The environment branch's head once it holds ``sha`` (pushed to ``-next``); MergeRefused
        when ``-next`` was deleted or replaced, or the deadline passed; NextPending when the run
        does not wait."""
        branch = next_branch(env)
        started = self.clock.now()
        next_progress = started + self.pacing.progress_interval
        while True:
            heads = self.platform.fetch([env.gitops_branch, branch])
            head, proposed = heads[env.gitops_branch], heads[branch]
            if head is not None and holds(self.platform, head, sha, env.gitops_path):
                return head
            self.check_proposed(env, proposed, sha)
            now = self.clock.now()
            if now >= deadline:
                raise MergeRefused(
                    f"{env.name}: {branch} ({sha[:12]}) was not merged into {env.gitops_branch} "
                    f"within the timeout ({format_duration(env.timeout)})"
                )
            if not self.pacing.wait:
                raise NextPending(f"someone to merge {branch} into {env.gitops_branch}")
            if now >= next_progress:
                self.out.progress(
                    f"{who}: waiting {format_duration(now - started)} ({format_duration(deadline - now)} "
                    f"left) for {branch} to be merged into {env.gitops_branch}"
                )
                next_progress = now + self.pacing.progress_interval
            self.clock.sleep(min(self.pacing.poll_interval, max(deadline - now, 0.05)))

    def check_proposed(self, env: Environment, proposed: str | None, sha: str) -> None:
        """MergeRefused when ``-next`` no longer holds the promotion ``sha`` (GitOps Promoter's
        merge of the active branch into it keeps the tree, so it is still the promotion)."""
        branch = next_branch(env)
        if proposed is None:
            raise MergeRefused(
                f"{env.name}: {branch} was deleted without being merged into {env.gitops_branch}; "
                f"the promotion {sha[:12]} was refused"
            )
        if proposed != sha and tree_at(self.platform, proposed, env.gitops_path) != tree_at(
            self.platform, sha, env.gitops_path
        ):
            raise MergeRefused(
                f"{env.name}: {branch} was moved to {proposed[:12]}, which does not hold the promotion "
                f"{sha[:12]}, without it being merged into {env.gitops_branch}; the promotion was refused"
            )
