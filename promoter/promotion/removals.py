"""The removal guard: a promotion, a scheduling run or a wave that would remove assignments
(a deployment target's folder on a cluster type) from what the platform branch holds stops
before anything is pushed, exit 2, when it removes all that the environment or wave holds or
more than the environment's ``removalLimit``. ``--allow-removal`` lets a wanted removal
through, and its PR body then lists every removed assignment first.

With Flux's ``prune: true`` a removed folder deletes what the clusters run, so an edit that
makes a selector match nothing must not ship quietly. The comparison is with the platform
branch itself (its cluster-type folders), so a first render removes nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from promoter.controlplane.repo import ControlPlane
from promoter.errors import InputError, PromoterError
from promoter.model import Environment, EnvironmentObjects, MainObjects, RemovalLimit
from promoter.platform.plan import TreeReader
from promoter.platform.provenance import Provenance
from promoter.platform.repo import PlatformRepo
from promoter.promotion.waves import Step
from promoter.scheduling.removed import Inputs, causes

SHOWN = 5  # removed assignments named in the one line
ALLOW = "--allow-removal"


class RemovalRefused(InputError):
    """A promotion would remove assignments past the removal guard (exit 2, nothing pushed)."""


@dataclass(frozen=True)
class Removals:
    """The assignments one step would remove from the folders it replaces."""

    environment: str
    wave: str  # '' : the whole environment
    held: int  # the assignments those folders hold now
    removed: tuple[str, ...]  # ``<cluster-type>/<workload>-<target>``, sorted
    limit: RemovalLimit
    causes: tuple[str, ...]

    @property
    def refused(self) -> bool:
        return not self.limit.allows(len(self.removed), self.held)

    @property
    def where(self) -> str:
        return f"{self.environment}, wave {self.wave}" if self.wave else self.environment

    def what(self) -> str:
        """``all 3 assignments (a, b, c)`` or ``2 of its 9 assignments (a, b)``."""
        count = len(self.removed)
        shown = ", ".join(self.removed[:SHOWN]) + (f" and {count - SHOWN} more" if count > SHOWN else "")
        plural = "" if self.held == 1 else "s"
        amount = f"all {count}" if count == self.held else f"{count} of its {self.held}"
        return f"{amount} assignment{plural} ({shown})"

    def why(self) -> str:
        return "; ".join(self.causes) if self.causes else "the render no longer produces them"

    def rule(self) -> str:
        if len(self.removed) == self.held:
            return "all of them"
        return f"more than its removalLimit of {self.limit} allows"

    def refusal(self) -> str:
        """The one line of a refused removal."""
        return (
            f"{self.where}: would remove {self.what()}, {self.rule()}, because {self.why()}; "
            f"nothing was pushed ({ALLOW} lets a wanted removal through)"
        )

    def warning(self) -> str:
        """What ``validate`` and ``diff`` say before anyone promotes."""
        verdict = f" (a promotion stops here without {ALLOW}: {self.rule()})" if self.refused else ""
        return f"warning: {self.where}: removes {self.what()}, because {self.why()}{verdict}"

    def body(self) -> str:
        """The top of the PR body of an allowed removal: every removed assignment."""
        lines = [
            f"**Removes {len(self.removed)} assignment{'' if len(self.removed) == 1 else 's'}** ({self.why()}):",
            "",
        ]
        lines += [f"- `{path}`" for path in self.removed]
        return "\n".join(lines) + "\n\n"


def assignment_folders(files: Iterable[str], scope: set[str]) -> set[str]:
    """``<cluster-type>/<folder>`` of every rendered file in the cluster types of ``scope``."""
    out = set()
    for path in files:
        parts = path.split("/", 2)
        if len(parts) == 3 and parts[0] in scope:
            out.add(f"{parts[0]}/{parts[1]}")
    return out


@dataclass(frozen=True)
class Scene:
    """One step's render against the platform branch it would land on."""

    main: MainObjects
    env: Environment
    objects: EnvironmentObjects
    files: Mapping[str, bytes]
    base: str | None
    previous: Provenance | None
    scope: frozenset[str]  # the cluster-type folders the step replaces
    wave: str = ""


def find(cp: ControlPlane, reader: TreeReader, scene: Scene) -> Removals | None:
    """The assignments the step removes, with their causes; None when it removes none."""
    held = reader.assignment_folders(scene.base, scene.env.gitops_path, scene.scope)
    removed = held - assignment_folders(scene.files, set(scene.scope))
    if not removed:
        return None
    inputs = Inputs(scene.env.name, scene.main, scene.objects, *_rendered_from(cp, scene))
    return Removals(
        scene.env.name,
        scene.wave,
        len(held),
        tuple(sorted(removed)),
        scene.env.removal_limit,
        tuple(causes(removed, inputs)),
    )


def _rendered_from(cp: ControlPlane, scene: Scene) -> tuple[MainObjects | None, EnvironmentObjects | None]:
    """The objects the platform branch was rendered from, to name what changed; None for what
    the provenance does not name or this clone cannot read (the causes are then worded from
    the objects of now alone)."""
    previous = scene.previous
    if previous is None:
        return None, None
    try:
        old_main = cp.main(previous.main_commit) if previous.main_commit else None
    except PromoterError:
        old_main = None
    try:
        old_objects = cp.environment(scene.env, previous.env_commit) if previous.env_commit else None
    except PromoterError:
        old_objects = None
    return old_main, old_objects


def judge(
    found: Removals | None, *, allow: bool, dry_run: bool, say: Callable[[str], None]
) -> Removals | None:
    """Refuse a removal past the guard (a dry run warns); say what an allowed one removes."""
    if found is None:
        return None
    if found.refused and not allow:
        if not dry_run:
            raise RemovalRefused(found.refusal())
        say(found.warning())
        return found
    allowed = f" ({ALLOW})" if found.refused else ""
    say(f"{found.where}: removes {found.what()}, because {found.why()}{allowed}")
    return found


def preflight(
    cp: ControlPlane,
    platform: PlatformRepo,
    scene: Scene,
    steps: Iterable[Step],
    cluster_types: Iterable[str],
) -> None:
    """Before the run pushes anything: no step of the environment removes past the guard, as
    its platform branch is now (``scene`` without base and scope; ``cluster_types``: the
    environment's render). Each step checks again when it plans, onto the branch as it is then."""
    env = scene.env
    base = platform.fetch([env.gitops_branch])[env.gitops_branch]
    if base is None:
        return
    previous = platform.provenance(base, env.gitops_path)
    newer = previous.main_commit if previous else None
    if newer and newer != scene.main.commit and cp.git.is_ancestor(scene.main.commit, newer):
        return  # the promotion stops as superseded, removing nothing
    before = set(previous.cluster_types) if previous else set()
    gone = before - set(cluster_types)
    for step in steps:
        scope = set(step.cluster_types) | (gone if step.last else set())
        found = find(
            cp,
            platform.reader,
            replace(scene, base=base, previous=previous, scope=frozenset(scope), wave=step.name),
        )
        if found is not None and found.refused:
            raise RemovalRefused(found.refusal())


def warnings(
    cp: ControlPlane,
    platform: PlatformRepo,
    scene: Scene,
    steps: Iterable[Step],
    cluster_types: Iterable[str],
) -> list[str]:
    """What ``validate`` and ``diff`` say: the removals of the environment against its platform
    branch at ``scene.base``, as a whole and (when it rolls out in waves) per wave."""
    env, base = scene.env, scene.base
    previous = platform.provenance(base, env.gitops_path) if base else None
    before = set(previous.cluster_types) if previous else set()
    whole = frozenset(before | set(cluster_types))
    scenes = [replace(scene, previous=previous, scope=whole)]
    waved = [s for s in steps if not s.whole]
    for step in waved if len(waved) > 1 else []:
        scope = set(step.cluster_types) | ((before - set(cluster_types)) if step.last else set())
        scenes.append(replace(scene, previous=previous, scope=frozenset(scope), wave=step.name))
    found = [find(cp, platform.reader, s) for s in scenes]
    return [r.warning() for r in found if r is not None]
