"""Read control-plane objects straight from git objects at a commit, with no checkout.

``load_main`` reads main at commit X, ``load_environment`` an environment branch at a commit.
YAML documents are dispatched on ``kind``; the folder layout is free (dot-folders are skipped).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import nullcontext
from typing import Any

from promoter.controlplane import ordering
from promoter.controlplane.documents import (
    ENV_KINDS,
    MAIN_KINDS,
    MAX_FILES,
    PIPELINE_FILE,
    Doc,
    ObjectDoc,
    duplicate,
    is_control_plane_file,
    is_object,
    wrong_branch,
)
from promoter.controlplane.objects import (
    check_output_names,
    cluster_type_from,
    configmap_from,
    policy_from,
    schema_from,
    template_from,
    workload_from,
)
from promoter.controlplane.pipeline import pipeline_from
from promoter.controlplane.yamlfile import load_documents
from promoter.errors import ConfigError, Problems
from promoter.gitcmd import Git
from promoter.model import (
    ClusterType,
    ConfigMap,
    ConfigSchema,
    EnvironmentObjects,
    MainObjects,
    Pipeline,
    SchedulingPolicy,
    Template,
    Workload,
)


def read_documents(
    git: Git, commit: str, prefix: str = "", problems: Problems | None = None
) -> Iterator[Doc]:
    """(file, document) for every control-plane object in the tree of ``commit``; each file is
    named ``prefix + path`` (``dev:env.yaml`` on an environment branch, where every branch may
    have the same paths). With ``problems``, a file that cannot be read is one of them, and the
    other files are still read."""
    entries = [e for e in git.ls_tree(commit) if e.type == "blob" and is_control_plane_file(e.path)]
    if len(entries) > MAX_FILES:
        raise ConfigError(f"{len(entries)} YAML files at {commit[:12]}, over the limit of {MAX_FILES}")
    blobs = git.read_blobs(e.sha for e in entries)
    for entry in sorted(entries, key=lambda e: e.path):
        file = prefix + entry.path
        found: list[Doc] = []
        with problems.each() if problems is not None else nullcontext():
            found = [(file, doc) for doc in load_documents(blobs[entry.sha], file) if is_object(doc, file)]
        yield from found


def load_main(git: Git, commit: str) -> MainObjects:
    """The promoted objects on main at ``commit`` (a full sha)."""
    pipeline: Pipeline | None = None
    templates: dict[str, Template] = {}
    workloads: dict[str, Workload] = {}
    schemas: dict[str, ConfigSchema] = {}
    tables: dict[str, dict[str, Any]] = {
        "Template": templates,
        "Workload": workloads,
        "ConfigSchema": schemas,
    }
    problems = Problems()  # every object judged, all the problems said at once
    for file, doc in read_documents(git, commit, problems=problems):
        with problems.each():
            obj = ObjectDoc(file, doc)
            if obj.kind in ENV_KINDS:
                raise wrong_branch(obj, "main")
            if obj.kind == "Pipeline":
                if file != PIPELINE_FILE:
                    raise ConfigError(
                        f"the Pipeline must be in {PIPELINE_FILE} at the root of main",
                        file=file,
                        line=obj.source.line,
                    )
                if pipeline is not None:
                    raise duplicate("Pipeline", obj.name, pipeline.source, obj.source)
                pipeline = pipeline_from(obj)
                continue
            table = tables[obj.kind]
            if obj.name in table:
                raise duplicate(obj.kind, obj.name, table[obj.name].source, obj.source)
            table[obj.name] = _MAKERS[obj.kind](obj)
    if pipeline is not None:  # its environments, against every target read: their problems too
        _check_target_environments(pipeline, workloads, problems)
    problems.done()
    if pipeline is None:
        raise ConfigError(
            f"no Pipeline at commit {commit[:12]}: main needs a {PIPELINE_FILE} at its root",
            file=PIPELINE_FILE,
        )
    check_output_names(workloads)
    return MainObjects(commit, pipeline, templates, ordering.resolve(workloads), schemas)


def _check_target_environments(
    pipeline: Pipeline, workloads: dict[str, Workload], problems: Problems
) -> None:
    """Every deployment target names an environment of the Pipeline: each that does not, a problem."""
    names = {e.name for e in pipeline.environments}
    for target in (t for w in workloads.values() for t in w.targets if t.environment not in names):
        problems.add(
            ConfigError(
                f"deployment target {target.name!r} names environment {target.environment!r}, "
                f"which the Pipeline does not have ({', '.join(sorted(names))})",
                file=target.source.file,
                line=target.source.line,
            )
        )


def load_environment(git: Git, branch: str, commit: str) -> EnvironmentObjects:
    """The objects of one environment branch at ``commit``."""
    cluster_types: dict[str, ClusterType] = {}
    policies: dict[str, SchedulingPolicy] = {}
    configmaps: dict[str, ConfigMap] = {}
    where = f"environment branch {branch!r}"
    problems = Problems()  # every object judged, all the problems said at once
    for file, doc in read_documents(git, commit, prefix=f"{branch}:", problems=problems):
        with problems.each():
            obj = ObjectDoc(file, doc)
            if obj.kind in MAIN_KINDS:
                raise wrong_branch(obj, where)
            if obj.kind == "ClusterType":
                _add(cluster_types, cluster_type_from(obj))
            elif obj.kind == "SchedulingPolicy":
                _add(policies, policy_from(obj))
            else:
                _add(configmaps, configmap_from(obj))
    problems.done()
    return EnvironmentObjects(branch, commit, cluster_types, policies, configmaps)


_MAKERS: dict[str, Any] = {"Template": template_from, "Workload": workload_from, "ConfigSchema": schema_from}


def _add(table: dict[str, Any], obj: Any) -> None:
    if obj.name in table:
        raise duplicate(type(obj).__name__, obj.name, table[obj.name].source, obj.source)
    table[obj.name] = obj
