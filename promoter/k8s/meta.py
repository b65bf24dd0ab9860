"""``metadata`` as the API server validates it for every kind (``ValidateObjectMeta``): the name
by the kind's own rule, label keys and values, annotation keys and their total size; and label
selectors (``ValidateLabelSelector``) and whether one selects a set of labels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from promoter.k8s.fields import (
    Finding,
    Findings,
    check,
    dns1035_label,
    dns_label,
    dns_subdomain,
    items,
    label_value,
    mapping,
    memoised,
    one_of,
    path_segment,
    qualified_name,
)

ANNOTATIONS_MAX = 256 * 1024  # bytes of all keys and values together (TotalAnnotationSizeLimitB)
CRONJOB_NAME_MAX = 52  # its Jobs are named <name>-<11 digits>, and a Job's name is a label value
JOB_NAME_MAX = 63  # a Job labels its pods with its name (batch.kubernetes.io/job-name)

Rule = Callable[[Any], "str | None"]


def _at_most(limit: int) -> Rule:
    def rule(value: Any) -> str | None:
        return (
            f"must be no more than {limit} characters"
            if isinstance(value, str) and len(value) > limit
            else None
        )

    return rule


# The name rule of each kind (the API server's Validate<Kind>Name); DNS subdomain otherwise.
NAME_RULES: dict[str, tuple[Rule, ...]] = {
    "Namespace": (dns_label,),
    "Service": (dns1035_label,),
    "Role": (path_segment,),
    "ClusterRole": (path_segment,),
    "RoleBinding": (path_segment,),
    "ClusterRoleBinding": (path_segment,),
    "CronJob": (dns_subdomain, _at_most(CRONJOB_NAME_MAX)),
    "Job": (dns_subdomain, _at_most(JOB_NAME_MAX)),
}


def object_meta(kind: str, meta: dict[str, Any]) -> Findings:
    name = meta.get("name")
    if isinstance(name, str) and name:
        yield from check("metadata.name", name, *NAME_RULES.get(kind, (dns_subdomain,)))
    namespace = meta.get("namespace")
    if namespace and dns_label(namespace):
        yield Finding("metadata.namespace", namespace, str(dns_label(namespace)))
    if meta.get("labels"):
        yield from labels(mapping(meta, "labels"), "metadata.labels")
    if meta.get("annotations"):
        yield from annotation_rules(mapping(meta, "annotations"), "metadata.annotations")


def labels(values: dict[str, Any], path: str) -> Findings:
    for key, value in values.items():
        said = qualified_name(key)
        if said:
            yield Finding(f"{path}[{key}]", key, f"the key {said}")
        said = label_value(value)
        if said:
            yield Finding(f"{path}[{key}]", value, said)


def annotation_rules(values: dict[str, Any], path: str) -> Findings:
    size = 0
    for key, value in values.items():
        said = _annotation_key(key)
        if said:
            yield Finding(f"{path}[{key}]", key, f"the key {said}")
            return
        size += len(key) + len(value if isinstance(value, str) else str(value))
    if size > ANNOTATIONS_MAX:
        yield Finding(path, f"{size} bytes", f"may hold at most {ANNOTATIONS_MAX} bytes of keys and values")


@memoised
def _annotation_key(key: Any) -> str | None:
    return qualified_name(key.lower()) if isinstance(key, str) else "must be a string"


OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def selector(body: dict[str, Any], path: str) -> Findings:
    """A ``LabelSelector``: valid labels, expressions with a known operator and fitting values."""
    yield from labels(mapping(body, "matchLabels"), f"{path}.matchLabels")
    for i, expr in items(body, "matchExpressions"):
        where = f"{path}.matchExpressions[{i}]"
        yield from check(f"{where}.key", expr.get("key"), qualified_name)
        operator = expr.get("operator")
        yield from check(f"{where}.operator", operator, lambda v: one_of(v, OPERATORS))
        values = expr.get("values") or []
        if operator in ("In", "NotIn") and not values:
            yield Finding(f"{where}.values", values, "must be specified when `operator` is 'In' or 'NotIn'")
        if operator in ("Exists", "DoesNotExist") and values:
            yield Finding(
                f"{where}.values",
                values,
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
        for j, value in enumerate(values if isinstance(values, list) else ()):
            yield from check(f"{where}.values[{j}]", value, label_value)


def selects(body: dict[str, Any], labels_of: dict[str, Any]) -> bool:
    """Whether the selector ``body`` matches ``labels_of`` (an empty selector matches all)."""
    if any(labels_of.get(key) != value for key, value in mapping(body, "matchLabels").items()):
        return False
    return all(_expression_holds(expr, labels_of) for _, expr in items(body, "matchExpressions"))


# Whether a label passes an expression's operator, given whether it is present and (asked only
# when needed) whether its value is among the expression's values. An operator not listed here
# (the validation says so) excludes nothing.
_OPERATOR_HOLDS: dict[str, Callable[[bool, Callable[[], bool]], bool]] = {
    "In": lambda present, listed: present and listed(),
    "NotIn": lambda present, listed: not (present and listed()),
    "Exists": lambda present, _: present,
    "DoesNotExist": lambda present, _: not present,
}


def _expression_holds(expr: dict[str, Any], labels_of: dict[str, Any]) -> bool:
    holds = _OPERATOR_HOLDS.get(str(expr.get("operator")))
    key, values = str(expr.get("key")), expr.get("values") or []
    return holds is None or holds(key in labels_of, lambda: labels_of[key] in values)


def is_empty(body: Any) -> bool:
    return not isinstance(body, dict) or (not body.get("matchLabels") and not body.get("matchExpressions"))
