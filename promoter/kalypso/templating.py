"""One Kalypso Template manifest rendered with given data, as the scheduler's
``replaceTemplateVariables`` renders it (``promoter kalypso template FILE --data DATA.json``).

DATA.json has the fields of Kalypso's ``dataType`` (``DeploymentTargetName``, ``Namespace``,
``Environment``, ``Workspace``, ``Workload``, ``ClusterType``: strings; ``Labels``,
``Manifests``: objects of strings, or null for a nil map), ``ConfigData``: an object of ConfigMap
strings, read as the scheduler reads a ConfigMap value, and ``ConfigMaps``: a list of such
objects, merged after ``ConfigData`` in order, as the scheduler merges the ConfigMaps it selects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from promoter.errors import UsageError
from promoter.gotemplate import GoTemplate, StringMap, Struct
from promoter.gotemplate.scheduler import scheduler_data
from promoter.kalypso.configvalues import merged_config
from promoter.kalypso.generation import RULES, Generation

NAMES = ("DeploymentTargetName", "Namespace", "Environment", "Workspace", "Workload", "ClusterType")
MAPS = ("Labels", "Manifests")


class TemplateData(Struct):
    """Kalypso's ``dataType``."""

    type_name = "scheduler.dataType"


def read_data(path: str, generation: Generation) -> TemplateData:
    """DATA.json as the data a template sees; exit 2 naming the file and field when it is not
    of that shape."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise UsageError(f"--data {path}: cannot read it: {err.strerror}") from err
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UsageError(f"--data {path}: not JSON: {err}") from err
    if not isinstance(raw, dict):
        raise UsageError(f"--data {path}: must be a JSON object with the fields of Kalypso's dataType")
    for key in raw:
        if key not in (*NAMES, *MAPS, "ConfigData", "ConfigMaps"):
            known = ", ".join((*NAMES, *MAPS, "ConfigData", "ConfigMaps"))
            raise UsageError(f"--data {path}: unknown field {key!r} (the fields are {known})")
    names = {n: _string(raw.get(n, ""), f"{path}: {n}") for n in NAMES}
    labels, manifests = (_strings(raw.get(m), f"{path}: {m}", nullable=True) for m in MAPS)
    sources = [_strings(raw.get("ConfigData"), f"{path}: ConfigData", nullable=True)]
    sources += [_strings(cm, f"{path}: ConfigMaps[{i}]") for i, cm in enumerate(_list(raw, path))]
    return _data(names, labels, manifests, sources, generation)


def _data(
    names: dict[str, str],
    labels: dict[str, str],
    manifests: dict[str, str],
    sources: list[dict[str, str]],
    generation: Generation,
) -> TemplateData:
    if generation == "2023":  # the 2023 dataType: flat config, later wins; Repo, Branch, Path
        config: dict[str, Any] = {k: v for data in sources for k, v in data.items()}
        return TemplateData(
            DeploymentTargetName=names["DeploymentTargetName"],
            Namespace=names["Namespace"],
            Environment=names["Environment"],
            Workspace=names["Workspace"],
            Workload=names["Workload"],
            Labels=StringMap(labels),
            Manifests=StringMap(manifests),
            Repo=manifests.get("repo", ""),
            Branch=manifests.get("branch", ""),
            Path=manifests.get("path", ""),
            ClusterType=names["ClusterType"],
            ConfigData=config,
        )
    config = merged_config(sources, by_name=RULES[generation].merge_lists_by_name)
    return TemplateData(
        scheduler_data(
            name=names["DeploymentTargetName"],
            namespace=names["Namespace"],
            environment=names["Environment"],
            workspace=names["Workspace"],
            workload=names["Workload"],
            labels=labels,
            manifests=manifests,
            cluster_type=names["ClusterType"],
            config=config,
        )
    )


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise UsageError(f"--data {where}: must be a string")
    return value


def _strings(value: Any, where: str, nullable: bool = False) -> dict[str, str]:
    if value is None and nullable:
        return {}
    if not isinstance(value, dict):
        raise UsageError(f"--data {where}: must be an object of strings" + (" or null" if nullable else ""))
    for key, item in value.items():
        if not isinstance(item, str):
            raise UsageError(
                f"--data {where}.{key}: must be a string, as a ConfigMap's data and a map[string]string hold"
            )
    return dict(value)


def _list(raw: dict[str, Any], path: str) -> list[Any]:
    value = raw.get("ConfigMaps", [])
    if not isinstance(value, list):
        raise UsageError(f"--data {path}: ConfigMaps: must be a list of objects of strings")
    return value


def compile_manifest(text: str, name: str, generation: Generation) -> GoTemplate:
    """One manifest as the generation's scheduler parses it: ``html/template`` without the
    re-render loop (2023), or ``text/template`` with sprig v2.22.0, the loop and the
    generation's YAML library."""
    if generation == "2023":
        return GoTemplate(text, name, escape_html=True, rerender=False, yaml="v2")
    return GoTemplate(text, name, yaml=RULES[generation].yaml)


def render_manifest(text: str, name: str, data: TemplateData, generation: Generation) -> str:
    """``replaceTemplateVariables(text)``: the output, or TemplateError (exit 2) with Go's text."""
    return compile_manifest(text, name, generation).render(data)
