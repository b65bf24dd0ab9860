"""``promoter check-platform``: a smoke check of a rendered platform tree at one commit.

Used as a ``command`` gate (it reads PROMOTER_PLATFORM_REPO, PROMOTER_PLATFORM_SHA,
PROMOTER_PLATFORM_PATH and PROMOTER_COMMIT): the tree at the merged commit must carry the
promoted main commit in its provenance, and every manifest must be a Kubernetes object whose
namespace exists in the same folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from promoter.gitcmd import Git
from promoter.k8s import manifests
from promoter.platform.provenance import PROVENANCE, Provenance


@dataclass
class CheckResult:
    manifests: int = 0
    folders: int = 0
    problems: list[str] = field(default_factory=list)


def check_tree(git: Git, commit: str, root: str, expect_main: str | None) -> CheckResult:
    result = CheckResult()
    prefix = f"{root}/" if root else ""
    result.problems += _provenance_problems(git, commit, prefix, expect_main)
    folders = _documents(git, commit, root, prefix, result)
    result.folders = len(folders)
    for folder, files in sorted(folders.items()):
        result.problems += _namespace_problems(prefix, folder, files)
    documents = {
        f"{folder}/{name}": docs for folder, files in folders.items() for name, docs in files.items()
    }
    result.problems += [f"{prefix}{problem}" for problem in manifests.check_tree(documents)]
    return result


def _provenance_problems(git: Git, commit: str, prefix: str, expect_main: str | None) -> list[str]:
    prov = Provenance.parse(git.read_file(commit, prefix + PROVENANCE))
    if prov is None:
        return [f"{prefix}{PROVENANCE}: missing"]
    if expect_main and prov.main_commit != expect_main:
        return [f"{prefix}{PROVENANCE}: main commit is {prov.main_commit}, expected {expect_main}"]
    return []


Folders = dict[str, dict[str, list[dict[str, Any]]]]  # folder -> file name -> documents


def _documents(git: Git, commit: str, root: str, prefix: str, result: CheckResult) -> Folders:
    """Every Kubernetes object of the tree, by folder and file; a problem for anything else."""
    entries = [
        e
        for e in git.ls_tree(commit, root or None)
        if e.path.endswith(".yaml") and "/." not in "/" + e.path[len(prefix) :]
    ]
    blobs = git.read_blobs(e.sha for e in entries)
    folders: Folders = {}
    for e in entries:
        rel = e.path[len(prefix) :]
        for doc in _objects(e.path, blobs[e.sha], result):
            folders.setdefault(rel.rsplit("/", 1)[0], {}).setdefault(rel.rsplit("/", 1)[-1], []).append(doc)
    return folders


def _objects(path: str, data: bytes, result: CheckResult) -> list[dict[str, Any]]:
    """The Kubernetes objects of one file, each of its documents counted; a problem for a file
    that is not YAML and for each document that is not an object."""
    try:
        docs = [d for d in yaml.safe_load_all(data) if d is not None]
    except yaml.YAMLError as err:
        result.problems.append(f"{path}: not YAML: {err}")
        return []
    result.manifests += len(docs)
    result.problems += [
        f"{path}: a document lacks apiVersion, kind or metadata.name" for d in docs if not _is_object(d)
    ]
    return [d for d in docs if _is_object(d)]


def _is_object(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and all(doc.get(k) for k in ("apiVersion", "kind"))
        and bool((doc.get("metadata") or {}).get("name"))
    )


def _namespace_problems(prefix: str, folder: str, files: dict[str, list[dict[str, Any]]]) -> list[str]:
    namespaces = {
        str(d["metadata"]["name"]) for d in files.get("namespace.yaml", []) if d.get("kind") == "Namespace"
    }
    return [
        f"{prefix}{folder}/platform-config.yaml: namespace {ns} is not created in this folder"
        for doc in files.get("platform-config.yaml", [])
        if namespaces and (ns := (doc.get("metadata") or {}).get("namespace")) not in namespaces
    ]
