"""Finding the last good state of an environment and writing the commit that restores it.

An environment's history is its platform branch: each promotion leaves a provenance file naming
the main commit it was rendered from, and the main commit's ``promoter/<env>`` status says
whether that promotion was healthy. The last good state is the newest first-parent commit
whose main commit succeeded there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from promoter.errors import PromoterError, PromotionFailed, UsageError
from promoter.gitcmd import require_revision
from promoter.model import Environment, MainObjects, rollback_branch
from promoter.platform.plan import TreePlan
from promoter.platform.repo import PlatformRepo

if TYPE_CHECKING:
    from promoter.orchestrator import Orchestrator

HISTORY_LIMIT = 500


@dataclass(frozen=True)
class GoodState:
    platform_sha: str
    main_commit: str


def deployed_main(platform: PlatformRepo, env: Environment, sha: str) -> str | None:
    """The main commit whose render is on the platform branch at ``sha``."""
    found = platform.provenance(sha, env.gitops_path)
    return found.main_commit if found else None


def last_good(
    platform: PlatformRepo,
    env: Environment,
    head: str,
    succeeded: Callable[[str], bool],
    skip: set[str],
) -> GoodState | None:
    """The newest state on ``env``'s branch (first parents from ``head``) whose main commit
    succeeded there and is not in ``skip``."""
    history = platform.git.out(
        "rev-list", "--first-parent", f"--max-count={HISTORY_LIMIT}", operands=[head]
    ).split()
    for sha in history:
        main = deployed_main(platform, env, sha)
        if main and main not in skip and succeeded(main):
            return GoodState(sha, main)
    return None


def find_state(platform: PlatformRepo, env: Environment, head: str, main_commit: str) -> GoodState | None:
    """The newest state on ``env``'s branch rendered from ``main_commit``."""
    return last_good(platform, env, head, lambda m: m == main_commit, set())


def restore_commit(platform: PlatformRepo, env: Environment, head: str, good: GoodState, message: str) -> str:
    """A commit on top of ``head`` whose environment folder is exactly as at ``good``; files
    outside the folder stay as they are at ``head``."""
    entries = platform.listing(good.platform_sha, env.gitops_path)
    return platform.commit(TreePlan(entries, {}), env.gitops_path, [head], message)


class Rollbacks:
    """Restoring an environment, with the orchestrator's collaborators and status cache."""

    def __init__(self, orchestrator: Orchestrator) -> None:
        self.o = orchestrator

    def after_failure(self, main: MainObjects, env: Environment, failed_sha: str) -> str:
        """After failed gates: restore the last good state (onFailure: rollback). A sentence
        for the failure message; never raises, since the gate failure is what matters."""
        try:
            head = self.o.platform.fetch([env.gitops_branch])[env.gitops_branch] or failed_sha
            good = last_good(
                self.o.platform,
                env,
                head,
                lambda m: self.o.state_of(m, self.o.context_of(env)) == "success",
                {main.commit},
            )
            if good is None:
                return "nothing to roll back to (no earlier healthy promotion)"
            return self._restore(env, head, good, f"{main.commit[:12]} failed its gates")
        except PromoterError as err:
            return f"rollback failed: {err}"

    def by_hand(self, environment: str, to: str | None = None) -> GoodState:
        """``promoter rollback``: restore an environment to a known-good state by hand and hold
        the main commit that was there."""
        env = self.o.cp.main(self.o.cp.resolve(None)).pipeline.environment(environment)
        if env is None:
            raise UsageError(f"--env {environment}: the Pipeline on main has no such environment")
        head = self.o.platform.fetch([env.gitops_branch])[env.gitops_branch]
        if head is None:
            raise PromotionFailed(f"{environment}: platform branch {env.gitops_branch} does not exist")
        current = deployed_main(self.o.platform, env, head)
        good = self._target(env, head, current, to)
        self.o.out.say(
            f"{environment}: rolling back to main {good.main_commit[:12]} (platform {good.platform_sha[:12]})"
        )
        self.o.out.say(f"{environment}: {self._restore(env, head, good, 'rolled back by hand')}")
        if current and current != good.main_commit:
            self.o.post_status(
                current,
                self.o.context_of(env),
                "failure",
                f"rolled back by hand to {good.main_commit[:12]}",
                self.o.opts.run_url,
            )
        return good

    def _target(self, env: Environment, head: str, current: str | None, to: str | None) -> GoodState:
        if to is None:
            skip = {current} if current else set()
            good = last_good(
                self.o.platform,
                env,
                head,
                lambda m: self.o.state_of(m, self.o.context_of(env)) == "success",
                skip,
            )
            if good is None:
                raise PromotionFailed(f"{env.name}: no earlier healthy promotion to roll back to")
            return good
        require_revision(to, "--to")
        sha = self.o.platform.git.commit_of(to)
        if sha is not None and self.o.platform.git.is_ancestor(sha, head):
            found = deployed_main(self.o.platform, env, sha)
            return GoodState(sha, found or "unknown")
        main = self.o.cp.git.commit_of(to)
        good = find_state(self.o.platform, env, head, main) if main else None
        if good is None:
            raise UsageError(
                f"--to {to}: neither a commit of {env.gitops_branch} nor a main commit promoted to {env.name}"
            )
        return good

    def _restore(self, env: Environment, head: str, good: GoodState, why: str) -> str:
        """Write and merge (by the environment's policy) the commit that restores ``good``."""
        title = f"Roll back {env.name} to {good.main_commit[:7]}: {why}"
        sha = restore_commit(
            self.o.platform,
            env,
            head,
            good,
            f"{title}\n\nRestores {env.gitops_branch} as of {good.platform_sha}.\n",
        )
        if env.merge == "direct":
            self.o.platform.push({env.gitops_branch: (head, sha)})
            return f"rolled back to {good.main_commit[:12]} with {sha[:12]}"
        branch = rollback_branch(env.name)
        existing = self.o.platform.fetch([branch])[branch]
        self.o.platform.push({branch: (existing, sha)})
        pr = self.o.forge.open_pr(
            env,
            branch,
            sha,
            title,
            f"{title}.\n\nRestores `{env.gitops_branch}` as of `{good.platform_sha}`.\n",
        )
        if env.merge == "manual":
            return f"rollback to {good.main_commit[:12]} waits for a human to merge {pr.url}"
        merged = self.o.wait_merge(env, pr, sha, self.o.clock.now() + env.timeout, title)
        return f"rolled back to {good.main_commit[:12]} with {merged[:12]} ({pr.url})"
