"""Rendering Kalypso placements into Kalypso's GitOps layout, pure.

Per environment (relative to the GitOpsRepo's path)::

    <cluster-type>/README.md                                  every cluster type, placed on or not
    <cluster-type>/<workload>-<target>/reconciler.yaml        the cluster type's reconciler Template
    <cluster-type>/<workload>-<target>/namespace.yaml         its namespaceService Template
    <cluster-type>/<workload>-<target>/config.yaml            ConfigMap platform-config (current: platform-config.yaml)
    .github/tracking/Promoted_Commit_Id                       the main commit rendered

Templates are Go templates in either of Kalypso's forms: a manifest that is a mapping has each
string value templated (nested mappings too, list items not), and runs as ``html/template`` ran
it in 2023 (values HTML-escaped); a manifest that is a string is one ``text/template`` whose
output is YAML. Each rendered manifest is written back as YAML with sorted keys, the way
Kubernetes' marshaller writes it, documents joined by ``---``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from promoter.controlplane.objects import referenced_template
from promoter.controlplane.yamlfile import line_of, load_documents, plain
from promoter.errors import ConfigError, TemplateError
from promoter.gotemplate import GoTemplate, StringMap, Struct, to_yaml
from promoter.gotemplate.values import sprint
from promoter.kalypso.schedule import Naming, Placement
from promoter.model import Template

README = "README.md"
README_TEXT = b"This folder contains deployment targets scheduled on the cluster type"
TRACKING = ".github/tracking/Promoted_Commit_Id"


class TemplateData(Struct):
    """What Kalypso's templates see (its ``dataType``)."""

    type_name = "scheduler.dataType"


def data_of(p: Placement) -> TemplateData:
    manifests = StringMap({str(k): sprint(v) for k, v in p.target.target.manifests.items()})
    return TemplateData(
        DeploymentTargetName=p.target.name,
        Namespace=p.namespace,
        Environment=p.environment,
        Workspace=p.target.workspace,
        Workload=p.target.workload.name,
        Labels=StringMap(p.target.labels),
        Manifests=manifests,
        Repo=manifests.get("repo", ""),
        Branch=manifests.get("branch", ""),
        Path=manifests.get("path", ""),
        ClusterType=p.cluster_type.name,
        ConfigData=dict(p.config),
    )


@dataclass(frozen=True)
class _Compiled:
    """One manifest of a Template, ready to run: a function of the data to YAML documents."""

    run: Callable[[TemplateData, str], list[Any]]


class Renderer:
    """Compiles each Template once; renders placements."""

    def __init__(self, templates: dict[str, Template]) -> None:
        self.templates = templates
        self._compiled: dict[str, list[_Compiled]] = {}

    def compile_all(self) -> None:
        for name in sorted(self.templates):
            self.compiled(name)

    def compiled(self, name: str) -> list[_Compiled]:
        if name not in self._compiled:
            template = self.templates[name]
            self._compiled[name] = [_compile(template, i) for i in range(len(template.manifests))]
        return self._compiled[name]

    def template(self, name: str, kind: str, p: Placement, field: str) -> Template:
        return referenced_template(
            self.templates,
            p.cluster_type,
            field,
            name,
            kind,
            absent="which main does not have",
            listing="its",
        )

    def render(self, name: str, kind: str, p: Placement, field: str) -> bytes:
        template = self.template(name, kind, p, field)
        data = data_of(p)
        docs: list[Any] = []
        for compiled in self.compiled(template.name):
            docs.extend(compiled.run(data, str(p)))
        return "---\n".join(to_yaml(d) + "\n" for d in docs).encode()


def _compile(template: Template, index: int) -> _Compiled:
    manifest = template.manifests[index]
    file, line = template.source.file, manifest.line or template.source.line or 1
    where = f"template {template.name}, manifest {index + 1}"
    if isinstance(manifest.body, str):
        try:
            text = GoTemplate(manifest.body, file, escape_html=False)
        except TemplateError as err:
            raise TemplateError(
                f"{where}: {err.message}", file=file, line=line + (err.line or 1) - 1
            ) from err
        return _Compiled(lambda data, placement: _run_text(text, data, placement, where, line))
    compiled: dict[tuple[str, ...], tuple[GoTemplate, int]] = {}
    _compile_strings(manifest.body, (), compiled, (file, line, where))
    body = plain(manifest.body)
    return _Compiled(lambda data, placement: [_run_mapping(body, compiled, data, placement, where)])


def _compile_strings(
    value: dict[str, Any],
    path: tuple[str, ...],
    out: dict[tuple[str, ...], tuple[GoTemplate, int]],
    at: tuple[str, int, str],
) -> None:
    """Every string value of a mapping, nested mappings too, list items not (as Kalypso did),
    with its line."""
    file, line, where = at
    for key, item in value.items():
        here = line_of(value, key, line) or line
        if isinstance(item, str) and "{{" in item:
            try:
                out[(*path, key)] = (GoTemplate(item, file, escape_html=True), here)
            except TemplateError as err:
                field = ".".join((*path, key))
                raise TemplateError(f"{where}, {field}: {err.message}", file=file, line=here) from err
        elif isinstance(item, dict):
            _compile_strings(item, (*path, key), out, (file, here, where))


def _run_mapping(
    body: dict[str, Any],
    compiled: dict[tuple[str, ...], tuple[GoTemplate, int]],
    data: TemplateData,
    placement: str,
    where: str,
) -> dict[str, Any]:
    result: dict[str, Any] = plain(body)
    for path, (template, line) in compiled.items():
        target = result
        for key in path[:-1]:
            target = target[key]
        try:
            target[path[-1]] = template.render(data)
        except TemplateError as err:
            raise TemplateError(
                f"{where}, {'.'.join(path)}, for {placement}: {err.message}", file=err.file, line=line
            ) from err
    return result


def _run_text(template: GoTemplate, data: TemplateData, placement: str, where: str, line: int) -> list[Any]:
    try:
        text = template.render(data)
    except TemplateError as err:
        at = line + (err.line or 1) - 1
        raise TemplateError(f"{where}, for {placement}: {err.message}", file=err.file, line=at) from err
    if not text.strip():
        return []
    try:
        docs = [d for d in load_documents(text.encode(), "rendered") if d is not None]
    except ConfigError as err:
        raise TemplateError(
            f"{where}, for {placement}: the output is not YAML (its line {err.line}: {err.message})",
            file=template.name,
            line=line,
        ) from err
    for doc in docs:
        if not isinstance(doc, dict):
            raise TemplateError(
                f"{where}, for {placement}: renders to YAML that is not a mapping",
                file=template.name,
                line=line,
            )
    return [plain(d) for d in docs]


def config_map(p: Placement) -> bytes:
    doc = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "platform-config", "namespace": p.namespace},
        "data": dict(p.config),
    }
    return (to_yaml(doc) + "\n").encode()


def render_tree(
    placements: dict[str, list[Placement]], renderer: Renderer, main_commit: str, naming: Naming
) -> dict[str, bytes]:
    """The files of one environment, sorted by path."""
    config_file = "config.yaml" if naming == "2023" else "platform-config.yaml"
    files: dict[str, bytes] = {TRACKING: main_commit.encode()}
    for ct_name, placed in placements.items():
        files[f"{ct_name}/{README}"] = README_TEXT
        for p in placed:
            folder = f"{ct_name}/{p.target.name}"
            ct = p.cluster_type
            files[f"{folder}/reconciler.yaml"] = renderer.render(ct.reconciler, "reconciler", p, "reconciler")
            files[f"{folder}/namespace.yaml"] = renderer.render(
                ct.namespace_service, "namespace", p, "namespaceService"
            )
            files[f"{folder}/{config_file}"] = config_map(p)
    return dict(sorted(files.items()))
