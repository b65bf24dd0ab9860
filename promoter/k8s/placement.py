"""Where a pod may run and as whom, as the API server validates a pod spec: tolerations, node and
pod (anti-)affinity, topology spread constraints, and the pod's and its containers' security
contexts (user and group ids, seccomp profiles, privilege escalation).
"""

from __future__ import annotations

from typing import Any

from promoter.k8s import meta
from promoter.k8s.fields import Finding, Findings, check, items, mapping, one_of, optional, qualified_name

ID_MAX = 2147483647
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def tolerations(spec: dict[str, Any], path: str) -> Findings:
    for i, toleration in items(spec, "tolerations"):
        where = f"{path}.tolerations[{i}]"
        yield from optional(toleration, "operator", where, lambda v: one_of(v, ("Equal", "Exists")))
        yield from optional(
            toleration, "effect", where, lambda v: one_of(v, ("NoSchedule", "PreferNoSchedule", "NoExecute"))
        )
        if toleration.get("key"):
            yield from check(f"{where}.key", toleration["key"], qualified_name)
        if toleration.get("operator") == "Exists" and toleration.get("value"):
            yield Finding(f"{where}.operator", "Exists", "value must be empty when `operator` is 'Exists'")


def _weight(value: Any) -> str | None:
    if not isinstance(value, int) or not 1 <= value <= 100:
        return "must be in the range 1-100"
    return None


def node_requirement(expr: dict[str, Any], where: str) -> Findings:
    yield from check(f"{where}.key", expr.get("key"), qualified_name)
    operator, values = expr.get("operator"), expr.get("values") or []
    yield from check(f"{where}.operator", operator, lambda v: one_of(v, NODE_OPERATORS))
    if operator in ("In", "NotIn") and not values:
        yield Finding(f"{where}.values", values, "must be specified when `operator` is 'In' or 'NotIn'")
    if operator in ("Exists", "DoesNotExist") and values:
        yield Finding(
            f"{where}.values", values, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        )
    if operator in ("Gt", "Lt") and (len(values) != 1 or not str(values[0]).lstrip("-").isdigit()):
        yield Finding(f"{where}.values", values, "must be one integer when `operator` is 'Gt' or 'Lt'")


def _node_term(term: dict[str, Any], where: str) -> Findings:
    for key in ("matchExpressions", "matchFields"):
        for i, expr in items(term, key):
            yield from node_requirement(expr, f"{where}.{key}[{i}]")


def _pod_term(term: dict[str, Any], where: str) -> Findings:
    if not term.get("topologyKey"):
        yield Finding(f"{where}.topologyKey", term.get("topologyKey"), "Required value: can not be empty")
    else:
        yield from check(f"{where}.topologyKey", term["topologyKey"], qualified_name)
    for key in ("labelSelector", "namespaceSelector"):
        if isinstance(term.get(key), dict):
            yield from meta.selector(term[key], f"{where}.{key}")


REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _weighted(body: dict[str, Any], where: str, term_key: str, term_rule: Any) -> Findings:
    """The preferred terms of an affinity: a weight of 1-100 and a valid term each."""
    for i, preferred in items(body, PREFERRED):
        at = f"{where}.{PREFERRED}[{i}]"
        yield from check(f"{at}.weight", preferred.get("weight"), _weight)
        yield from term_rule(mapping(preferred, term_key), f"{at}.{term_key}")


def affinity(spec: dict[str, Any], path: str) -> Findings:
    body = mapping(spec, "affinity")
    node, where = mapping(body, "nodeAffinity"), f"{path}.affinity.nodeAffinity"
    required = mapping(node, REQUIRED)
    if required and not required.get("nodeSelectorTerms"):
        yield Finding(
            f"{where}.{REQUIRED}.nodeSelectorTerms", [], "must have at least one node selector term"
        )
    for i, term in items(required, "nodeSelectorTerms"):
        yield from _node_term(term, f"{where}.{REQUIRED}.nodeSelectorTerms[{i}]")
    yield from _weighted(node, where, "preference", _node_term)
    for kind in ("podAffinity", "podAntiAffinity"):
        pod, where = mapping(body, kind), f"{path}.affinity.{kind}"
        for i, term in items(pod, REQUIRED):
            yield from _pod_term(term, f"{where}.{REQUIRED}[{i}]")
        yield from _weighted(pod, where, "podAffinityTerm", _pod_term)


def spread(spec: dict[str, Any], path: str) -> Findings:
    seen: set[tuple[Any, Any]] = set()
    for i, constraint in items(spec, "topologySpreadConstraints"):
        where = f"{path}.topologySpreadConstraints[{i}]"
        yield from _spread_constraint(constraint, where)
        pair = (constraint.get("topologyKey"), constraint.get("whenUnsatisfiable"))
        if pair in seen:
            yield Finding(
                where,
                f"{pair[0]}, {pair[1]}",
                "Duplicate value: the same topologyKey and whenUnsatisfiable twice",
            )
        seen.add(pair)


def _spread_constraint(constraint: dict[str, Any], where: str) -> Findings:
    skew = constraint.get("maxSkew")
    if not isinstance(skew, int) or skew <= 0:
        yield Finding(f"{where}.maxSkew", skew, "must be greater than zero")
    yield from check(
        f"{where}.topologyKey",
        constraint.get("topologyKey"),
        lambda v: "Required value: can not be empty" if not v else qualified_name(v),
    )
    when = constraint.get("whenUnsatisfiable")
    yield from check(
        f"{where}.whenUnsatisfiable", when, lambda v: one_of(v, ("DoNotSchedule", "ScheduleAnyway"))
    )
    yield from _min_domains(constraint.get("minDomains"), when, where)
    for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        yield from optional(constraint, key, where, lambda v: one_of(v, ("Honor", "Ignore")))
    if isinstance(constraint.get("labelSelector"), dict):
        yield from meta.selector(constraint["labelSelector"], f"{where}.labelSelector")


def _min_domains(domains: Any, when: Any, where: str) -> Findings:
    if domains is None:
        return
    if not isinstance(domains, int) or domains <= 0:
        yield Finding(f"{where}.minDomains", domains, "must be greater than zero")
    if when != "DoNotSchedule":
        yield Finding(
            f"{where}.minDomains", domains, "can only use minDomains if whenUnsatisfiable=DoNotSchedule"
        )


def _id(value: Any) -> str | None:
    if isinstance(value, int) and not 0 <= value <= ID_MAX:
        return f"must be between 0 and {ID_MAX}, inclusive"
    return None


def _seccomp(body: dict[str, Any], where: str) -> Findings:
    profile = mapping(body, "seccompProfile")
    if not profile:
        return
    kind = profile.get("type")
    yield from check(
        f"{where}.seccompProfile.type",
        kind,
        lambda v: one_of(v, ("RuntimeDefault", "Unconfined", "Localhost")),
    )
    local = profile.get("localhostProfile")
    if kind == "Localhost" and not local:
        yield Finding(
            f"{where}.seccompProfile.localhostProfile",
            local,
            "Required value: a Localhost profile names its file",
        )
    if kind != "Localhost" and local:
        yield Finding(
            f"{where}.seccompProfile.localhostProfile", local, "can only be set when `type` is 'Localhost'"
        )


def pod_security(spec: dict[str, Any], path: str) -> Findings:
    context = mapping(spec, "securityContext")
    where = f"{path}.securityContext"
    for key in ("runAsUser", "runAsGroup", "fsGroup"):
        yield from optional(context, key, where, _id)
    for i, group in enumerate(context.get("supplementalGroups") or ()):
        yield from check(f"{where}.supplementalGroups[{i}]", group, _id)
    yield from optional(
        context, "fsGroupChangePolicy", where, lambda v: one_of(v, ("OnRootMismatch", "Always"))
    )
    yield from _seccomp(context, where)


def container_security(container: dict[str, Any], path: str) -> Findings:
    context = mapping(container, "securityContext")
    if not context:
        return
    where = f"{path}.securityContext"
    for key in ("runAsUser", "runAsGroup"):
        yield from optional(context, key, where, _id)
    yield from optional(context, "procMount", where, lambda v: one_of(v, ("Default", "Unmasked")))
    if context.get("allowPrivilegeEscalation") is False:
        if context.get("privileged") is True:
            yield Finding(
                f"{where}",
                "privileged: true",
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            )
        if "CAP_SYS_ADMIN" in (mapping(context, "capabilities").get("add") or ()):
            yield Finding(
                f"{where}.capabilities.add",
                "CAP_SYS_ADMIN",
                "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
            )
    yield from _seccomp(context, where)
