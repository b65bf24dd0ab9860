"""Read control-plane objects straight from git objects at a commit, with no checkout.

``load_main`` reads main at commit X, ``load_environment`` an environment branch at a commit.
YAML documents are dispatched on ``kind``; the folder layout is free (dot-folders are skipped).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema
from jsonschema_specifications import REGISTRY as METASCHEMAS  # type: ignore[import-untyped]
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012, specification_with

from promoter.errors import ConfigError
from promoter.fields import Fields, check_branch, check_relative_path
from promoter.forges.base import BRANCH_PREFIX as RESERVED_PREFIX
from promoter.gates import GATES, validate_gate
from promoter.gitcmd import Git
from promoter.model import (
    ClusterType,
    ConfigMap,
    ConfigSchema,
    DeploymentTarget,
    Environment,
    EnvironmentObjects,
    FailurePolicy,
    GateSpec,
    MainObjects,
    Manifest,
    MergePolicy,
    Pipeline,
    Requirement,
    SchedulingPolicy,
    Selector,
    Source,
    Template,
    Workload,
)
from promoter.urls import scheme_of, url_problem
from promoter.yamlfile import LDict, line_of, load_documents, plain

API_VERSION = "promoter.dev/v1alpha1"
KALYPSO_API_VERSION = "scheduler.kalypso.io/v1alpha1"
PIPELINE_FILE = "promoter.yaml"
MAIN_KINDS = ("Pipeline", "Template", "Workload", "ConfigSchema")
ENV_KINDS = ("ClusterType", "SchedulingPolicy", "ConfigMap")
KALYPSO_KINDS = ("Template", "Workload", "ConfigSchema", "ClusterType", "SchedulingPolicy")
MAX_FILES = 20_000

Doc = tuple[str, LDict]


def read_documents(git: Git, commit: str, prefix: str = "") -> Iterator[Doc]:
    """(file, document) for every control-plane object in the tree of ``commit``; each file is
    named ``prefix + path`` (``dev:env.yaml`` on an environment branch, where every branch may
    have the same paths)."""
    entries = [
        e
        for e in git.ls_tree(commit)
        if e.type == "blob"
        and e.path.endswith((".yaml", ".yml"))
        and not any(part.startswith(".") for part in e.path.split("/"))
    ]
    if len(entries) > MAX_FILES:
        raise ConfigError(f"{len(entries)} YAML files at {commit[:12]}, over the limit of {MAX_FILES}")
    blobs = git.read_blobs(e.sha for e in entries)
    for entry in sorted(entries, key=lambda e: e.path):
        file = prefix + entry.path
        for doc in load_documents(blobs[entry.sha], file):
            if _is_object(doc, file):
                yield file, doc


def _is_object(doc: Any, file: str) -> bool:
    """Ours, someone else's YAML (ignored), or a mistake (an error)."""
    if not isinstance(doc, dict):
        return False
    api, kind = doc.get("apiVersion"), doc.get("kind")
    line = line_of(doc, "apiVersion")
    if api in (API_VERSION, KALYPSO_API_VERSION):
        if kind not in MAIN_KINDS + ENV_KINDS:
            raise ConfigError(f"unknown kind {kind!r}", file=file, line=line_of(doc, "kind"))
        if api == KALYPSO_API_VERSION and kind not in KALYPSO_KINDS:
            raise ConfigError(
                f"kind {kind} is not a Kalypso kind; use apiVersion {API_VERSION}", file=file, line=line
            )
        return True
    if api == "v1" and kind == "ConfigMap":
        return True
    if isinstance(api, str) and api.startswith(("promoter.dev/", "scheduler.kalypso.io/")):
        raise ConfigError(f"unsupported apiVersion {api!r}; use {API_VERSION}", file=file, line=line)
    if api is None and kind in MAIN_KINDS + ENV_KINDS:
        raise ConfigError(
            f"kind {kind} needs apiVersion: {API_VERSION}", file=file, line=line_of(doc, "kind")
        )
    return False


class _Object:
    """The common envelope: apiVersion, kind, metadata."""

    def __init__(self, file: str, doc: LDict) -> None:
        self.top = Fields(doc, file, "")
        self.top.get("apiVersion")
        self.kind: str = self.top.get("kind")
        meta = self.top.fields("metadata", required=True)
        assert meta is not None
        self.meta = meta
        self.name = meta.name("name")
        self.labels = meta.labels("labels")
        meta.get("annotations", dict)
        meta.get("namespace", str)
        meta.done()
        self.source = Source(file, doc.line)
        self.file = file

    def spec(self, required: bool = True) -> Fields:
        spec = self.top.fields("spec", required=required)
        return spec if spec is not None else Fields(LDict(), self.file, "spec", self.source.line)


def _selector(f: Fields | None, with_workspace: bool) -> Selector:
    if f is None:
        return Selector()
    workspace = (f.name("workspace", required=False) or None) if with_workspace else None
    ls = f.fields("labelSelector")
    f.done()
    if ls is None:
        return Selector(workspace=workspace)
    match_labels = ls.labels("matchLabels")
    requirements = []
    for path, line, item in ls.items("matchExpressions"):
        e = Fields(item, ls.file, path, line)
        op = e.choice("operator", ("In", "NotIn", "Exists", "DoesNotExist"), default="")
        key = e.str("key", required=True)
        values = e.get("values", list) or []
        if any(not isinstance(v, str) for v in values):
            e.fail("values must be strings", "values")
        if op in ("In", "NotIn") and not values:
            e.fail(f"operator {op} needs values", "values")
        e.done()
        requirements.append(Requirement(str(key), op, tuple(values)))  # type: ignore[arg-type]
    ls.done()
    return Selector(match_labels, tuple(requirements), workspace)


def _duplicate(kind: str, name: str, first: Source, again: Source) -> ConfigError:
    return ConfigError(f"duplicate {kind} {name!r} (also at {first})", file=again.file, line=again.line)


def _wrong_branch(obj: _Object, where: str) -> ConfigError:
    home = "an environment branch" if obj.kind in ENV_KINDS else "main"
    return ConfigError(
        f"kind {obj.kind} belongs on {home}, not on {where}", file=obj.file, line=obj.source.line
    )


# ---------------------------------------------------------------- main


def load_main(git: Git, commit: str) -> MainObjects:
    """The promoted objects on main at ``commit`` (a full sha)."""
    pipeline: Pipeline | None = None
    templates: dict[str, Template] = {}
    workloads: dict[str, Workload] = {}
    schemas: dict[str, ConfigSchema] = {}
    for file, doc in read_documents(git, commit):
        obj = _Object(file, doc)
        if obj.kind in ENV_KINDS:
            raise _wrong_branch(obj, "main")
        if obj.kind == "Pipeline":
            if file != PIPELINE_FILE:
                raise ConfigError(
                    f"the Pipeline must be in {PIPELINE_FILE} at the root of main",
                    file=file,
                    line=obj.source.line,
                )
            if pipeline is not None:
                raise _duplicate("Pipeline", obj.name, pipeline.source, obj.source)
            pipeline = _pipeline(obj)
            continue
        tables: dict[str, dict[str, Any]] = {
            "Template": templates,
            "Workload": workloads,
            "ConfigSchema": schemas,
        }
        table = tables[obj.kind]
        if obj.name in table:
            raise _duplicate(obj.kind, obj.name, table[obj.name].source, obj.source)
        table[obj.name] = {"Template": _template, "Workload": _workload, "ConfigSchema": _schema}[obj.kind](
            obj
        )
    if pipeline is None:
        raise ConfigError(
            f"no Pipeline at commit {commit[:12]}: main needs a {PIPELINE_FILE} at its root",
            file=PIPELINE_FILE,
        )
    names = {e.name for e in pipeline.environments}
    for workload in workloads.values():
        for target in workload.targets:
            if target.environment not in names:
                raise ConfigError(
                    f"deployment target {target.name!r} names environment {target.environment!r}, "
                    f"which the Pipeline does not have ({', '.join(sorted(names))})",
                    file=target.source.file,
                    line=target.source.line,
                )
    _check_output_names(workloads)
    return MainObjects(commit, pipeline, templates, workloads, schemas)


def _check_output_names(workloads: dict[str, Workload]) -> None:
    seen: dict[tuple[str, str], DeploymentTarget] = {}
    for workload in workloads.values():
        for target in workload.targets:
            key = (target.environment, f"{workload.name}-{target.name}")
            if key in seen:
                raise ConfigError(
                    f"deployment target name {key[1]!r} in {key[0]} is also produced by {seen[key].source}",
                    file=target.source.file,
                    line=target.source.line,
                )
            seen[key] = target


def _pipeline(obj: _Object) -> Pipeline:
    spec = obj.spec()
    repo = spec.fields("platformRepo", required=True)
    assert repo is not None
    url = repo.str("url", required=True)
    forge = repo.get("forge", str)
    if forge is not None and forge not in ("local", "github"):
        repo.fail(f"must be local or github, got {forge!r}", "forge")
    assert url is not None
    problem = url_problem(url, forge or ("local" if scheme_of(url) in ("path", "file") else "github"))
    if problem:
        repo.fail(problem, "url")
    repo.done()
    environments: list[Environment] = []
    for path, line, item in spec.items("environments", required=True):
        environments.append(_environment(Fields(item, obj.file, path, line)))
    if not environments:
        spec.fail("needs at least one environment", "environments")
    seen: dict[str, Environment] = {}
    for env in environments:
        if env.name in seen:
            raise ConfigError(
                f"environment {env.name!r} is listed twice (also at line {seen[env.name].source.line})",
                file=obj.file,
                line=env.source.line,
            )
        seen[env.name] = env
    _check_platform_branches(environments, obj.file)
    spec.done()
    obj.top.done()
    assert url is not None
    return Pipeline(obj.name, url, forge, tuple(environments), obj.source)


def _check_platform_branches(environments: list[Environment], file: str) -> None:
    """Each environment's rendered tree has a place of its own on the platform repo: no branch in
    the promoter's own namespace (promotion and rollback branches), no two environments on
    overlapping folders of one branch, no branch that is a folder of another (git cannot hold
    both ``a`` and ``a/b``)."""
    for i, env in enumerate(environments):
        branch = env.gitops_branch
        if branch == RESERVED_PREFIX or branch.startswith(RESERVED_PREFIX + "/"):
            raise ConfigError(
                f"spec.environments[{i}].gitops.branch: {branch!r} is in {RESERVED_PREFIX}/, "
                "the promoter's own promotion and rollback branches",
                file=file,
                line=env.source.line,
            )
        for other in environments[:i]:
            clash = _clash(other, env)
            if clash:
                raise ConfigError(
                    f"spec.environments[{i}].gitops: {clash} of environment {other.name!r} (line {other.source.line})",
                    file=file,
                    line=env.source.line,
                )


def _clash(a: Environment, b: Environment) -> str | None:
    if a.gitops_branch == b.gitops_branch:
        if _nested(a.gitops_path, b.gitops_path):
            where = f"{b.gitops_path or '.'!r} overlaps {a.gitops_path or '.'!r}"
            return f"branch {b.gitops_branch!r}, folder {where}"
        return None
    if _nested(a.gitops_branch, b.gitops_branch):
        return f"branch {b.gitops_branch!r} cannot live beside branch {a.gitops_branch!r}"
    return None


def _nested(a: str, b: str) -> bool:
    """Whether one of two slash-separated paths holds the other ('' holds everything)."""
    return not a or not b or a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _environment(f: Fields) -> Environment:
    from promoter.clock import parse_duration

    name = f.name("name")
    branch = f.str("branch", default=name)
    assert branch is not None
    check_branch(branch, lambda m: f.fail(m, "branch"))
    gitops = f.fields("gitops")
    gitops_branch, gitops_path = name, ""
    if gitops is not None:
        gitops_branch = gitops.str("branch", default=name) or name
        check_branch(gitops_branch, lambda m: gitops.fail(m, "branch"))
        gitops_path = check_relative_path(
            gitops.str("path", default=".") or ".", lambda m: gitops.fail(m, "path")
        )
        gitops.done()
    merge = f.choice("merge", ("auto", "manual", "direct"), default="auto")
    on_failure: FailurePolicy = (
        "rollback" if f.choice("onFailure", ("stop", "rollback"), default="stop") == "rollback" else "stop"
    )
    timeout_value = f.get("timeout", (str, int, float))  # a wrong type fails here, with its own message
    try:
        timeout = parse_duration("30m" if timeout_value is None else timeout_value)
    except ValueError as err:
        f.fail(str(err), "timeout")
    if timeout <= 0:
        f.fail("must be longer than zero", "timeout")
    gates = []
    for _path, line, item in f.items("gates"):
        if not isinstance(item, dict) or len(item) != 1:
            f.fail(
                "each gate is a mapping with one key, the gate type (" + ", ".join(sorted(GATES)) + ")",
                line=line,
            )
        kind = next(iter(item))
        if kind not in GATES:
            f.fail(f"unknown gate {kind!r}; known: {', '.join(sorted(GATES))}", line=line)
        source = Source(f.file, line)
        validate_gate(kind, plain(item[kind]), source)
        gates.append(GateSpec(kind, plain(item[kind]), source))
    f.done()
    policy: MergePolicy = "manual" if merge == "manual" else "direct" if merge == "direct" else "auto"
    return Environment(
        name,
        branch,
        gitops_branch,
        gitops_path,
        policy,
        timeout,
        tuple(gates),
        Source(f.file, f.line),
        on_failure,
    )


def _template(obj: _Object) -> Template:
    spec = obj.spec()
    kind = spec.choice("type", ("reconciler", "namespace", "config"), default="")
    manifests = []
    for _path, line, item in spec.items("manifests", required=True):
        if isinstance(item, str):
            manifests.append(Manifest(item, line))
        elif isinstance(item, dict):
            manifests.append(Manifest(plain(item), line))
        else:
            spec.fail("each manifest is a template string or a mapping", line=line)
    if not manifests:
        spec.fail("needs at least one manifest", "manifests")
    spec.done()
    obj.top.done()
    return Template(obj.name, kind, tuple(manifests), obj.source)  # type: ignore[arg-type]


def _workload(obj: _Object) -> Workload:
    spec = obj.spec()
    workspace = spec.name("workspace")
    targets: list[DeploymentTarget] = []
    seen: set[str] = set()
    for path, line, item in spec.items("deploymentTargets"):
        t = Fields(item, obj.file, path, line)
        name = t.name("name")
        if name in seen:
            t.fail(f"duplicate deployment target {name!r}", "name")
        seen.add(name)
        environment = t.name("environment")
        labels = t.labels("labels")
        manifests = t.fields("manifests", required=True)
        assert manifests is not None
        manifests.str("repo", required=True)
        for key in manifests.value:
            manifests.any(key)
        targets.append(
            DeploymentTarget(name, environment, labels, plain(manifests.value), Source(obj.file, line))
        )
        t.done()
    spec.done()
    obj.top.done()
    return Workload(obj.name, obj.labels, workspace, tuple(targets), obj.source)


def _schema(obj: _Object) -> ConfigSchema:
    spec = obj.spec()
    schema = spec.get("schema", dict, required=True)
    try:
        jsonschema.validators.validator_for(plain(schema)).check_schema(plain(schema))
    except jsonschema.SchemaError as err:
        spec.fail(f"not a valid JSON Schema: {err.message}", "schema")
    ref = _unresolvable_ref(plain(schema))
    if ref is not None:
        spec.fail(
            f"not a valid JSON Schema: $ref {ref!r} does not resolve within it (other documents are not fetched)",
            "schema",
        )
    spec.done()
    obj.top.done()
    return ConfigSchema(obj.name, obj.labels, plain(schema), obj.source)


def _unresolvable_ref(schema: dict[str, Any]) -> str | None:
    """The first ``$ref`` of ``schema`` that names nothing in it (nor a JSON Schema metaschema).

    jsonschema resolves references only when validation reaches them, and then raises instead of
    reporting, or fetches a URL over the network; checked here, a bad one is an error with a line.
    """
    dialect = schema.get("$schema")
    root = specification_with(
        dialect if isinstance(dialect, str) else "", default=DRAFT202012
    ).create_resource(schema)
    stack = [(METASCHEMAS.resolver_with_root(root), root)]
    while stack:
        resolver, resource = stack.pop()
        ref = resource.contents.get("$ref") if isinstance(resource.contents, dict) else None
        if isinstance(ref, str):
            try:
                resolver.lookup(ref)
            except Unresolvable:
                return ref
        stack.extend((resolver.in_subresource(sub), sub) for sub in resource.subresources())
    return None


# ---------------------------------------------------------------- environment branches


def load_environment(git: Git, branch: str, commit: str) -> EnvironmentObjects:
    """The objects of one environment branch at ``commit``."""
    cluster_types: dict[str, ClusterType] = {}
    policies: dict[str, SchedulingPolicy] = {}
    configmaps: dict[str, ConfigMap] = {}
    where = f"environment branch {branch!r}"
    for file, doc in read_documents(git, commit, prefix=f"{branch}:"):
        obj = _Object(file, doc)
        if obj.kind in MAIN_KINDS:
            raise _wrong_branch(obj, where)
        if obj.kind == "ClusterType":
            _add(cluster_types, _cluster_type(obj))
        elif obj.kind == "SchedulingPolicy":
            _add(policies, _policy(obj))
        else:
            _add(configmaps, _configmap(obj))
    return EnvironmentObjects(branch, commit, cluster_types, policies, configmaps)


def _add(table: dict[str, Any], obj: Any) -> None:
    if obj.name in table:
        raise _duplicate(type(obj).__name__, obj.name, table[obj.name].source, obj.source)
    table[obj.name] = obj


def _cluster_type(obj: _Object) -> ClusterType:
    spec = obj.spec()
    reconciler = spec.name("reconciler")
    namespace = spec.name("namespaceService", required=False, default="default")
    config = spec.name("configType", required=False, default="configmap")
    spec.done()
    obj.top.done()
    return ClusterType(obj.name, obj.labels, reconciler, namespace, config, obj.source)


def _policy(obj: _Object) -> SchedulingPolicy:
    spec = obj.spec()
    targets = _selector(spec.fields("deploymentTargetSelector"), with_workspace=True)
    cluster_types = _selector(spec.fields("clusterTypeSelector"), with_workspace=False)
    spec.done()
    obj.top.done()
    return SchedulingPolicy(obj.name, targets, cluster_types, obj.source)


def _configmap(obj: _Object) -> ConfigMap:
    data = obj.top.get("data", dict) or {}
    obj.top.done()
    return ConfigMap(obj.name, obj.labels, plain(data), obj.source)


def check_references(main: MainObjects, env: EnvironmentObjects, builtins: dict[str, Template]) -> None:
    """Every ClusterType names templates that exist (in main or built in) of the right type."""
    for ct in env.cluster_types.values():
        for field, name, kind in (
            ("reconciler", ct.reconciler, "reconciler"),
            ("namespaceService", ct.namespace_service, "namespace"),
            ("configType", ct.config_type, "config"),
        ):
            template = main.templates.get(name) or builtins.get(name)
            if template is None:
                known = sorted(n for n, t in {**builtins, **main.templates}.items() if t.type == kind)
                raise ConfigError(
                    f"spec.{field}: ClusterType {ct.name!r} names template {name!r}, which does not exist "
                    f"(known {kind} templates: {', '.join(known) or 'none'})",
                    file=ct.source.file,
                    line=ct.source.line,
                )
            if template.type != kind:
                raise ConfigError(
                    f"spec.{field}: template {name!r} is of type {template.type}, not {kind}",
                    file=ct.source.file,
                    line=ct.source.line,
                )


__all__ = ["check_references", "load_environment", "load_main", "read_documents"]
