"""Kalypso's kinds (``scheduler.kalypso.io/v1alpha1``), read strictly with the control plane's
field reader: unknown fields, wrong types and bad names are errors naming file, line and field.

The kinds promoter also has (Template, ClusterType, SchedulingPolicy, ConfigMap) are read by the
control plane's own readers; here are the ones only Kalypso has: Environment, WorkloadRegistration
(main), BaseRepo, GitOpsRepo (environment branches) and Workload (the registered repos, with no
workspace of its own)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from promoter.controlplane.documents import KALYPSO_API_VERSION, ObjectDoc
from promoter.controlplane.fields import Fields, check_relative_path
from promoter.controlplane.objects import deployment_targets
from promoter.controlplane.yamlfile import line_of
from promoter.errors import ConfigError
from promoter.gitcmd import valid_branch
from promoter.model import Manifest, Source, Template, Workload
from promoter.urls import url_problem

MAIN_ONLY = ("Environment", "WorkloadRegistration", "Template")
ENV_ONLY = ("BaseRepo", "GitOpsRepo", "ClusterType", "SchedulingPolicy")
KINDS = (*MAIN_ONLY, *ENV_ONLY, "Workload")


@dataclass(frozen=True)
class RepoRef:
    """A ``{repo, branch, path}`` triple: where something lives in git."""

    repo: str
    branch: str
    path: str  # normalised, '' for the root
    line: int | None = None  # where it is written


@dataclass(frozen=True)
class KEnvironment:
    name: str
    control_plane: RepoRef
    source: Source


@dataclass(frozen=True)
class Registration:
    name: str
    labels: dict[str, str]
    workload: RepoRef
    workspace: str
    source: Source


@dataclass(frozen=True)
class BaseRepo:
    ref: RepoRef
    commit: str
    source: Source


@dataclass(frozen=True)
class GitOpsRepo:
    ref: RepoRef
    source: Source


def is_kalypso(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("apiVersion") == KALYPSO_API_VERSION


def kind_error(file: str, doc: Any) -> ConfigError | None:
    """An unknown kind in Kalypso's API group."""
    kind = doc.get("kind")
    if kind in KINDS:
        return None
    return ConfigError(
        f"unknown Kalypso kind {kind!r} (known: {', '.join(sorted(KINDS))})",
        file=file,
        line=line_of(doc, "kind"),
    )


def repo_ref(f: Fields, key: str, *, need_branch: bool = True) -> RepoRef:
    """``spec.<key>``: repo (an https, ssh or file URL, or a path), branch, path."""
    ref = f.fields(key, required=True)
    assert ref is not None
    repo = ref.text("repo", required=True)
    assert repo is not None
    if url_problem(repo, "github") and url_problem(repo, "local"):
        ref.fail(f"{url_problem(repo, 'github')}", "repo")
    branch = ref.text("branch", required=need_branch) or ""
    if branch and not valid_branch(branch):
        ref.fail(f"invalid branch name {branch!r}", "branch")
    path = check_relative_path(ref.str("path") or ".", lambda msg: ref.fail(msg, "path"))
    ref.done()
    return RepoRef(repo, branch, path, f.line_of(key))


def environment_from(obj: ObjectDoc) -> KEnvironment:
    spec = obj.spec()
    ref = repo_ref(spec, "controlPlane")
    spec.done()
    obj.top.done()
    return KEnvironment(obj.name, ref, obj.source)


def registration_from(obj: ObjectDoc) -> Registration:
    spec = obj.spec()
    ref = repo_ref(spec, "workload")
    workspace = spec.name("workspace")
    spec.done()
    obj.top.done()
    return Registration(obj.name, obj.labels, ref, workspace, obj.source)


def base_repo_from(obj: ObjectDoc) -> BaseRepo:
    spec = obj.spec()
    repo = spec.text("repo", required=True)
    branch = spec.str("branch") or ""
    spec.str("path")
    commit = spec.text("commit", required=True)
    assert repo is not None and commit is not None
    if not all(c in "0123456789abcdef" for c in commit) or not 4 <= len(commit) <= 64:
        spec.fail(f"must be a commit sha, got {commit!r}", "commit")
    spec.done()
    obj.top.done()
    return BaseRepo(RepoRef(repo, branch, ""), commit, obj.source)


def gitops_repo_from(obj: ObjectDoc) -> GitOpsRepo:
    spec = obj.spec()
    repo = spec.text("repo", required=True)
    branch = spec.text("branch", required=True)
    assert repo is not None and branch is not None
    if not valid_branch(branch):
        spec.fail(f"invalid branch name {branch!r}", "branch")
    path = check_relative_path(spec.str("path") or ".", lambda msg: spec.fail(msg, "path"))
    spec.done()
    obj.top.done()
    return GitOpsRepo(RepoRef(repo, branch, path), obj.source)


def template_from(obj: ObjectDoc) -> Template:
    """A Template whose mapping manifests keep their lines (errors point at the string)."""
    spec = obj.spec()
    kind = spec.choice("type", ("reconciler", "namespace", "config"), default="")
    content_type = spec.str("contentType") or ""  # templates.scheduler.kalypso.io: any string
    manifests = []
    for _path, line, item in spec.items("manifests", required=True):
        if not isinstance(item, str | dict):
            spec.fail("each manifest is a template string or a mapping", line=line)
        manifests.append(Manifest(item, line))
    if not manifests:
        spec.fail("needs at least one manifest", "manifests")
    spec.done()
    obj.top.done()
    return Template(obj.name, kind, tuple(manifests), obj.source, content_type)  # type: ignore[arg-type]


def workload_from(obj: ObjectDoc, workspace: str) -> Workload:
    """A Workload of a registered repo; its workspace is its registration's."""
    spec = obj.spec()
    targets = deployment_targets(spec, obj.file)
    spec.done()
    obj.top.done()
    return Workload(obj.name, obj.labels, workspace, targets, obj.source)
