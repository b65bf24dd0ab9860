"""Role, ClusterRole, RoleBinding and ClusterRoleBinding as the API server validates them
(``pkg/apis/rbac/validation``): rules with verbs and what they apply to, bindings to a role of
the right kind, subjects of a known kind in the right group.
"""

from __future__ import annotations

from typing import Any

from promoter.k8s.fields import (
    Finding,
    Findings,
    check,
    dns_label,
    dns_subdomain,
    items,
    mapping,
    one_of,
    path_segment,
)

RBAC_GROUP = "rbac.authorization.k8s.io"


def rules(body: dict[str, Any], namespaced: bool) -> Findings:
    if not namespaced and body.get("aggregationRule") is not None:
        return
    for i, rule in items(body, "rules"):
        yield from policy_rule(rule, f"rules[{i}]", namespaced)


def policy_rule(rule: dict[str, Any], where: str, namespaced: bool) -> Findings:
    if not rule.get("verbs"):
        yield Finding(
            f"{where}.verbs", rule.get("verbs"), "Required value: verbs must contain at least one value"
        )
    urls = rule.get("nonResourceURLs")
    if urls:
        if namespaced:
            yield Finding(
                f"{where}.nonResourceURLs", urls, "namespaced rules cannot apply to non-resource URLs"
            )
        if rule.get("apiGroups") or rule.get("resources"):
            yield Finding(
                f"{where}.nonResourceURLs",
                urls,
                "rules cannot apply to both regular resources and non-resource URLs",
            )
        return
    if not rule.get("apiGroups"):
        yield Finding(
            f"{where}.apiGroups",
            rule.get("apiGroups"),
            'Required value: resource rules must supply at least one api group ("" is the core group)',
        )
    if not rule.get("resources"):
        yield Finding(
            f"{where}.resources",
            rule.get("resources"),
            "Required value: resource rules must supply at least one resource",
        )


def role(body: dict[str, Any]) -> Findings:
    yield from rules(body, namespaced=True)


def cluster_role(body: dict[str, Any]) -> Findings:
    yield from rules(body, namespaced=False)


def binding(body: dict[str, Any], namespaced: bool) -> Findings:
    ref = mapping(body, "roleRef")
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)
    yield from check("roleRef.kind", ref.get("kind"), lambda v: one_of(v, kinds))
    yield from check("roleRef.apiGroup", ref.get("apiGroup"), lambda v: one_of(v, (RBAC_GROUP,)))
    yield from check(
        "roleRef.name", ref.get("name"), lambda v: "Required value" if not v else path_segment(v)
    )
    for i, subject in items(body, "subjects"):
        yield from _subject(subject, f"subjects[{i}]", namespaced)


def _subject(subject: dict[str, Any], where: str, namespaced: bool) -> Findings:
    kind = subject.get("kind")
    yield from check(f"{where}.kind", kind, lambda v: one_of(v, ("ServiceAccount", "User", "Group")))
    # rbac/v1 defaults a User's and a Group's apiGroup to rbac.authorization.k8s.io
    group = subject.get("apiGroup") or ("" if kind == "ServiceAccount" else RBAC_GROUP)
    if kind == "ServiceAccount":
        yield from _service_account(subject, where, group, namespaced)
    elif kind in ("User", "Group"):
        yield from _user_or_group(subject, where, group)


def _service_account(subject: dict[str, Any], where: str, group: str, namespaced: bool) -> Findings:
    yield from check(f"{where}.name", subject.get("name"), dns_subdomain)
    if group:
        yield Finding(f"{where}.apiGroup", group, 'a ServiceAccount subject has apiGroup ""')
    if not namespaced and not subject.get("namespace"):
        yield Finding(
            f"{where}.namespace",
            None,
            "Required value: a ServiceAccount subject of a ClusterRoleBinding names its namespace",
        )
    if subject.get("namespace"):
        yield from check(f"{where}.namespace", subject["namespace"], dns_label)


def _user_or_group(subject: dict[str, Any], where: str, group: str) -> Findings:
    if group != RBAC_GROUP:
        yield Finding(f"{where}.apiGroup", group, f'supported values: "{RBAC_GROUP}"')
    if not subject.get("name"):
        yield Finding(f"{where}.name", subject.get("name"), "Required value")


def role_binding(body: dict[str, Any]) -> Findings:
    yield from binding(body, namespaced=True)


def cluster_role_binding(body: dict[str, Any]) -> Findings:
    yield from binding(body, namespaced=False)
