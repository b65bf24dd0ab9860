"""The rendered files of an environment, checked as Kubernetes and the reconcilers will judge
them (``k8s.manifests``), before anything is pushed. A problem is bad input (exit 2) naming the
file, the template that made it, the assignment and the rule."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from typing import Any

from promoter.errors import ConfigError, InputError, TemplateError
from promoter.k8s.manifests import Problem, check_tree
from promoter.model import ClusterType, ConfigMap, Template
from promoter.rendering.render import ROLE_FILES

# The rule of k8s.manifests that judges a config key (Flux substitutes only variable names): its
# cause is the user's ConfigMap, so the error names that key's line first (``at_config_key``).
_CONFIG_KEY = re.compile(r"^ConfigMap/\S+ key '(?P<key>[^']*)' is not a Flux variable name")


class ConfigKeyProblem(TemplateError):
    """A rendered problem caused by a config key: ``key``, ``folder`` and ``target`` say which,
    set after construction (so that it pickles back from the rendering child as it is)."""

    key = ""
    folder = ""
    target = ""
    origin = ""  # the template, its line and what it rendered, for the message


def at_config_key(
    err: ConfigKeyProblem, sources: tuple[str, ...], configmaps: Mapping[str, ConfigMap]
) -> InputError:
    """``err`` at the line of the most specific ConfigMap (of ``sources``, merged in that order)
    that holds its key, the template second; ``err`` itself when none does."""
    for name in reversed(sources):
        cm = configmaps.get(name)
        if cm is not None and err.key in cm.data:
            return ConfigError(
                f"ConfigMap {name!r} key {err.key!r} is not a Flux variable name ([_a-zA-Z][_a-zA-Z0-9]*), "
                f"and Flux substitutes config by variable name: {err.origin}",
                file=cm.source.file,
                line=cm.lines.get(err.key, cm.source.line),
            )
    return err


def check_rendered(
    documents: Mapping[str, list[dict[str, Any]]],
    environment: str,
    cluster_types: Mapping[str, ClusterType],
    templates: Mapping[str, Template],
) -> TemplateError | None:
    """The error for the first problem of the rendered files (``<cluster-type>/<target>/<role>.yaml``),
    given as the objects of their documents (what reading the files back gives; the renderer
    holds them), or None. Returned, not raised: a template error anywhere comes before any of these."""
    warnings: list[str] = []
    problems = check_tree(documents, {name: ct.versions for name, ct in cluster_types.items()}, warnings)
    for warning in dict.fromkeys(warnings):  # what an older release serves that the newest does not
        print(f"warning: {environment}/{warning}", file=sys.stderr)
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
    where = (template.source.file, template.source.line) if template else (None, None)
    match = _CONFIG_KEY.match(problem.rule)
    if match is None:
        return TemplateError(message, file=where[0], line=where[1])
    error = ConfigKeyProblem(message, file=where[0], line=where[1])
    error.key, error.folder, error.target = match["key"], folder, target
    made = f" ({template.source})" if template else ""
    error.origin = f"{who.rstrip(', ')}{made} renders {problem.object} for assignment {environment}/{folder}/{target}{more}"
    return error
