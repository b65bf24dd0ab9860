"""Reading a Kalypso control plane from git as Kalypso keeps it: main (Templates,
WorkloadRegistrations, Environments in ``.environments/``), each environment branch (BaseRepo,
GitOpsRepo, ClusterTypes, SchedulingPolicies, ``platform-config`` ConfigMaps), and the
registered workload repos (their Workloads, fetched with git at their branch heads)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promoter.controlplane.documents import MAX_FILES, ObjectDoc, duplicate
from promoter.controlplane.objects import cluster_type_from, configmap_from, policy_from
from promoter.controlplane.yamlfile import LDict, line_of, load_documents
from promoter.errors import ConfigError, GitError
from promoter.gitcmd import Git
from promoter.kalypso.fetch import fetch_branch, git_reason
from promoter.kalypso.objects import (
    ENV_ONLY,
    MAIN_ONLY,
    BaseRepo,
    GitOpsRepo,
    KEnvironment,
    Registration,
    base_repo_from,
    environment_from,
    gitops_repo_from,
    is_kalypso,
    kind_error,
    registration_from,
    template_from,
    workload_from,
)
from promoter.model import ClusterType, ConfigMap, SchedulingPolicy, Template, Workload
from promoter.urls import redact

ENVIRONMENTS_DIR = ".environments"
PLATFORM_CONFIG = "platform-config"


@dataclass(frozen=True)
class KalypsoMain:
    """What main holds at one commit."""

    commit: str
    templates: dict[str, Template]
    registrations: dict[str, Registration]
    environments: dict[str, KEnvironment]


@dataclass(frozen=True)
class KalypsoBranch:
    """What one environment branch holds at one commit."""

    branch: str
    commit: str
    base: BaseRepo | None
    gitops: GitOpsRepo | None
    cluster_types: dict[str, ClusterType]
    policies: dict[str, SchedulingPolicy]
    configmaps: dict[str, ConfigMap]


@dataclass(frozen=True)
class FetchedWorkloads:
    """The Workloads of one registered repo, at the commit its branch head was when fetched."""

    registration: Registration
    commit: str
    workloads: tuple[Workload, ...]


def documents(
    git: Git, commit: str, prefix: str, under: str = "", *, dot_dirs: tuple[str, ...] = ()
) -> Iterator[tuple[str, Any]]:
    """(file, document) for every YAML document under ``under`` at ``commit``; dot-folders are
    skipped but for ``dot_dirs``; files are named ``prefix + path``."""
    entries = [
        e for e in git.ls_tree(commit, under or None) if e.type == "blob" and _is_yaml_file(e.path, dot_dirs)
    ]
    if len(entries) > MAX_FILES:
        raise ConfigError(f"{len(entries)} YAML files at {commit[:12]}, over the limit of {MAX_FILES}")
    blobs = git.read_blobs(e.sha for e in entries)
    for entry in sorted(entries, key=lambda e: e.path):
        file = prefix + entry.path
        for doc in load_documents(blobs[entry.sha], file):
            yield file, doc


def _is_yaml_file(path: str, dot_dirs: tuple[str, ...]) -> bool:
    """A ``.yaml`` or ``.yml`` file, neither hidden nor in a dot-folder (but for ``dot_dirs``)."""
    *folders, name = path.split("/")
    hidden = any(p.startswith(".") for p in folders) and folders[0] not in dot_dirs
    return path.endswith((".yaml", ".yml")) and not hidden and not name.startswith(".")


def looks_like_kalypso(git: Git, commit: str) -> bool:
    """Main at ``commit`` is a Kalypso control plane: it registers workloads or defines
    environments in Kalypso's kinds."""
    for _file, doc in documents(git, commit, "", dot_dirs=(ENVIRONMENTS_DIR,)):
        if is_kalypso(doc) and doc.get("kind") in ("WorkloadRegistration", "Environment"):
            return True
    return False


def _object(file: str, doc: Any, where: str, wrong: tuple[str, ...]) -> ObjectDoc | None:
    """The object in ``doc``, None for YAML that is not Kalypso's (ignored, as Kalypso's Flux
    would apply it elsewhere); an error for a kind that belongs on the other side."""
    if not isinstance(doc, LDict):
        return None
    if doc.get("apiVersion") == "v1" and doc.get("kind") == "ConfigMap":
        return ObjectDoc(file, doc)
    if not is_kalypso(doc):
        return None
    problem = kind_error(file, doc)
    if problem is not None:
        raise problem
    kind = doc["kind"]
    if kind in wrong or kind == "Workload":
        raise ConfigError(
            f"kind {kind} belongs on {_home(kind)}, not on {where}", file=file, line=line_of(doc, "kind")
        )
    return ObjectDoc(file, doc)


def _home(kind: str) -> str:
    """Where a Kalypso kind is read: a workload repo, main, or an environment branch."""
    if kind == "Workload":
        return "a registered workload repo"
    return "main" if kind in MAIN_ONLY else "an environment branch"


def load_main(git: Git, commit: str) -> KalypsoMain:
    templates: dict[str, Any] = {}
    registrations: dict[str, Any] = {}
    environments: dict[str, Any] = {}
    for file, doc in documents(git, commit, "", dot_dirs=(ENVIRONMENTS_DIR,)):
        obj = _object(file, doc, "main", ENV_ONLY)
        if obj is None:
            continue
        if obj.kind == "ConfigMap":
            raise ConfigError(
                "kind ConfigMap belongs on an environment branch, not on main",
                file=file,
                line=obj.source.line,
            )
        table, reader = {
            "Template": (templates, template_from),
            "WorkloadRegistration": (registrations, registration_from),
            "Environment": (environments, environment_from),
        }[obj.kind]
        _add(table, obj.kind, reader(obj))
    return KalypsoMain(commit, templates, registrations, environments)


def load_branch(git: Git, branch: str, commit: str, under: str) -> KalypsoBranch:
    tables: dict[str, dict[str, Any]] = {"ClusterType": {}, "SchedulingPolicy": {}, "ConfigMap": {}}
    singles: dict[str, Any] = {}
    where = f"environment branch {branch!r}"
    for file, doc in documents(git, commit, f"{branch}:", under):
        obj = _object(file, doc, where, MAIN_ONLY)
        if obj is None:
            continue
        if obj.kind in ("BaseRepo", "GitOpsRepo"):
            if obj.kind in singles:
                raise ConfigError(
                    f"a second {obj.kind} (the first is at {singles[obj.kind].source})",
                    file=file,
                    line=obj.source.line,
                )
            singles[obj.kind] = (base_repo_from if obj.kind == "BaseRepo" else gitops_repo_from)(obj)
            continue
        reader = {"ClusterType": cluster_type_from, "SchedulingPolicy": policy_from, "ConfigMap": _configmap}[
            obj.kind
        ]
        _add(tables[obj.kind], obj.kind, reader(obj))
    return KalypsoBranch(
        branch,
        commit,
        singles.get("BaseRepo"),
        singles.get("GitOpsRepo"),
        tables["ClusterType"],
        tables["SchedulingPolicy"],
        tables["ConfigMap"],
    )


def _configmap(obj: ObjectDoc) -> ConfigMap:
    """A ConfigMap as Kubernetes takes it: its data values are strings."""
    data = obj.top.value.get("data")
    if isinstance(data, dict):
        for key, value in data.items():
            if not isinstance(value, str):
                obj.top.fail(
                    f"data.{key}: a ConfigMap's values are strings (quote it)",
                    "data",
                    line=line_of(data, key),
                )
    return configmap_from(obj)


def _add(table: dict[str, Any], kind: str, obj: Any) -> None:
    if obj.name in table:
        raise duplicate(kind, obj.name, table[obj.name].source, obj.source)
    table[obj.name] = obj


def fetch_workloads(registration: Registration, cache: Path) -> FetchedWorkloads:
    """Fetch the registered repo's branch head (depth 1) into a bare cache repo, and read its
    Workloads under the registered path."""
    ref = registration.workload
    where = f"{redact(ref.repo)}:{ref.path or '.'}"
    try:
        git, commit = fetch_branch(ref.repo, ref.branch, cache)
    except GitError as err:
        raise ConfigError(
            f"spec.workload: cannot fetch branch {ref.branch!r} of {redact(ref.repo)}: {git_reason(err)}",
            file=registration.source.file,
            line=ref.line,
        ) from err
    if commit is None:
        raise ConfigError(
            f"spec.workload: {redact(ref.repo)} has no branch {ref.branch!r}",
            file=registration.source.file,
            line=ref.line,
        )
    workloads: list[Workload] = []
    for file, doc in documents(git, commit, f"{redact(ref.repo)}:", ref.path):
        if is_kalypso(doc) and doc.get("kind") == "Workload":
            workloads.append(workload_from(ObjectDoc(file, doc), registration.workspace))
    if not workloads:
        raise ConfigError(
            f"spec.workload: no Workload in {where} at {commit[:12]}",
            file=registration.source.file,
            line=ref.line,
        )
    return FetchedWorkloads(registration, commit, tuple(workloads))
