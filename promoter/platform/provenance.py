"""The provenance file, ``.promoter/promotion.yaml``: which control-plane commits a platform
tree was rendered from. Written with every render, read by the guard, resume, supersede,
rollback, ``status`` and ``check-platform``.

An environment that rolls out in waves (DESIGN section 11) holds several main commits at once
while a promotion is under way: its provenance also says, per cluster-type folder, which main
commit and environment commit the folder was rendered from and which wave landed it. The
top-level ``mainCommit`` is then the newest main commit in the tree (the one rolling out)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from promoter.model import Environment, EnvironmentObjects, MainObjects
from promoter.rendering.tree import Rendered

PROVENANCE = ".promoter/promotion.yaml"
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the same, faster
_DIGEST = re.compile(r"[0-9a-f]{64}")
_TREE = re.compile(r"[0-9a-f]{40}")
_HEADER = "# Written by promoter: the control-plane commits this tree was rendered from.\n"


@dataclass(frozen=True)
class FolderProvenance:
    """What one cluster-type folder holds: rendered from these commits, landed by this wave."""

    main_commit: str | None
    env_commit: str | None
    wave: str = ""  # '' : with the whole environment at once

    def text(self) -> dict[str, Any]:
        return {"mainCommit": self.main_commit, "environmentCommit": self.env_commit, "wave": self.wave}


@dataclass(frozen=True)
class Provenance:
    """What a platform tree holds. Read leniently: a field that is missing or of the wrong type
    reads as empty, since the file may have been edited by hand."""

    pipeline: str = ""
    environment: str = ""
    main_commit: str | None = None
    env_branch: str = ""
    env_commit: str | None = None
    cluster_types: tuple[str, ...] = ()
    files: int = 0
    wave: str = ""  # the wave whose landing wrote this tree ('' : the whole environment)
    folders: Mapping[str, FolderProvenance] = field(default_factory=dict)  # waved environments only
    sources: Mapping[str, str] = field(default_factory=dict)  # Kalypso: registration -> workload repo commit
    # Per folder, "<digest> <tree>": the digest of what the folder was rendered from and the tree
    # that render gave (the render memo's entry), so that a runner with an empty cache need not
    # render a folder again to find it unchanged. Written when the tree is committed anyway.
    rendered: Mapping[str, str] = field(default_factory=dict)

    def folder(self, cluster_type: str) -> FolderProvenance | None:
        """What the folder of ``cluster_type`` holds; a tree written without per-folder
        provenance holds the top-level commits in every folder."""
        if cluster_type in self.folders:
            return self.folders[cluster_type]
        if cluster_type in self.cluster_types and not self.folders:
            return FolderProvenance(self.main_commit, self.env_commit)
        return None

    def main_commits(self, cluster_types: tuple[str, ...]) -> set[str | None]:
        """The main commits the folders of these cluster types hold (None: no folder yet)."""
        return {f.main_commit if (f := self.folder(ct)) else None for ct in cluster_types}

    def landed(
        self,
        previous: Provenance | None,
        wave: str,
        cluster_types: tuple[str, ...],
        *,
        last: bool,
    ) -> Provenance:
        """This render landed on the folders of ``cluster_types`` only (one wave), the other
        folders holding what ``previous`` says. Before the last wave, folders of cluster types
        that no longer exist are still there, and still listed."""
        all_types = set(self.cluster_types)
        if not last and previous is not None:
            all_types |= set(previous.cluster_types)
        mine = FolderProvenance(self.main_commit, self.env_commit, wave)
        folders = {}
        for ct in sorted(all_types):
            held = previous.folder(ct) if previous is not None else None
            folders[ct] = mine if ct in cluster_types else held or FolderProvenance(None, None)
        return replace(self, cluster_types=tuple(sorted(all_types)), wave=wave, folders=folders)

    @classmethod
    def of(
        cls, main: MainObjects, env: Environment, objects: EnvironmentObjects, rendered: Rendered
    ) -> Provenance:
        """The provenance of ``env``'s tree rendered from ``main`` and the environment branch."""
        return cls(
            pipeline=main.pipeline.name,
            environment=env.name,
            main_commit=main.commit,
            env_branch=env.branch,
            env_commit=objects.commit,
            cluster_types=rendered.cluster_types,
            files=len(rendered.files),
            sources=dict(rendered.sources),
        )

    def text(self) -> bytes:
        body: dict[str, Any] = {
            "apiVersion": "promoter.dev/v1alpha1",
            "kind": "Promotion",
            "pipeline": self.pipeline,
            "environment": self.environment,
            "mainCommit": self.main_commit,
            "environmentBranch": self.env_branch,
            "environmentCommit": self.env_commit,
            "clusterTypes": list(self.cluster_types),
            "files": self.files,
        }
        if self.sources:
            body["workloadRepos"] = dict(sorted(self.sources.items()))
        if self.wave or self.folders:
            body["wave"] = self.wave
            body["folders"] = {ct: f.text() for ct, f in sorted(self.folders.items())}
        if self.rendered:
            body["rendered"] = dict(sorted(self.rendered.items()))
        return (_HEADER + yaml.safe_dump(body, sort_keys=False)).encode()

    def memo_entries(self) -> dict[str, str]:
        """The render memo's entries this provenance records: digest -> tree (well-formed only)."""
        out = {}
        for entry in self.rendered.values():
            digest, _, tree = entry.partition(" ")
            if _DIGEST.fullmatch(digest) and _TREE.fullmatch(tree):
                out[digest] = tree
        return out

    @classmethod
    def parse(cls, data: bytes | None) -> Provenance | None:
        """The provenance in ``data``; None when there is none (no file, not YAML, not a map)."""
        if not data:
            return None
        try:
            value = yaml.load(data, Loader=_SafeLoader)
        except yaml.YAMLError:
            return None
        if not isinstance(value, dict):
            return None
        listed = value.get("clusterTypes")
        return cls(
            pipeline=_text(value.get("pipeline")),
            environment=_text(value.get("environment")),
            main_commit=_text(value.get("mainCommit")) or None,
            env_branch=_text(value.get("environmentBranch")),
            env_commit=_text(value.get("environmentCommit")) or None,
            cluster_types=tuple(c for c in listed if isinstance(c, str)) if isinstance(listed, list) else (),
            files=_count(value.get("files")),
            wave=_text(value.get("wave")),
            folders=_folders(value.get("folders")),
            sources=_sources(value.get("workloadRepos")),
            rendered=_sources(value.get("rendered")),
        )


def _folders(value: object) -> dict[str, FolderProvenance]:
    if not isinstance(value, dict):
        return {}
    out = {}
    for name, entry in value.items():
        if isinstance(name, str) and isinstance(entry, dict):
            out[name] = FolderProvenance(
                _text(entry.get("mainCommit")) or None,
                _text(entry.get("environmentCommit")) or None,
                _text(entry.get("wave")),
            )
    return out


def _sources(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
