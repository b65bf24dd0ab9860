"""The other kinds: Template, Workload, ConfigSchema on main; ClusterType, SchedulingPolicy and
ConfigMap on environment branches."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promoter.controlplane.documents import (
    ObjectDoc,
    selector,
)
from promoter.controlplane.fields import Fields
from promoter.controlplane.ordering import dependencies_from
from promoter.controlplane.sources import check_manifests
from promoter.controlplane.yamlfile import LDict, line_of, plain
from promoter.errors import ConfigError, Problems
from promoter.k8s.served import parse_release
from promoter.k8s.values import changed_scalar, key_problem
from promoter.model import (
    NEWEST,
    ClusterType,
    ConfigMap,
    ConfigSchema,
    DeploymentTarget,
    EnvironmentObjects,
    MainObjects,
    Manifest,
    SchedulingPolicy,
    Source,
    Template,
    Versions,
    Workload,
)

#: A Template's ``spec.language``: jinja2 (promoter's), or gotemplate (Go text/template with
#: sprig and Kalypso's functions and data: docs/configuration.md#templates-in-go-texttemplate).
LANGUAGES = ("jinja2", "gotemplate")


def template_from(obj: ObjectDoc) -> Template:
    spec = obj.spec()
    kind = spec.choice("type", ("reconciler", "namespace", "config"), default="")
    language = spec.choice("language", LANGUAGES, default="jinja2")
    manifests = []
    for _path, line, item in spec.items("manifests", required=True):
        if isinstance(item, str):
            manifests.append(Manifest(item, line))
        elif isinstance(item, dict) and language == "jinja2":
            manifests.append(Manifest(plain(item), line))
        elif isinstance(item, dict):
            spec.fail("a gotemplate Template's manifests are template strings", line=line)
        else:
            spec.fail("each manifest is a template string or a mapping", line=line)
    if not manifests:
        spec.fail("needs at least one manifest", "manifests")
    spec.done()
    obj.top.done()
    return Template(obj.name, kind, tuple(manifests), obj.source, language=language)  # type: ignore[arg-type]


def workload_from(obj: ObjectDoc) -> Workload:
    spec = obj.spec()
    workspace = spec.name("workspace")
    targets = deployment_targets(spec, obj.file, strict=True)
    spec.done()
    obj.top.done()
    return Workload(obj.name, obj.labels, workspace, targets, obj.source)


def deployment_targets(spec: Fields, file: str, *, strict: bool = False) -> tuple[DeploymentTarget, ...]:
    """A Workload's ``spec.deploymentTargets`` (Kalypso's Workloads have the same shape): unique
    names, an environment, labels, and ``manifests`` with a non-empty ``repo``. ``strict``:
    promoter's own Workloads, whose ``manifests`` take only their source kind's keys (Kalypso's
    are a free map of strings its templates read), and which may say what they ``dependsOn``."""
    targets: list[DeploymentTarget] = []
    seen: set[str] = set()
    for path, line, item in spec.items("deploymentTargets"):
        t = Fields(item, file, path, line)
        name = t.name("name")
        if name in seen:
            t.fail(f"duplicate deployment target {name!r}", "name")
        seen.add(name)
        environment = t.name("environment")
        labels = t.labels("labels")
        manifests = t.fields("manifests", required=True)
        assert manifests is not None
        if strict:
            check_manifests(manifests)
        manifests.text("repo", required=True)
        for key in manifests.value:
            manifests.any(key)
        depends_on = dependencies_from(t) if strict else ()  # Kalypso's Workloads have no dependsOn
        source = Source(file, line)
        targets.append(
            DeploymentTarget(name, environment, labels, plain(manifests.value), source, depends_on)
        )
        t.done()
    return tuple(targets)


def check_output_names(workloads: dict[str, Workload]) -> None:
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


def schema_from(obj: ObjectDoc) -> ConfigSchema:
    import jsonschema  # heavy (72 ms; `promoter completion` starts in 136): loads only with a ConfigSchema

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
    from jsonschema_specifications import REGISTRY as METASCHEMAS  # type: ignore[import-untyped]  # heavy (47 ms)
    from referencing.exceptions import Unresolvable  # heavy (41 ms): loads only when a ConfigSchema is read
    from referencing.jsonschema import DRAFT202012, specification_with  # heavy, as above

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


def cluster_type_from(obj: ObjectDoc) -> ClusterType:
    spec = obj.spec()
    reconciler = spec.name("reconciler")
    namespace = spec.name("namespaceService", required=False, default="default")
    config = spec.name("configType", required=False, default="configmap")
    versions = versions_from(spec)
    spec.done()
    obj.top.done()
    return ClusterType(obj.name, obj.labels, reconciler, namespace, config, obj.source, versions)


def versions_from(spec: Fields) -> Versions:
    """``spec.versions``: the releases the clusters run (``kubernetes``, ``flux``, ``argocd``:
    ``1.29``, ``v2.3.1``); absent, the newest (what promoter's schemas are)."""
    given = spec.fields("versions")
    if given is None:
        return NEWEST
    releases = []
    for key in ("kubernetes", "flux", "argocd"):
        text = given.get(key, str)
        release = parse_release(text) if text is not None else None
        if text is not None and release is None:
            given.fail(f"must be a release such as 1.29 or v2.3.1, got {text!r}", key)
        releases.append(release)
    given.done()
    return Versions(*releases)


def policy_from(obj: ObjectDoc) -> SchedulingPolicy:
    spec = obj.spec()
    targets = selector(spec.fields("deploymentTargetSelector"), with_workspace=True)
    cluster_types = selector(spec.fields("clusterTypeSelector"), with_workspace=False)
    spec.done()
    obj.top.done()
    return SchedulingPolicy(obj.name, targets, cluster_types, obj.source)


def configmap_from(obj: ObjectDoc) -> ConfigMap:
    data = obj.top.get("data", dict) or {}
    if obj.labels.get("platform-config") == "true":
        _check_config_data(obj, data)
    obj.top.done()
    lines = {str(key): line_of(data, key) or obj.source.line or 1 for key in data}
    return ConfigMap(obj.name, obj.labels, plain(data), obj.source, lines)


def _check_config_data(obj: ObjectDoc, data: Any) -> None:
    """Config keys Kubernetes takes, values that reach the cluster as the user wrote them: every
    key and value judged, all the problems said at once."""
    problems = Problems()
    for key, value in data.items():
        written = getattr(data, "key_texts", {}).get(key)
        problem = changed_scalar(written, key) if written is not None else None
        problem = problem or key_problem(key)
        if problem is None and key in getattr(data, "texts", {}):
            problem = changed_scalar(data.texts[key], value)
        if problem:
            with problems.each():
                obj.top.fail(problem, "data", line=line_of(data, key))
    problems.done()


def template_from_document(file: str, doc: LDict) -> Template:
    """A Template from one parsed YAML document (the built-in templates are read with this)."""
    return template_from(ObjectDoc(file, doc))


def check_references(main: MainObjects, env: EnvironmentObjects, builtins: dict[str, Template]) -> None:
    """Every ClusterType names templates that exist (in main or built in) of the right type."""
    templates = {**builtins, **main.templates}
    for ct in env.cluster_types.values():
        for field, name, kind in (
            ("reconciler", ct.reconciler, "reconciler"),
            ("namespaceService", ct.namespace_service, "namespace"),
            ("configType", ct.config_type, "config"),
        ):
            referenced_template(templates, ct, field, name, kind)


def referenced_template(
    templates: Mapping[str, Template],
    ct: ClusterType,
    field: str,
    name: str,
    kind: str,
    *,
    absent: str = "which does not exist",
    listing: str = "known",
) -> Template:
    """The template ``ct`` names in ``spec.<field>``, which must exist and be of type ``kind``;
    ``absent`` and ``listing`` word the error for a missing one (Kalypso's reads "main")."""
    template = templates.get(name)
    if template is None:
        known = ", ".join(sorted(n for n, t in templates.items() if t.type == kind)) or "none"
        raise ConfigError(
            f"spec.{field}: ClusterType {ct.name!r} names template {name!r}, {absent} ({listing} {kind} templates: {known})",
            file=ct.source.file,
            line=ct.source.line,
        )
    if template.type != kind:
        raise ConfigError(
            f"spec.{field}: template {name!r} is of type {template.type}, not {kind}",
            file=ct.source.file,
            line=ct.source.line,
        )
    return template
