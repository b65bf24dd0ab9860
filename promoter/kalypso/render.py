"""Rendering Kalypso placements into Kalypso's GitOps layout, pure.

Per environment (relative to the GitOpsRepo's path)::

    <cluster-type>/README.md                                  every cluster type, placed on or not
    <cluster-type>/<workload>-<target>/reconciler.yaml        the cluster type's reconciler Template
    <cluster-type>/<workload>-<target>/namespace.yaml         its namespaceService Template
    <cluster-type>/<workload>-<target>/config.yaml            ConfigMap platform-config (2023)
    <cluster-type>/<workload>-<target>/platform-config.yaml   the configType Template (2024, head; .sh for sh)
    .github/tracking/Promoted_Commit_Id                       the main commit rendered

Templates are Go templates in either of Kalypso's forms: a manifest that is a mapping has each
string value templated (nested mappings too, list items not), and runs as ``html/template`` ran
it in 2023 (values HTML-escaped); a manifest that is a string is one ``text/template``.

2023 generation: each rendered manifest is written back as YAML with sorted keys, the way
Kubernetes' marshaller writes it, documents joined by ``---``. 2024 and head: each string
manifest's output is written as the template wrote it (``scheduler/githubrepo.go``
``getManifestsYamlString``: the outputs that are not empty, joined by ``---\n``, nothing added),
rendered as ``replaceTemplateVariables`` renders it (the re-render loop, the generation's YAML
library); it is still parsed, and must be YAML mappings, before it is written (but for a config
Template whose ``contentType`` is ``sh``). A Template is found by name, its ``spec.type`` not
checked (``controllers/assignment_controller.go``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from promoter.controlplane.objects import referenced_template
from promoter.controlplane.yamlfile import line_of, load_documents, plain
from promoter.errors import ConfigError, TemplateError
from promoter.gotemplate import GoTemplate, StringMap, Struct, to_yaml
from promoter.gotemplate.scheduler import scheduler_data
from promoter.gotemplate.values import sprint
from promoter.kalypso.generation import RULES, Generation
from promoter.kalypso.schedule import Placement
from promoter.model import Template

README = "README.md"
README_TEXT = b"This folder contains deployment targets scheduled on the cluster type"
TRACKING = ".github/tracking/Promoted_Commit_Id"
SH_CONTENT = "sh"  # a config Template's contentType written to platform-config.sh (EnvContentType)
BUILTIN_CONFIG = "configmap"  # a ClusterType with no configType: promoter's built-in ConfigMap


class TemplateData(Struct):
    """What Kalypso's templates see (its ``dataType``)."""

    type_name = "scheduler.dataType"


def data_of(p: Placement, naming: Generation = "2023") -> TemplateData:
    manifests = StringMap({str(k): sprint(v) for k, v in p.target.target.manifests.items()})
    if naming != "2023":
        # scheduler/templater.go newData: no Repo, Branch or Path fields, ConfigData of any values
        return TemplateData(
            scheduler_data(
                name=p.target.name,
                namespace=p.namespace,
                environment=p.environment,
                workspace=p.target.workspace,
                workload=p.target.workload.name,
                labels=p.target.labels,
                manifests=p.target.target.manifests,
                cluster_type=p.cluster_type.name,
                config=p.config,
            )
        )
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
    """One manifest of a Template, ready to run: a function of the data to YAML documents, and
    for a string manifest its text (the current scheduler writes that as it is)."""

    run: Callable[[TemplateData, str], list[Any]]
    text: Callable[[TemplateData, str], str] | None = None


class Renderer:
    """Compiles each Template once; renders placements."""

    def __init__(self, templates: dict[str, Template], naming: Generation = "2023") -> None:
        self.templates = templates
        self.naming = naming
        self._compiled: dict[str, list[_Compiled]] = {}

    def compile_all(self) -> None:
        for name in sorted(self.templates):
            self.compiled(name)

    def compiled(self, name: str) -> list[_Compiled]:
        if name not in self._compiled:
            template = self.templates[name]
            self._compiled[name] = [
                _compile(template, i, self.naming) for i in range(len(template.manifests))
            ]
        return self._compiled[name]

    def template(self, name: str, kind: str, p: Placement, field: str) -> Template:
        """The Template the cluster type names; since 2024 by name alone, as the scheduler
        fetches it (its ``spec.type`` is not checked)."""
        if self.naming != "2023" and name in self.templates:
            return self.templates[name]
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
        data = data_of(p, self.naming)
        if self.naming != "2023":
            try:
                return self._as_written(template, data, p)
            except TemplateError as err:
                raise _with_hint(err) from err
        docs: list[Any] = []
        for compiled in self.compiled(template.name):
            docs.extend(compiled.run(data, str(p)))
        return "---\n".join(to_yaml(d) + "\n" for d in docs).encode()

    def _as_written(self, template: Template, data: TemplateData, p: Placement) -> bytes:
        """``ProcessTemplate`` then ``getManifestsYamlString``: each output that is not empty,
        joined by ``---\n``; a mapping manifest (the 2023 form) is written as YAML."""
        outputs: list[str] = []
        for compiled in self.compiled(template.name):
            if compiled.text is None:
                outputs.extend(to_yaml(d) + "\n" for d in compiled.run(data, str(p)))
                continue
            text = compiled.text(data, str(p))
            if text != "":
                outputs.append(text)
        return "---\n".join(outputs).encode()

    def config(self, p: Placement) -> tuple[str, bytes] | None:
        """The current scheduler's config file of a placement (``getConfigManifests``): the
        cluster type's ``configType`` Template, in ``platform-config.sh`` when its contentType is
        ``env``, else ``platform-config.yaml``; nothing when it renders nothing. A ClusterType
        that names no configType gets promoter's built-in ConfigMap (the 2023 scheduler's)."""
        ct = p.cluster_type
        if ct.config_type == BUILTIN_CONFIG and BUILTIN_CONFIG not in self.templates:
            return "platform-config.yaml", config_map(p)
        template = self.template(ct.config_type, "config", p, "configType")
        body = self.render(template.name, "config", p, "configType")
        if not body:
            return None
        return config_file_name(template), body


def _with_hint(err: TemplateError) -> TemplateError:
    """The 2023 scheduler's ``.Repo``, ``.Branch`` and ``.Path`` are gone from the later ones'
    data: say which generation renders a template that still uses them."""
    if not any(f"can't evaluate field {f} in type" in err.message for f in ("Repo", "Branch", "Path")):
        return err
    hint = (
        " (Kalypso's scheduler since 2023-10 has .Manifests.repo, .branch and .path; "
        "PROMOTER_KALYPSO_GENERATION=2023 renders as the 2023 one did)"
    )
    return TemplateError(err.message + hint, file=err.file, line=err.line)


def config_file_name(template: Template) -> str:
    """``getFullManifestsFileName``: ``.sh`` for the content type ``sh``, ``.yaml`` for any
    other (``env`` included)."""
    return "platform-config.sh" if template.content_type == SH_CONTENT else "platform-config.yaml"


def _compile(template: Template, index: int, generation: Generation) -> _Compiled:
    manifest = template.manifests[index]
    file, line = template.source.file, manifest.line or template.source.line or 1
    where = f"template {template.name}, manifest {index + 1}"
    if isinstance(manifest.body, str):
        try:
            text = _go_template(manifest.body, file, generation)
        except TemplateError as err:
            raise TemplateError(
                f"{where}: {err.message}", file=file, line=line + (err.line or 1) - 1
            ) from err
        check = template.content_type != SH_CONTENT
        return _Compiled(
            lambda data, placement: _run_text(text, data, placement, where, line),
            lambda data, placement: _output(text, data, placement, (where, line, check)),
        )
    compiled: dict[tuple[str, ...], tuple[GoTemplate, int]] = {}
    _compile_strings(manifest.body, (), compiled, (file, line, where))
    body = plain(manifest.body)
    return _Compiled(lambda data, placement: [_run_mapping(body, compiled, data, placement, where)])


def _go_template(text: str, file: str, generation: Generation) -> GoTemplate:
    """A string manifest as the generation's scheduler runs it: once, with yaml.v2 (2023, as
    promoter rendered it before), or ``replaceTemplateVariables`` with its loop and YAML library."""
    if generation == "2023":
        return GoTemplate(text, file, rerender=False, yaml="v2")
    return GoTemplate(text, file, yaml=RULES[generation].yaml)


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
                out[(*path, key)] = (
                    GoTemplate(item, file, escape_html=True, rerender=False, yaml="v2"),
                    here,
                )
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


def _execute(template: GoTemplate, data: TemplateData, placement: str, where: str, line: int) -> str:
    try:
        return template.render(data)
    except TemplateError as err:
        at = line + (err.line or 1) - 1
        raise TemplateError(f"{where}, for {placement}: {err.message}", file=err.file, line=at) from err


def _output(template: GoTemplate, data: TemplateData, placement: str, at: tuple[str, int, bool]) -> str:
    """A string manifest's output as it is, after checking that it is YAML mappings (skipped
    for an env config)."""
    where, line, check = at
    text = _execute(template, data, placement, where, line)
    if check and text.strip():
        _parse(text, template, placement, where, line)
    return text


def _run_text(template: GoTemplate, data: TemplateData, placement: str, where: str, line: int) -> list[Any]:
    text = _execute(template, data, placement, where, line)
    if not text.strip():
        return []
    return _parse(text, template, placement, where, line)


def _parse(text: str, template: GoTemplate, placement: str, where: str, line: int) -> list[Any]:
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
    placements: dict[str, list[Placement]], renderer: Renderer, main_commit: str, naming: Generation
) -> dict[str, bytes]:
    """The files of one environment, sorted by path."""
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
            config = ("config.yaml", config_map(p)) if naming == "2023" else renderer.config(p)
            if config is not None:
                files[f"{folder}/{config[0]}"] = config[1]
    return dict(sorted(files.items()))
