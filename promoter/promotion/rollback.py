"""Finding the last good state of an environment and writing the commit that restores it.

An environment's history is its platform branch: each promotion leaves a provenance file naming
the main commit it was rendered from, and the main commit's ``promoter/<env>`` status says
whether that promotion was healthy. The last good state is the newest first-parent commit
whose main commit succeeded there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from promoter.clock import Clock
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.errors import PromoterError, PromotionFailed, UsageError
from promoter.gitcmd import require_revision
from promoter.model import Environment, MainObjects, rollback_branch
from promoter.platform.objects import blob_id
from promoter.platform.plan import TreePlan
from promoter.platform.provenance import PROVENANCE
from promoter.platform.repo import PlatformRepo
from promoter.promotion.landing import Landing
from promoter.promotion.options import Options
from promoter.promotion.statuses import Statuses

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


@dataclass(frozen=True)
class RollbackPlan:
    """A rollback by hand, before anything is written: the environment's platform head, the
    main commit deployed there, the state to restore and the files that would change."""

    env: Environment
    head: str
    current: str | None
    target: GoodState
    files: list[str]


def restore_folders(
    platform: PlatformRepo,
    env: Environment,
    head: str,
    good: GoodState,
    folders: tuple[str, ...],
    message: str,
) -> str:
    """A commit on top of ``head`` whose cluster-type ``folders`` are exactly as at ``good``
    (a failed wave's), everything else as at ``head``; the provenance says so per folder."""
    now = platform.listing(head, env.gitops_path)
    then = platform.listing(good.platform_sha, env.gitops_path)
    mine = set(folders)

    def inside(path: str) -> bool:
        return path.split("/", 1)[0] in mine

    entries = {p: e for p, e in now.items() if not inside(p)}
    entries.update({p: e for p, e in then.items() if inside(p)})
    inline = {}
    held = platform.provenance(head, env.gitops_path)
    if held is not None:
        before = platform.provenance(good.platform_sha, env.gitops_path)
        back = {ct: f for ct in folders if before is not None and (f := before.folder(ct)) is not None}
        kept = {ct: f for ct in held.cluster_types if (f := held.folder(ct)) is not None}
        text = replace(held, folders={**kept, **back}).text()
        inline[PROVENANCE] = text
        entries[PROVENANCE] = ("100644", blob_id(text))
    return platform.commit(TreePlan(entries, inline), env.gitops_path, [head], message)


class Rollbacks:
    """Restoring an environment to its last healthy promotion, landed by its own merge policy."""

    def __init__(
        self,
        control_plane: ControlPlane,
        platform: PlatformRepo,
        statuses: Statuses,
        landing: Landing,
        console: Console,
        clock: Clock,
        options: Options,
    ) -> None:
        self.cp = control_plane
        self.platform = platform
        self.statuses = statuses
        self.landing = landing
        self.out = console
        self.clock = clock
        self.opts = options

    def after_failure(
        self, main: MainObjects, env: Environment, failed_sha: str, folders: tuple[str, ...] | None = None
    ) -> str:
        """After failed gates: restore the last good state (onFailure: rollback), of the whole
        environment or (a failed wave) of ``folders`` only. A sentence for the failure message;
        never raises, since the gate failure is what matters."""
        try:
            head = self.platform.fetch([env.gitops_branch])[env.gitops_branch] or failed_sha
            good = last_good(
                self.platform, env, head, lambda m: self.statuses.succeeded(m, env), {main.commit}
            )
            if good is None:
                return "nothing to roll back to (no earlier healthy promotion)"
            return self._restore(env, head, good, f"{main.commit[:12]} failed its gates", folders)
        except PromoterError as err:
            return f"rollback failed: {err}"

    def plan(self, environment: str, to: str | None = None) -> RollbackPlan:
        """What ``by_hand`` would do, pushing nothing (``promoter rollback --dry-run``)."""
        env = self.cp.main(self.cp.resolve(None)).pipeline.environment(environment)
        if env is None:
            raise UsageError(f"--env {environment}: the Pipeline on main has no such environment")
        head = self.platform.fetch([env.gitops_branch])[env.gitops_branch]
        if head is None:
            raise PromotionFailed(f"{environment}: platform branch {env.gitops_branch} does not exist")
        current = deployed_main(self.platform, env, head)
        good = self._target(env, head, current, to)
        now, then = (
            self.platform.listing(head, env.gitops_path),
            self.platform.listing(good.platform_sha, env.gitops_path),
        )
        changed = sorted(p for p in now.keys() | then.keys() if now.get(p) != then.get(p))
        return RollbackPlan(env, head, current, good, changed)

    def by_hand(self, environment: str, to: str | None = None) -> GoodState:
        """``promoter rollback``: restore an environment to a known-good state by hand and hold
        the main commit that was there."""
        planned = self.plan(environment, to)
        env, head, current, good = planned.env, planned.head, planned.current, planned.target
        self.out.say(
            f"{environment}: rolling back to main {good.main_commit[:12]} (platform {good.platform_sha[:12]})"
        )
        self.out.say(f"{environment}: {self._restore(env, head, good, 'rolled back by hand')}")
        if current and current != good.main_commit:
            self.statuses.post(
                current,
                self.statuses.context_of(env),
                "failure",
                f"rolled back by hand to {good.main_commit[:12]}",
                self.opts.run_url,
            )
        return good

    def _target(self, env: Environment, head: str, current: str | None, to: str | None) -> GoodState:
        if to is None:
            skip = {current} if current else set()
            good = last_good(self.platform, env, head, lambda m: self.statuses.succeeded(m, env), skip)
            if good is None:
                raise PromotionFailed(f"{env.name}: no earlier healthy promotion to roll back to")
            return good
        require_revision(to, "--to")
        sha = self.platform.git.commit_of(to)
        if sha is not None and self.platform.git.is_ancestor(sha, head):
            found = deployed_main(self.platform, env, sha)
            return GoodState(sha, found or "unknown")
        main = self.cp.git.commit_of(to)
        good = find_state(self.platform, env, head, main) if main else None
        if good is None:
            raise UsageError(
                f"--to {to}: neither a commit of {env.gitops_branch} nor a main commit promoted to {env.name}"
            )
        return good

    def _restore(
        self, env: Environment, head: str, good: GoodState, why: str, folders: tuple[str, ...] | None = None
    ) -> str:
        """Write and land (by the environment's policy) the commit that restores ``good`` (the
        whole environment folder, or only the cluster-type ``folders`` of a wave)."""
        what = f" {', '.join(folders)}" if folders else ""
        title = f"Roll back {env.name}{what} to {good.main_commit[:7]}: {why}"
        message = f"{title}\n\nRestores {env.gitops_branch}{what} as of {good.platform_sha}.\n"
        if folders:
            sha = restore_folders(self.platform, env, head, good, folders, message)
        else:
            sha = restore_commit(self.platform, env, head, good, message)
        branch = rollback_branch(env.name)
        if env.merge != "direct":
            self.landing.push_branch(branch, self.platform.fetch([branch])[branch], sha)
        landed = self.landing.land(
            env,
            branch=branch,
            base=head if env.merge == "direct" else None,
            sha=sha,
            title=title,
            body=f"{title}.\n\nRestores `{env.gitops_branch}`{what} as of `{good.platform_sha}`.\n",
            deadline=self.clock.now() + env.timeout,
            wait_for_human=False,
        )
        if landed.pr is None:
            return f"rolled back to {good.main_commit[:12]} with {sha[:12]}"
        if landed.merge_sha is None:
            return f"rollback to {good.main_commit[:12]} waits for a human to merge {landed.pr.url}"
        return f"rolled back to {good.main_commit[:12]} with {landed.merge_sha[:12]} ({landed.pr.url})"
