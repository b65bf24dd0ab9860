"""Templates in Go text/template (``spec.language: gotemplate``): the data they see, Kalypso's
``dataType``, and the check of what they write (YAML mappings, any number; written as it is)."""

from __future__ import annotations

from typing import Any

import yaml

from promoter.controlplane.yamlfile import MAX_DEPTH, check_depth
from promoter.errors import ConfigError
from promoter.gotemplate.scheduler import SchedulerData, scheduler_data
from promoter.scheduling.targets import Assignment

_YamlLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def go_data(a: Assignment) -> SchedulerData:
    """Kalypso's ``dataType`` for one assignment: the target's labels over the workload's, with
    ``workload`` and ``workspace`` as Kalypso's Workload controller adds them."""
    labels = {**a.labels, "workload": a.workload.name, "workspace": a.workload.workspace}
    return scheduler_data(
        name=a.name,
        namespace=a.namespace,
        environment=a.environment,
        workspace=a.workload.workspace,
        workload=a.workload.name,
        labels=labels,
        manifests=a.target.manifests,
        cluster_type=a.cluster_type.name,
        config=a.config,
    )


def go_yaml_problem(text: str, file: str) -> tuple[int | None, str] | None:
    """(line, message) when ``text`` is not YAML whose documents are mappings; else None."""
    try:
        check_depth(text, file, MAX_DEPTH)  # libyaml's composer recurses in C: refuse first
        docs = [d for d in yaml.load_all(text, Loader=_YamlLoader) if d is not None]
    except ConfigError as err:
        return err.line, f"rendered text is {err.message}"
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        return (mark.line + 1 if mark else None), f"rendered text is not valid YAML: {problem}"
    if not all(isinstance(d, dict) for d in docs):
        return None, "must render YAML mappings"
    return None
