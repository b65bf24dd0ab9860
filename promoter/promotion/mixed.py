"""The scheduling flow on an environment whose cluster-type folders hold different main commits
(a promotion in waves under way, or stopped in a wave; DESIGN section 11).

Each folder is rendered again with the main commit its own provenance says it holds, and the
new environment-branch values: the folders are grouped by main commit, the environment is
rendered once per distinct commit, and each folder is taken from the render of its own. Its
provenance keeps its main commit and its wave, so no commit reaches a wave it has not passed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace

from promoter.controlplane.repo import ControlPlane
from promoter.errors import PromotionFailed
from promoter.model import Environment, EnvironmentObjects
from promoter.platform.provenance import PROVENANCE, FolderProvenance, Provenance
from promoter.promotion.waves import Step
from promoter.rendering.tree import FolderUnion, Rendered, render_environment

_ADVICE = "promote a main commit through the waves first, or pass --commit to choose one for every folder"


@dataclass(frozen=True)
class Held:
    """Per cluster type of the environment branch: the main commit its folder holds, and the
    wave that landed it."""

    commits: Mapping[str, str]
    waves: Mapping[str, str]

    def groups(self) -> dict[str, list[str]]:
        """main commit -> the cluster types whose folders hold it (in the order of the first
        cluster type, sorted, that holds each)."""
        out: dict[str, list[str]] = {}
        for ct, commit in sorted(self.commits.items()):
            out.setdefault(commit, []).append(ct)
        return out

    def describe(self) -> str:
        """``1a2b3c4d5e6f (edge, large), 0f9e8d7c6b5a (small)``."""
        return ", ".join(f"{c[:12]} ({', '.join(types)})" for c, types in self.groups().items())

    def provenance(self, provenance: Provenance, cluster_types: tuple[str, ...]) -> Provenance:
        """``provenance`` (of a landing of ``cluster_types``) with each of those folders still
        holding its own main commit and wave; the environment commit is the new one."""
        folders = dict(provenance.folders)
        for ct in cluster_types:
            if ct in self.commits:
                folders[ct] = FolderProvenance(self.commits[ct], provenance.env_commit, self.waves[ct])
        return replace(provenance, folders=folders)


def held(
    env: Environment, previous: Provenance | None, steps: tuple[Step, ...], present: Collection[str]
) -> Held | None:
    """What the folders of ``env`` hold when they hold more than one main commit; None when
    they agree (the scheduling flow renders them all with one). ``present``: the folders on
    the platform branch. A folder there whose provenance names no main commit is unknown:
    PromotionFailed. A cluster type without a folder (new on the environment branch, or never
    landed) takes the main commit the other folders of its wave hold; PromotionFailed when they
    hold none or several."""
    if previous is None or not previous.folders:  # written without waves: one commit throughout
        return None
    known: dict[str, str] = {}
    waves: dict[str, str] = {}
    for step in steps:
        for ct in step.cluster_types:
            folder = previous.folder(ct)
            if folder is not None and folder.main_commit:
                known[ct], waves[ct] = folder.main_commit, folder.wave
            elif ct in present:
                raise PromotionFailed(
                    f"{env.name}: the folder of cluster type {ct!r} is on {env.gitops_branch}, but its "
                    f"provenance ({PROVENANCE}) names no main commit for it; the scheduling flow cannot "
                    f"tell which to render it with: {_ADVICE}"
                )
    if len(set(known.values())) < 2:
        return None
    commits = dict(known)
    for step in steps:
        theirs = {known[ct] for ct in step.cluster_types if ct in known}
        for ct in step.cluster_types:
            if ct in known:
                continue
            if len(theirs) != 1:
                where = f"wave {step.name!r}" if step.name else "the environment"
                found = ", ".join(sorted(c[:12] for c in theirs)) or "none"
                raise PromotionFailed(
                    f"{env.name}: cluster type {ct!r} has no folder yet and {where} holds {found}; "
                    f"the scheduling flow cannot tell which main commit to render it with: {_ADVICE}"
                )
            commits[ct], waves[ct] = next(iter(theirs)), step.name
    return Held(commits, waves)


def render_held(
    cp: ControlPlane,
    env: Environment,
    objects: EnvironmentObjects,
    newest: Rendered,
    newest_commit: str,
    held: Held,
) -> Rendered:
    """The environment rendered once per main commit its folders hold, with the environment
    branch's ``objects``, each folder taken from the render of its own commit. PromotionFailed,
    before anything is rendered, when a commit no longer exists in the control-plane repo."""
    groups = held.groups()
    for commit, types in groups.items():
        if cp.git.commit_of(commit) is None:
            raise PromotionFailed(
                f"{env.name}: the folders of {', '.join(types)} hold main commit {commit[:12]}, which no "
                f"longer exists in the control-plane repo; nothing was pushed: {_ADVICE}"
            )
    renders = {
        c: newest if c == newest_commit else render_environment(cp.main(c), objects, env.name) for c in groups
    }
    files = FolderUnion({ct: renders[c].files for ct, c in held.commits.items()})
    assignments = [
        a for c, r in renders.items() for a in r.assignments if held.commits.get(a.cluster_type.name) == c
    ]
    return Rendered(files, newest.cluster_types, assignments)
