"""The small kinds as the API server validates them: Namespace, ConfigMap and Secret (keys, sizes,
base64, each Secret type's required keys), ResourceQuota and LimitRange (resource names and
quantities), PersistentVolumeClaim.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from promoter.k8s import meta
from promoter.k8s.fields import Finding, Findings, check, items, mapping, memoised, one_of, qualified_name
from promoter.k8s.pods import container_resource_name
from promoter.k8s.quantity import quantities
from promoter.k8s.values import key_problem
from promoter.k8s.workloads import claim_spec

DATA_MAX = 1024 * 1024  # bytes of a ConfigMap's or Secret's data together
SECRET_KEYS = {
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
}


def namespace(body: dict[str, Any]) -> Findings:
    for i, name in enumerate(mapping(body, "spec").get("finalizers") or ()):
        yield from check(f"spec.finalizers[{i}]", name, qualified_name)


@memoised
def _key(value: Any) -> str | None:
    if value in (".", "..") or (isinstance(value, str) and value.startswith("..")):
        return "may not be '.' or '..' or start with '..'"
    said = key_problem(value) if isinstance(value, str) else "must be a string"
    return said.split(" is ", 1)[-1] if said else None


def configmap(body: dict[str, Any]) -> Findings:
    data, binary = mapping(body, "data"), mapping(body, "binaryData")
    size = 0
    for key, value in data.items():
        said = _key(key)
        if said:
            yield Finding(f"data[{key}]", key, f"the key {said}")
        size += len(value) if isinstance(value, str) else len(str(value))
    for key, value in binary.items():
        yield from check(f"binaryData[{key}]", key, _key)
        yield from check(f"binaryData[{key}]", value, _base64)
        if key in data:
            yield Finding(f"binaryData[{key}]", key, "Duplicate value: the key is also in data")
        size += len(str(value)) * 3 // 4
    if size > DATA_MAX:
        yield Finding("data", f"{size} bytes", f"Too long: must have at most {DATA_MAX} bytes")


def _base64(value: Any) -> str | None:
    try:
        base64.b64decode("".join(str(value).split()), validate=True)
    except (binascii.Error, ValueError):
        return (
            "is not base64: the API server decodes data values as standard base64 (use stringData for text)"
        )
    return None


def secret(body: dict[str, Any]) -> Findings:
    data, text = mapping(body, "data"), mapping(body, "stringData")
    size = 0
    for field, values in (("data", data), ("stringData", text)):
        for key, value in values.items():
            yield from check(f"{field}[{key}]", key, _key)
            if field == "data":
                yield from check(f"data[{key}]", value, _base64)
            size += len(str(value)) * 3 // 4 if field == "data" else len(str(value))
    if size > DATA_MAX:
        yield Finding("data", f"{size} bytes", f"Too long: must have at most {DATA_MAX} bytes")
    yield from secret_type(body, {**data, **text})


def secret_type(body: dict[str, Any], data: dict[str, Any]) -> Findings:
    kind = body.get("type") or "Opaque"
    for key in SECRET_KEYS.get(kind, ()):
        if key not in data:
            yield Finding(f"data[{key}]", None, f"Required value: a Secret of type {kind} holds {key}")
    yield from SECRET_TYPE_RULES.get(kind, _no_rule)(body, data)


def _basic_auth(body: dict[str, Any], data: dict[str, Any]) -> Findings:
    if "username" not in data and "password" not in data:
        yield Finding("data", None, "a Secret of type kubernetes.io/basic-auth holds username or password")


def _service_account_token(body: dict[str, Any], data: dict[str, Any]) -> Findings:
    if not mapping(mapping(body, "metadata"), "annotations").get("kubernetes.io/service-account.name"):
        yield Finding("metadata.annotations[kubernetes.io/service-account.name]", None, "Required value")


def _docker_config(key: str) -> Callable[[dict[str, Any], dict[str, Any]], Findings]:
    """A docker config Secret's ``key``, where present, holds JSON (base64 in ``data``)."""

    def rule(body: dict[str, Any], data: dict[str, Any]) -> Findings:
        plain = "stringData" in body and key in mapping(body, "stringData")
        if key in data and not _is_json(data, key, plain):
            yield Finding(f"data[{key}]", "(the value)", "must be valid JSON")

    return rule


def _no_rule(body: dict[str, Any], data: dict[str, Any]) -> Findings:
    return iter(())


# The rules of each Secret type beyond its required keys (SECRET_KEYS).
SECRET_TYPE_RULES = {
    "kubernetes.io/basic-auth": _basic_auth,
    "kubernetes.io/service-account-token": _service_account_token,
    "kubernetes.io/dockercfg": _docker_config(".dockercfg"),
    "kubernetes.io/dockerconfigjson": _docker_config(".dockerconfigjson"),
}


def _is_json(data: dict[str, Any], key: str, plain: bool) -> bool:
    try:
        text = data[key] if plain else base64.b64decode("".join(str(data[key]).split())).decode()
        json.loads(text)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return False
    return True


QUOTA_RESOURCES = frozenset(
    {
        *(
            "cpu",
            "memory",
            "ephemeral-storage",
            "pods",
            "services",
            "replicationcontrollers",
            "resourcequotas",
        ),
        *("secrets", "persistentvolumeclaims", "configmaps", "services.nodeports", "services.loadbalancers"),
        *("requests.cpu", "requests.memory", "requests.storage", "requests.ephemeral-storage"),
        *("limits.cpu", "limits.memory", "limits.ephemeral-storage"),
    }
)
QUOTA_SCOPES = (
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
)


def quota_resource_name(name: Any) -> str | None:
    said = qualified_name(name)
    if said or not isinstance(name, str) or "/" in name:
        return said
    if name in QUOTA_RESOURCES or name.startswith(("requests.hugepages-", "hugepages-")):
        return None
    return "must be a standard resource for quota (pods, services, requests.cpu, limits.memory, ...) or domain-prefixed"


def resource_quota(body: dict[str, Any]) -> Findings:
    spec = mapping(body, "spec")
    yield from quantities(mapping(spec, "hard"), "spec.hard", name_rule=quota_resource_name)[1]
    for i, scope in enumerate(spec.get("scopes") or ()):
        yield from check(f"spec.scopes[{i}]", scope, lambda v: one_of(v, QUOTA_SCOPES))
    for i, expr in items(mapping(spec, "scopeSelector"), "matchExpressions"):
        where = f"spec.scopeSelector.matchExpressions[{i}]"
        yield from check(f"{where}.scopeName", expr.get("scopeName"), lambda v: one_of(v, QUOTA_SCOPES))
        yield from check(f"{where}.operator", expr.get("operator"), lambda v: one_of(v, meta.OPERATORS))


LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")


def limit_range(body: dict[str, Any]) -> Findings:
    for i, item in items(mapping(body, "spec"), "limits"):
        where = f"spec.limits[{i}]"
        kind = item.get("type")
        yield from check(
            f"{where}.type",
            kind,
            lambda v: one_of(v, LIMIT_TYPES) if "/" not in str(v) else qualified_name(v),
        )
        rule = container_resource_name if kind in ("Pod", "Container") else qualified_name
        parsed: dict[str, dict[str, Decimal]] = {}
        for key in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            parsed[key], found = quantities(
                mapping(item, key), f"{where}.{key}", name_rule=rule, integer=lambda _: False
            )
            yield from found
        if kind == "Pod" and (item.get("default") or item.get("defaultRequest")):
            yield Finding(
                f"{where}.default",
                item.get("default") or item.get("defaultRequest"),
                "may not be specified when `type` is 'Pod'",
            )
        yield from _ordered(parsed, item, where)


def _ordered(parsed: dict[str, dict[str, Decimal]], item: dict[str, Any], where: str) -> Findings:
    """min <= defaultRequest <= default <= max, and a ratio of at least 1."""
    chain = ("min", "defaultRequest", "default", "max")
    for low_index, low in enumerate(chain):
        for high in chain[low_index + 1 :]:
            for name, number in parsed[low].items():
                bound = parsed[high].get(name)
                if bound is not None and number > bound:
                    yield Finding(
                        f"{where}.{low}[{name}]",
                        mapping(item, low)[name],
                        f"must be less than or equal to {high} value {mapping(item, high)[name]}",
                    )
    for name, ratio in parsed["maxLimitRequestRatio"].items():
        if ratio < 1:
            yield Finding(
                f"{where}.maxLimitRequestRatio[{name}]",
                mapping(item, "maxLimitRequestRatio")[name],
                "ratio must be greater than or equal to 1",
            )


def persistent_volume_claim(body: dict[str, Any]) -> Findings:
    yield from claim_spec(mapping(body, "spec"), "spec")
