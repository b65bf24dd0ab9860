"""Rendering an environment: schedule, then render every assignment of every cluster type into
``<cluster-type>/<workload>-<target>/<role>.yaml`` (pure; the memo and the forked worker beside
it make it fast)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from promoter.controlplane.objects import check_references
from promoter.model import EnvironmentObjects, MainObjects, Template, Versions
from promoter.rendering.builtins import all_templates, builtin_templates
from promoter.rendering.checks import ConfigKeyProblem, at_config_key
from promoter.rendering.memo import FolderMemo, folder_digests
from promoter.rendering.parallel import (
    PARALLEL_MIN_ASSIGNMENTS,
    can_fork,
    gc_paused,
    render_all,
    render_checked,
    render_in_two,
)
from promoter.rendering.render import ROLE_FILES, Renderer
from promoter.scheduling.environment import EnvironmentSchedule
from promoter.scheduling.targets import Assignment, target_name


@dataclass(frozen=True)
class Rendered:
    """The rendered tree of one environment, relative to its gitops path."""

    files: Mapping[str, bytes]
    cluster_types: tuple[str, ...]
    assignments: Sequence[Assignment]
    # The render owns the whole environment folder, as Kalypso's scheduler does: every other
    # folder is removed, dot-folders it writes into keep their other files (platform.owned).
    owns_tree: bool = False
    # What was rendered besides the control plane: a Kalypso registration -> its workload repo's commit.
    sources: Mapping[str, str] = field(default_factory=dict)
    # Labels for the promotion PR (Kalypso's `promoted`, when its tracked main commit changes).
    labels: tuple[str, ...] = ()
    # With owns_tree: a file of the branch in a folder two deep that the render writes into stays
    # unless rewritten, as Kalypso's scheduler since 2024 keeps a target folder's other files.
    keeps_unwritten: bool = False


class RenderedFolders(Mapping[str, bytes]):
    """Rendered files that know their top-level folders (cluster types). ``plan`` uses a
    folder's tree from the memo, when the render did not need to produce its bytes."""

    @abstractmethod
    def folders(self) -> list[str]:
        """The top-level folders, in order."""

    @abstractmethod
    def digest(self, folder: str) -> str | None:
        """The digest of everything the folder was rendered from, if known."""

    @abstractmethod
    def known_tree(self, folder: str) -> str | None:
        """The folder's tree from the memo, when its bytes were not rendered (yet)."""

    @abstractmethod
    def folder_files(self, folder: str) -> dict[str, bytes]:
        """The folder's files (paths relative to the environment root), rendered if need be."""


def render_environment(
    main: MainObjects, env: EnvironmentObjects, environment: str, renderer: Renderer | None = None
) -> Rendered:
    """Schedule and render one environment (``_render_environment``); a problem a config key
    causes is named at the user's ConfigMap line first, the template second."""
    try:
        return _render_environment(main, env, environment, renderer)
    except ConfigKeyProblem as err:
        assigned = EnvironmentSchedule(main, env, environment).assign(err.folder)
        sources = next((a.config_sources for a in assigned if a.name == err.target), ())
        raise at_config_key(err, sources, env.configmaps) from None


def _render_environment(
    main: MainObjects, env: EnvironmentObjects, environment: str, renderer: Renderer | None
) -> Rendered:
    """Schedule and render one environment: ``<cluster-type>/<workload>-<target>/<role>.yaml``.

    A cluster type whose inputs (its assignments, their config, the templates, this code) have
    the digest of an earlier render that succeeded is not rendered again (``FolderMemo``): its
    files are rendered only if someone reads them, and a commit reuses its tree. The result is
    the same either way, since rendering is deterministic."""
    templates = all_templates(main)
    check_references(main, env, builtin_templates())
    env = with_default_versions(env, main.pipeline.versions)
    renderer = renderer or Renderer(templates)
    memo = FolderMemo.default()
    with gc_paused():
        schedule = EnvironmentSchedule(main, env, environment)
        digests = folder_digests(main, env, environment, schedule, templates)
        known = {ct: tree for ct, digest in digests.items() if (tree := memo.get(digest))}
        todo = [ct for ct in schedule.pairs if ct not in known]
        assigned: dict[str, list[Assignment]] = {}
        files = _render_todo(renderer, templates, schedule, todo, assigned)

    def later(ct: str) -> dict[str, bytes]:
        return render_all(renderer, templates, schedule.assign(ct))

    rendered = RenderedFiles(schedule, files, known, digests, later)
    return Rendered(rendered, tuple(sorted(env.cluster_types)), _Assignments(schedule, assigned))


def _render_todo(
    renderer: Renderer,
    templates: dict[str, Template],
    schedule: EnvironmentSchedule,
    todo: list[str],
    assigned: dict[str, list[Assignment]],
) -> dict[str, bytes]:
    """The files of the cluster types ``todo`` (the memo knows none of them), checked: in two
    processes when there are enough assignments and the platform can fork, else here.
    ``assigned`` gets each cluster type's assignments."""
    if sum(len(schedule.pairs[ct]) for ct in todo) >= PARALLEL_MIN_ASSIGNMENTS and can_fork():
        return render_in_two(renderer, templates, schedule, todo, assigned)
    assigned.update({ct: schedule.assign(ct) for ct in todo})
    with renderer.watchdog():
        files, problem = render_checked(renderer, templates, [a for ct in todo for a in assigned[ct]])
    if problem is not None:  # a memo hit was checked when it rendered
        raise problem
    return files


def with_default_versions(env: EnvironmentObjects, default: Versions) -> EnvironmentObjects:
    """The cluster types, each release they do not declare taken from the Pipeline's
    ``spec.versions`` (what the checks judge their files by)."""
    if not default:
        return env
    cluster_types = {
        n: replace(ct, versions=ct.versions.over(default)) for n, ct in env.cluster_types.items()
    }
    return replace(env, cluster_types=cluster_types)


class RenderedFiles(RenderedFolders):
    """Every rendered path in order, with its content: rendered now, or, for a cluster type
    found in the memo, rendered on first read (``plan`` reads its tree from the memo instead)."""

    def __init__(
        self,
        schedule: EnvironmentSchedule,
        files: dict[str, bytes],
        known: dict[str, str],
        digests: dict[str, str],
        render: Callable[[str], dict[str, bytes]],
    ) -> None:
        self._paths = {
            ct: [f"{ct}/{target_name(w, t)}/{filename}" for _, w, t in pairs for _, filename in ROLE_FILES]
            for ct, pairs in schedule.pairs.items()
        }
        self._files = files
        self._known = dict(known)
        self._digests = digests
        self._render = render

    def folders(self) -> list[str]:
        return list(self._paths)

    def digest(self, folder: str) -> str | None:
        return self._digests.get(folder)

    def known_tree(self, folder: str) -> str | None:
        return self._known.get(folder)

    def folder_files(self, folder: str) -> dict[str, bytes]:
        if folder in self._known:
            self._files.update(self._render(folder))
            del self._known[folder]
        return {p: self._files[p] for p in self._paths.get(folder, ())}

    def __getitem__(self, path: str) -> bytes:
        if path not in self._files:
            folder = path.split("/", 1)[0]
            if folder not in self._known or path not in self._paths.get(folder, ()):
                raise KeyError(path)
            self.folder_files(folder)
        return self._files[path]

    def __iter__(self) -> Iterator[str]:
        for paths in self._paths.values():
            yield from paths

    def __len__(self) -> int:
        return sum(map(len, self._paths.values()))

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        return path in self._files or path in self._paths.get(path.split("/", 1)[0], ())


class _Assignments(Sequence[Assignment]):
    """The assignments in order; those of cluster types found in the memo, merged on demand."""

    def __init__(self, schedule: EnvironmentSchedule, assigned: dict[str, list[Assignment]]) -> None:
        self._schedule = schedule
        self._assigned = assigned
        self._len = sum(map(len, schedule.pairs.values()))
        self._all: list[Assignment] | None = None

    def _list(self) -> list[Assignment]:
        if self._all is None:
            self._all = [
                a
                for ct in self._schedule.pairs
                for a in (self._assigned.get(ct) or self._schedule.assign(ct))
            ]
        return self._all

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, index: Any) -> Any:
        return self._list()[index]


class FolderSubset(RenderedFolders):
    """The rendered files of some cluster-type folders only: what one wave of an environment
    lands. A folder's bytes are still rendered only if someone reads them."""

    def __init__(self, files: Mapping[str, bytes], folders: Iterable[str]) -> None:
        self._files = files
        self._keep = set(folders)

    def _in(self, path: str) -> bool:
        head, sep, _ = path.partition("/")
        return bool(sep) and head in self._keep

    def folders(self) -> list[str]:
        if isinstance(self._files, RenderedFolders):
            return [f for f in self._files.folders() if f in self._keep]
        return list(dict.fromkeys(p.split("/", 1)[0] for p in self._files if self._in(p)))

    def digest(self, folder: str) -> str | None:
        return self._files.digest(folder) if isinstance(self._files, RenderedFolders) else None

    def known_tree(self, folder: str) -> str | None:
        return self._files.known_tree(folder) if isinstance(self._files, RenderedFolders) else None

    def folder_files(self, folder: str) -> dict[str, bytes]:
        if folder not in self._keep:
            return {}
        if isinstance(self._files, RenderedFolders):
            return self._files.folder_files(folder)
        return {p: d for p, d in self._files.items() if p.startswith(folder + "/")}

    def __getitem__(self, path: str) -> bytes:
        if not self._in(path):
            raise KeyError(path)
        return self._files[path]

    def __iter__(self) -> Iterator[str]:
        return (p for p in self._files if self._in(p))

    def __len__(self) -> int:
        return sum(1 for _ in self)


class FolderUnion(RenderedFolders):
    """Each cluster-type folder taken from a render of its own: an environment whose folders
    hold different main commits, rendered again folder by folder (the scheduling flow)."""

    def __init__(self, sources: Mapping[str, Mapping[str, bytes]]) -> None:
        """``sources``: per cluster type, the render its folder is taken from."""
        self._parts = {folder: FolderSubset(files, [folder]) for folder, files in sorted(sources.items())}

    def folders(self) -> list[str]:
        return [f for part in self._parts.values() for f in part.folders()]

    def digest(self, folder: str) -> str | None:
        part = self._parts.get(folder)
        return part.digest(folder) if part is not None else None

    def known_tree(self, folder: str) -> str | None:
        part = self._parts.get(folder)
        return part.known_tree(folder) if part is not None else None

    def folder_files(self, folder: str) -> dict[str, bytes]:
        part = self._parts.get(folder)
        return part.folder_files(folder) if part is not None else {}

    def __getitem__(self, path: str) -> bytes:
        part = self._parts.get(path.split("/", 1)[0])
        if part is None:
            raise KeyError(path)
        return part[path]

    def __iter__(self) -> Iterator[str]:
        for part in self._parts.values():
            yield from part

    def __len__(self) -> int:
        return sum(len(part) for part in self._parts.values())
