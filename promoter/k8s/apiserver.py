"""What the Kubernetes API server checks of Kubernetes' own kinds beyond their OpenAPI schemas:
the rules of ``pkg/apis/*/validation`` for the kinds templates render (metadata of every kind;
quantities, ports, names, enums, selectors, schedules of the kinds below), applied to a
document that already matches its schema (``promoter.k8s.core``).

A document yields its first problem only, as the API server's first error would be read; each
names the field path, the value and the rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from promoter.k8s import meta, network, objects, rbac, workloads
from promoter.k8s.fields import Finding, Findings, mapping

Rules = Callable[[dict[str, Any]], Findings]

# (group, kind) -> the kind's own rules; every kind of a Kubernetes group gets the metadata rules.
KINDS: dict[tuple[str, str], Rules] = {
    ("", "Namespace"): objects.namespace,
    ("", "ConfigMap"): objects.configmap,
    ("", "Secret"): objects.secret,
    ("", "ResourceQuota"): objects.resource_quota,
    ("", "LimitRange"): objects.limit_range,
    ("", "PersistentVolumeClaim"): objects.persistent_volume_claim,
    ("", "Service"): network.service,
    ("networking.k8s.io", "Ingress"): network.ingress,
    ("networking.k8s.io", "NetworkPolicy"): network.network_policy,
    ("apps", "Deployment"): workloads.deployment,
    ("apps", "StatefulSet"): workloads.statefulset,
    ("apps", "DaemonSet"): workloads.daemonset,
    ("apps", "ReplicaSet"): workloads.replicaset,
    ("batch", "Job"): workloads.job,
    ("batch", "CronJob"): workloads.cronjob,
    ("rbac.authorization.k8s.io", "Role"): rbac.role,
    ("rbac.authorization.k8s.io", "ClusterRole"): rbac.cluster_role,
    ("rbac.authorization.k8s.io", "RoleBinding"): rbac.role_binding,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): rbac.cluster_role_binding,
}


def findings(body: dict[str, Any]) -> Findings:
    """Every problem of a Kubernetes kind's document, metadata first."""
    group = str(body.get("apiVersion", "")).rpartition("/")[0]
    kind = str(body.get("kind", ""))
    yield from meta.object_meta(kind, mapping(body, "metadata"))
    rules = KINDS.get((group, kind))
    if rules is not None:
        yield from rules(body)


def first(body: dict[str, Any]) -> Finding | None:
    """The first problem the API server would report, or None."""
    return next(findings(body), None)
