"""Templates in Go text/template (``spec.language: gotemplate``): the data they see, Kalypso's
``dataType``, and the check of what they write (YAML mappings, any number; written as it is)."""

from __future__ import annotations

from promoter.gotemplate.scheduler import SchedulerData, scheduler_data
from promoter.rendering.parse import Problem, read_rendered_text
from promoter.scheduling.targets import Assignment


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


def go_yaml_problem(text: str, file: str) -> Problem | None:
    """(line, message) when ``text`` is not YAML whose documents are mappings; else None."""
    docs, problem = read_rendered_text(text, file)
    if problem is None and not all(isinstance(d, dict) for d in docs):
        return None, "must render YAML mappings"
    return problem
