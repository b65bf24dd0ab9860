"""Kalypso's 2023 Templates, translated to promoter's jinja2 (``promoter convert --from kalypso``).

A Template that is a mapping whose string values use only plain fields (``{{ .Namespace }}``,
``{{ .Repo }}``, ...) is rewritten field by field; anything else (a string manifest, a pipeline,
a function, ``if``, ``range``, a field the table below does not have) cannot be translated and is
an error naming the Template's file and line, the manifest and the field.

Text that Kalypso wrote as it is (strings without actions, list items, the text around actions)
is kept from jinja2 with ``{% raw %}`` where it holds jinja2's own delimiters."""

from __future__ import annotations

from typing import Any

from promoter.controlplane.yamlfile import line_of, plain
from promoter.errors import ConfigError, TemplateError
from promoter.gotemplate.functions import NAMES
from promoter.gotemplate.nodes import Action, Field, Text
from promoter.gotemplate.parser import parse
from promoter.kalypso.generation import Generation
from promoter.model import Template

#: Kalypso's plain fields and the jinja2 expression of each (docs/kalypso.md#convert).
FIELDS: dict[str, str] = {
    "DeploymentTargetName": "name",
    "Environment": "environment",
    "Workspace": "workspace",
    "Workload": "workload",
    "ClusterType": "cluster_type",
    "Repo": 'manifests.get("repo", "")',
    "Branch": 'manifests.get("branch", "")',
    "Path": 'manifests.get("path", "")',
}
NAMESPACES: dict[Generation, str] = {
    "2023": '(environment ~ "-" ~ workspace ~ "-" ~ name) | bounded',
    "2024": "namespace",
    "head": "namespace",
}
_JINJA = ("{{", "{%", "{#")


def translate(template: Template, naming: Generation) -> dict[str, Any]:
    """The promoter Template document for ``template``; ConfigError where it cannot be."""
    manifests = []
    for index, manifest in enumerate(template.manifests):
        where = f"template {template.name}, manifest {index + 1}"
        line = manifest.line or template.source.line
        if not isinstance(manifest.body, dict):
            raise ConfigError(
                f"{where}: a string manifest (Go text/template with functions) cannot be translated to jinja2; "
                "translate it by hand (docs/kalypso.md#convert)",
                file=template.source.file,
                line=line,
            )
        manifests.append(_mapping(manifest.body, (), (template.source.file, line or 1, where), naming))
    return {
        "apiVersion": "promoter.dev/v1alpha1",
        "kind": "Template",
        "metadata": {"name": template.name},
        "spec": {"type": template.type, "manifests": manifests},
    }


def _mapping(
    value: dict[str, Any], path: tuple[str, ...], at: tuple[str, int, str], naming: Generation
) -> dict[str, Any]:
    """A mapping manifest, keys sorted (as Kalypso writes them), every string value translated."""
    file, line, where = at
    out: dict[str, Any] = {}
    for key in sorted(value, key=str):
        item = value[key]
        here = line_of(value, key, line) or line
        if isinstance(item, str):
            out[key] = _string(item, (*path, str(key)), (file, here, where), naming)
        elif isinstance(item, dict):
            out[key] = _mapping(item, (*path, str(key)), (file, here, where), naming)
        elif isinstance(item, list):
            out[key] = [_literal(v) for v in plain(item)]
        else:
            out[key] = plain(item)
    return out


def _literal(value: Any) -> Any:
    """A value Kalypso left as written (list items): kept from jinja2 too."""
    if isinstance(value, str):
        return _raw(value)
    if isinstance(value, dict):
        return {k: _literal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_literal(v) for v in value]
    return value


def _raw(text: str) -> str:
    if not any(d in text for d in _JINJA) and "{% endraw %}" not in text:
        return text
    # jinja2 has no escape for its raw block's end: split it across two raw blocks
    parts = text.split("endraw")
    return "endraw".join("{% raw %}" + p + "{% endraw %}" if p else "" for p in parts)


def _string(text: str, path: tuple[str, ...], at: tuple[str, int, str], naming: Generation) -> str:
    file, line, where = at
    field = ".".join(path)
    if "{{" not in text:
        return _raw(text)
    try:
        tree = parse(text, file, NAMES)
    except TemplateError as err:
        raise ConfigError(f"{where}, {field}: {err.message}", file=file, line=line) from err
    out = []
    for node in tree.body:
        if isinstance(node, Text):
            out.append(_raw(node.text))
        elif isinstance(node, Action) and (expression := _plain_field(node, naming)) is not None:
            out.append("{{ " + expression + " }}")
        else:
            raise ConfigError(
                f"{where}, {field}: {text.strip()!r} uses more than a plain field "
                f"({', '.join('.' + f for f in (*FIELDS, 'Namespace'))}), which cannot be translated to jinja2; "
                "translate it by hand (docs/kalypso.md#convert)",
                file=file,
                line=line,
            )
    if tree.defines:
        raise ConfigError(f"{where}, {field}: define/block cannot be translated", file=file, line=line)
    return "".join(out)


def _plain_field(node: Action, naming: Generation) -> str | None:
    pipe = node.pipe
    if pipe.decl or len(pipe.cmds) != 1 or len(pipe.cmds[0].args) != 1:
        return None
    arg = pipe.cmds[0].args[0]
    if not isinstance(arg, Field) or len(arg.names) != 1:
        return None
    name = arg.names[0]
    return NAMESPACES[naming] if name == "Namespace" else FIELDS.get(name)
