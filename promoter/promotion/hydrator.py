"""A promotion step's side of the hydrator contract (docs/hydrator.md), mixed into
``Attempts``: the contract's files planned into the tree (``spec.hydrator.metadata``), the
``refs/notes/hydrator.metadata`` note on what holds each render, and ``merge: next``'s push to
the ``-next`` branch and its wait for the merge.

The root ``hydrator.metadata`` names the main commit, so it would differ on every promotion:
it is written only into a tree that changes anyway (the first plan, without it, decides), as
Argo CD commits only when a manifest changed. A render the branch already holds makes no
commit; the note alone says that this main commit was rendered there.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping
from dataclasses import dataclass

from promoter.controlplane.hydrator import next_branch
from promoter.controlplane.repo import ControlPlane
from promoter.errors import MergeRefused
from promoter.model import Environment, MainObjects
from promoter.platform.hydrator import (
    METADATA,
    NOTES_REF,
    DryCommit,
    add_note,
    dry_commit,
    folder_metadata,
    hydrated,
    metadata,
    readme,
)
from promoter.platform.plan import TreePlan
from promoter.platform.provenance import Provenance
from promoter.platform.repo import PlatformRepo
from promoter.promotion.landing import Landing
from promoter.promotion.nextbranch import NextLanding, NextPending, proposed_description, tree_at
from promoter.promotion.unchanged import Unchanged
from promoter.promotion.waiting import GATES, Wait, Waiting
from promoter.promotion.waves import Step, pending_description


@dataclass(frozen=True)
class Tree:
    """What a plan is made of: the platform branch's commit, the rendered files, the cluster-type
    folders they own, the provenance, and the folders a wave changes (None: all)."""

    base: str | None
    files: Mapping[str, bytes]
    managed: tuple[str, ...]
    provenance: Provenance
    only: tuple[str, ...] | None = None


def plan_tree(
    cp: ControlPlane, platform: PlatformRepo, main: MainObjects, env: Environment, tree: Tree
) -> TreePlan:
    """The plan of ``tree`` on ``env``'s platform branch; with ``spec.hydrator.metadata``, with
    the contract's files (a promotion's, and ``diff``'s, so it shows what a promotion would write)."""
    root, base, provenance = env.gitops_path, tree.base, tree.provenance

    def plan(files: Mapping[str, bytes]) -> TreePlan:
        return platform.plan(base, root, files, tree.managed, provenance, tree.only)

    if not main.pipeline.hydrator_metadata:
        return plan(tree.files)
    drys: dict[str, DryCommit] = {}

    def dry(sha: str) -> DryCommit:
        if sha not in drys:
            drys[sha] = dry_commit(cp.git, sha, cp.origin_url)
        return drys[sha]

    def written(folder: str) -> tuple[bytes, bytes]:
        """A folder's files, naming the main commit it holds (a wave's, or in the scheduling
        flow the one its provenance names), not always the newest."""
        held = provenance.folder(folder)
        sha = held.main_commit if held is not None and held.main_commit else main.commit
        commands = (f"promoter render --env {env.name} --commit {sha} --out rendered",)
        return folder_metadata(dry(sha), commands), readme(dry(sha), commands)

    with_files = hydrated(platform.reader, base, root, tree.files, written)
    first = plan(with_files)
    if not first.changed:
        return first
    with_files[METADATA] = metadata(dry(main.commit))
    return plan(with_files)


class Hydrating(Unchanged, ABC):
    """The contract's files, notes and ``-next`` branch of a step (see the module doc)."""

    cp: ControlPlane
    platform: PlatformRepo
    landing: Landing

    def _plan_tree(
        self,
        main: MainObjects,
        env: Environment,
        base: str | None,
        files: Mapping[str, bytes],
        managed: tuple[str, ...],
        provenance: Provenance,
        only: tuple[str, ...] | None,
    ) -> TreePlan:
        """The step's tree plan; with ``spec.hydrator.metadata``, with the contract's files."""
        return plan_tree(self.cp, self.platform, main, env, Tree(base, files, managed, provenance, only))

    def _note(self, main: MainObjects, env: Environment, commit: str) -> None:
        """Note ``commit`` as holding the render of the main commit (as Argo CD notes each
        hydrated commit), when the Pipeline asks for the contract."""
        if not main.pipeline.hydrator_metadata or self.opts.dry_run:
            return
        platform = self.platform
        if platform.remote_call(
            f"note on {NOTES_REF} of {platform.url}",
            lambda: add_note(platform.git, platform.url, commit, main.commit),
        ):
            self.out.say(f"{env.name}: noted {commit[:12]} as the render of {main.commit[:12]} ({NOTES_REF})")

    def _note_unchanged(self, main: MainObjects, env: Environment, base: str) -> None:
        """A render the branch already holds: no commit, a note (what GitOps Promoter reads on
        the ``-next`` branch's head for ``merge: next``, which is made to hold it first)."""
        if not main.pipeline.hydrator_metadata or self.opts.dry_run:
            return
        self._note(main, env, self._proposed_at(main, env, base) if env.merge == "next" else base)

    def _proposed_at(self, main: MainObjects, env: Environment, base: str) -> str:
        """The ``-next`` head, moved to ``base`` unless it already holds the tree ``base`` holds
        (an older main commit's proposal there is superseded, and its status says so)."""
        branch, root = next_branch(env), env.gitops_path
        proposed = self.platform.fetch([branch])[branch]
        if proposed is not None and tree_at(self.platform, proposed, root) == tree_at(
            self.platform, base, root
        ):
            return proposed
        self.landing.push_branch(branch, proposed, base)
        self.out.say(f"{env.name}: {branch} set to {base[:12]}, which already holds this render")
        older = self.platform.provenance(proposed, root) if proposed else None
        context = self.statuses.context_of(env)
        if older and older.main_commit and self.statuses.state_of(older.main_commit, context) == "pending":
            what = f"superseded by {main.commit[:12]}"
            self.statuses.post(older.main_commit, context, "error", what, self.opts.run_url)
        return base

    def _check_proposal(self, main: MainObjects, env: Environment, step: Step, existing: str | None) -> None:
        """``merge: next``: a ``-next`` branch that an earlier run pushed this promotion to (its
        status waits for the merge) and that no longer holds it, while the environment's branch
        does not either: refused by whoever deleted or replaced it, not pushed again."""
        if env.merge != "next" or self._phase(main, env, step) != "merge":
            return
        theirs = self.platform.provenance(existing, env.gitops_path) if existing else None
        if theirs is None or theirs.main_commit != main.commit:
            what = "was deleted" if existing is None else f"was moved to {existing[:12]}"
            raise MergeRefused(
                f"{env.name}: {next_branch(env)} {what} without being merged into {env.gitops_branch}; "
                f"the promotion of {main.commit[:12]} was refused"
            )

    def _already_proposed(self, env: Environment, existing: str | None, sha: str) -> bool:
        """``merge: next``: the ``-next`` head holds the tree of the commit just planned (GitOps
        Promoter may have merged the active branch into it): it stays."""
        root = env.gitops_path
        return (
            env.merge == "next"
            and existing is not None
            and tree_at(self.platform, existing, root) == tree_at(self.platform, sha, root)
        )

    def _land_next(self, main: MainObjects, env: Environment, step: Step, sha: str) -> str:
        """``merge: next``: the environment branch's head once it holds ``sha``; Waiting when
        the run does not wait for the merge."""
        context, prefix = self.statuses.context_of(env), step.prefix(env.name)
        what = pending_description(step, proposed_description(env))
        self.statuses.post(main.commit, context, "pending", what, self.opts.run_url)
        self.out.say(f"{prefix}: waiting for {next_branch(env)} to be merged into {env.gitops_branch}")
        lander = NextLanding(self.platform, self.clock, self.out, self.opts.pacing)
        try:
            head = lander.wait(env, sha, self._merge_deadline(main, env, step), prefix)
        except NextPending as pending:
            since = self._since(main, env, step, "merge")
            message = f"{prefix}: waiting for {pending}"
            raise Waiting(Wait("merge", env.name, step.name, since, None, message)) from None
        what = pending_description(step, f"merged {head[:12]}; {GATES}")
        self.statuses.post(main.commit, context, "pending", what, self.opts.run_url)
        self.out.say(f"{prefix}: {env.gitops_branch} holds it at {head[:12]}")
        return head
