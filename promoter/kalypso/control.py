"""A Kalypso control plane, opened from the promoter's control-plane repo: its environments, and
one environment rendered as Kalypso's scheduler would render it, with no management cluster.

The main commit an environment renders is its branch's BaseRepo commit (as Kalypso's scheduler
reads it), unless one is given; the workload repos are fetched at their branch heads (as Kalypso's
Flux follows them) and their commits are kept in ``Render.workload_commits``."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from promoter.controlplane.repo import ControlPlane
from promoter.errors import ConfigError, UsageError
from promoter.kalypso.generation import Generation, generation_from, lenient_from
from promoter.kalypso.gitops import (
    GitOpsState,
    next_tree,
    read_gitops,
    read_gitops_file,
    scheduler_tree,
    tree_changes,
)
from promoter.kalypso.loading import (
    FetchedWorkloads,
    KalypsoBranch,
    KalypsoMain,
    fetch_workloads,
    load_branch,
    load_main,
    looks_like_kalypso,
)
from promoter.kalypso.objects import GitOpsRepo, KEnvironment
from promoter.kalypso.render import TRACKING, Renderer, render_tree
from promoter.kalypso.schedule import Placement, deployment_targets, flux_labels, schedule
from promoter.model import Workload
from promoter.rendering.memo import cache_root


@dataclass(frozen=True)
class Render:
    """One environment rendered: the files (relative to the GitOpsRepo path) and what made them."""

    environment: str
    main: KalypsoMain
    branch: KalypsoBranch
    files: dict[str, bytes]
    placements: dict[str, list[Placement]]
    workload_commits: dict[str, str] = field(default_factory=dict)  # registration -> commit

    @property
    def count(self) -> int:
        return sum(map(len, self.placements.values()))


@dataclass(frozen=True)
class Planned:
    """An environment rendered, and its GitOps branch before and after."""

    render: Render
    gitops: GitOpsRepo
    before: GitOpsState
    after: dict[str, bytes]

    def changes(self) -> dict[str, tuple[int, int, int]]:
        return tree_changes(self.before.files, self.after)


class KalypsoControlPlane:
    def __init__(
        self, cp: ControlPlane, naming: Generation = "head", cache: Path | None = None, lenient: bool = False
    ) -> None:
        self.cp = cp
        self.naming = naming  # the generation of Kalypso's scheduler rendered as
        # render what Kalypso's scheduler fails on (two policies on one pair, an environment
        # name with "-") promoter's way instead of refusing it
        self.strict = naming != "2023" and not lenient
        self.cache = cache or cache_root() / "kalypso-workloads"
        self._fetched: dict[str, FetchedWorkloads] = {}

    @staticmethod
    def detect(cp: ControlPlane, commit: str) -> bool:
        return looks_like_kalypso(cp.git, commit)

    def main(self, commit: str) -> KalypsoMain:
        return load_main(self.cp.git, commit)

    def environment(self, main: KalypsoMain, name: str) -> KEnvironment:
        env = main.environments.get(name)
        if env is None:
            known = ", ".join(sorted(main.environments)) or "none"
            raise UsageError(f"--env {name}: no such environment (main's .environments/ has {known})")
        return env

    def branch(self, env: KEnvironment, commit: str | None = None) -> KalypsoBranch:
        ref = env.control_plane
        head = self.cp.resolve(commit) if commit else self.cp.branch_head(ref.branch)
        if head is None:
            raise ConfigError(
                f"spec.controlPlane.branch: environment {env.name!r} names branch {ref.branch!r}, "
                "which the control-plane repo does not have",
                file=env.source.file,
                line=ref.line,
            )
        branch = load_branch(self.cp.git, ref.branch, head, ref.path)
        return at_root(branch) if self.naming != "2023" else branch

    def render(self, env_name: str, commit: str | None = None, env_commit: str | None = None) -> Render:
        """Render ``env_name``: main's Environments at ``commit`` (default: the main branch
        head), and the main commit to render is ``commit`` if given, else the BaseRepo's; the
        environment branch at its head, or at ``env_commit``."""
        head = self.cp.resolve(commit)
        env = self.environment(self.main(head), env_name)
        branch = self.branch(env, env_commit)
        main_commit = head if commit is not None else self.base_commit(env, branch)
        main = self.main(main_commit)
        fetched = [
            self.fetch(r.name, main) for r in sorted(main.registrations.values(), key=lambda r: r.name)
        ]
        if self.strict and "-" in env.name and fetched:
            raise _dashed(env, fetched[0].registration.name)
        targets = deployment_targets(self.workloads(fetched, env.name), env.name)
        placements = schedule(
            targets,
            branch.cluster_types,
            branch.policies,
            branch.configmaps,
            env.name,
            self.naming,
            self.strict,
        )
        renderer = Renderer(main.templates, self.naming)
        renderer.compile_all()
        files = render_tree(placements, renderer, main_commit, self.naming)
        commits = {f.registration.name: f.commit for f in fetched}
        return Render(env.name, main, branch, files, placements, commits)

    def workloads(self, fetched: list[FetchedWorkloads], environment: str) -> list[Workload]:
        """The Workloads as the scheduler sees them: with the current scheduler, with the labels
        Flux wrote on them when it applied their registration's repo (they win over the file's)."""
        if self.naming == "2023":
            return [w for f in fetched for w in f.workloads]
        return [
            replace(w, labels={**w.labels, **flux_labels(environment, f.registration.name)})
            for f in fetched
            for w in f.workloads
        ]

    def plan(
        self, env_name: str, commit: str | None, env_commit: str | None = None, deployed: bool = False
    ) -> Planned:
        """What the scheduler's commit would change on the environment's GitOps branch: with
        ``deployed``, rendering the main commit that branch tracks (the scheduling flow)."""
        first = self.render(env_name, commit, env_commit)
        gitops = first.branch.gitops
        if gitops is None:
            raise ConfigError(
                f"environment branch {first.branch.branch!r} has no GitOpsRepo: where it renders to is unknown",
                file=f"{first.branch.branch}:",
            )
        state = read_gitops(gitops, self.cache.parent / "kalypso-gitops")
        rendered = first
        tracked = state.files.get(TRACKING, b"").decode("utf-8", "replace").strip()
        if deployed and tracked and tracked != first.main.commit:
            rendered = self.render(env_name, tracked, env_commit)
        if self.naming == "2023":
            return Planned(rendered, gitops, state, next_tree(state.files, rendered.files))
        return Planned(rendered, gitops, state, scheduler_tree(state.files, rendered.files, layout(rendered)))

    def pr_labels(self, rendered: Render) -> tuple[str, ...]:
        """The labels of the PR that lands ``rendered``: ``promoted`` when the tracked main
        commit changes on the GitOps branch (``addPromotedCommitId``)."""
        gitops, tracked = rendered.branch.gitops, rendered.files.get(TRACKING)
        if gitops is None or not tracked:
            return ()
        there = read_gitops_file(gitops, self.cache.parent / "kalypso-gitops", TRACKING)
        return ("promoted",) if there != tracked else ()

    def check_base(self, rendered: Render) -> None:
        """The environment's BaseRepo, when it has one, pins a commit the repo has."""
        env = rendered.main.environments.get(rendered.environment)
        if env is not None and rendered.branch.base is not None:
            self.base_commit(env, rendered.branch)

    def base_commit(self, env: KEnvironment, branch: KalypsoBranch) -> str:
        if branch.base is None:
            raise ConfigError(
                f"environment {env.name!r}: branch {branch.branch!r} has no BaseRepo, so which main commit "
                "it runs is unknown; give --commit",
                file=env.source.file,
                line=env.source.line,
            )
        base = branch.base
        try:
            return self.cp.git.commit_of(base.commit) or self.cp.resolve(base.commit)
        except UsageError as err:
            raise ConfigError(
                f"spec.commit: main commit {base.commit} is not in the control-plane repo",
                file=base.source.file,
                line=base.source.line,
            ) from err

    def fetch(self, name: str, main: KalypsoMain) -> FetchedWorkloads:
        registration = main.registrations[name]
        key = f"{registration.workload.repo}\n{registration.workload.branch}\n{registration.workload.path}"
        if key not in self._fetched or self._fetched[key].registration != registration:
            self._fetched[key] = fetch_workloads(registration, self.cache)
        return self._fetched[key]


def _dashed(env: KEnvironment, registration: str) -> ConfigError:
    """Kalypso's Workload controller finds a Workload's workspace by cutting its Flux label
    ``<environment>-<registration>`` at the first ``-`` (``getWorkspaceLabel``)."""
    rest = f"{env.name}-{registration}".split("-", 1)[1]
    return ConfigError(
        f"environment {env.name!r}: Kalypso's scheduler cuts a Workload's Flux label "
        f"'{env.name}-{registration}' at the first '-' and looks for the WorkloadRegistration {rest!r}, "
        "which does not exist, so the Workload's reconcile fails and nothing of this environment is "
        "scheduled (controllers/workload_controller.go getWorkspaceLabel); name the environment without "
        "'-' (or pass --kalypso-lenient to render it promoter's way)",
        file=env.source.file,
        line=env.source.line,
    )


def at_root(branch: KalypsoBranch) -> KalypsoBranch:
    """The branch with its GitOpsRepo's ``spec.path`` cleared: since 2024 the scheduler writes
    at the repo's root (``scheduler/githubrepo.go`` ``getTree`` and ``NewGithubRepo`` never read
    the path)."""
    gitops = branch.gitops
    if gitops is None or not gitops.ref.path:
        return branch
    return replace(branch, gitops=replace(gitops, ref=replace(gitops.ref, path="")))


def layout(rendered: Render) -> dict[str, set[str]]:
    """Each cluster type of the environment and its deployment targets."""
    return {ct: {p.target.name for p in placed} for ct, placed in rendered.placements.items()}


def open_kalypso(
    cp: ControlPlane,
    commit: str | None,
    generation: str | None = None,
    naming: str | None = None,
    lenient: bool = False,
) -> KalypsoControlPlane | None:
    """The Kalypso view of ``cp`` if main (at ``commit``, default its head) is a Kalypso control
    plane with no promoter Pipeline; else None. ``generation`` is ``--kalypso-generation``,
    ``naming`` the old ``--kalypso-naming``, ``lenient`` ``--kalypso-lenient``."""
    head = cp.resolve(commit)
    if cp.git.read_file(head, "promoter.yaml") is not None:
        return None
    if not KalypsoControlPlane.detect(cp, head):
        return None
    return KalypsoControlPlane(
        cp, generation_from(os.environ, generation, naming), lenient=lenient or lenient_from(os.environ)
    )
