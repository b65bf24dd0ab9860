"""The rendered files of an environment, checked as Kubernetes and the reconcilers will judge
them (``k8s.manifests``), before anything is pushed. A problem is bad input (exit 2) naming the
file, the template that made it, the assignment and the rule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promoter.errors import TemplateError
from promoter.k8s.manifests import Problem, check_tree
from promoter.model import ClusterType, Template
from promoter.rendering.render import ROLE_FILES


def check_rendered(
    documents: Mapping[str, list[dict[str, Any]]],
    environment: str,
    cluster_types: Mapping[str, ClusterType],
    templates: Mapping[str, Template],
) -> TemplateError | None:
    """The error for the first problem of the rendered files (``<cluster-type>/<target>/<role>.yaml``),
    given as the objects of their documents (what reading the files back gives; the renderer
    holds them), or None. Returned, not raised: a template error anywhere comes before any of these."""
    problems = check_tree(documents)
    if problems:
        return _error(problems[0], len(problems), environment, cluster_types, templates)
    return None


def _error(
    problem: Problem,
    count: int,
    environment: str,
    cluster_types: Mapping[str, ClusterType],
    templates: Mapping[str, Template],
) -> TemplateError:
    folder, target, filename = [*problem.path.split("/", 2), "", ""][:3]
    ct = cluster_types.get(folder)
    roles = dict((f, role) for role, f in ROLE_FILES)
    names = (
        {"reconciler": ct.reconciler, "namespace": ct.namespace_service, "config": ct.config_type}
        if ct
        else {}
    )
    template = templates.get(names.get(roles.get(filename, ""), ""))
    more = f" (+{count - 1} more)" if count > 1 else ""
    who = f"template {template.name!r}, " if template else ""
    message = f"{who}assignment {environment}/{folder}/{target}: {problem.path}: {problem.object}: {problem.rule}{more}"
    if template is None:
        return TemplateError(message)
    return TemplateError(message, file=template.source.file, line=template.source.line)
