"""A pod template as the API server validates it inside a Deployment, StatefulSet, DaemonSet,
ReplicaSet, Job or CronJob (``ValidatePodTemplateSpec``): containers (names, ports, resources,
probes, environment, mounts), volumes, and the pod's own enums and numbers.
"""

from __future__ import annotations

from typing import Any

from promoter.k8s import meta, placement
from promoter.k8s.fields import (
    ENV_VAR_NAME,
    Finding,
    Findings,
    check,
    dns_label,
    dns_subdomain,
    iana_svc_name,
    items,
    mapping,
    non_negative,
    one_of,
    optional,
    port_number,
    port_or_name,
    qualified_name,
)
from promoter.k8s.quantity import quantities, within

PROTOCOLS = ("SCTP", "TCP", "UDP")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")


def _protocol(value: Any) -> str | None:
    return one_of(value, PROTOCOLS)


def _env_name(value: Any) -> str | None:
    if not isinstance(value, str) or not ENV_VAR_NAME.fullmatch(value):
        return (
            "a valid environment variable name must consist only of printable ASCII characters other than '='"
        )
    return None


def container_resource_name(name: Any) -> str | None:
    said = qualified_name(name)
    if said or not isinstance(name, str):
        return said
    if "/" not in name:
        if name in STANDARD_CONTAINER_RESOURCES or name.startswith("hugepages-"):
            return None
        return "must be a standard resource for containers (cpu, memory, ephemeral-storage, hugepages-<size>) or a domain-prefixed one"
    domain = name.partition("/")[0]
    if domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
        return "must be a standard resource type or fully qualified (kubernetes.io is reserved)"
    return None


def resources(body: dict[str, Any], path: str) -> Findings:
    """``requests`` and ``limits``: quantities, requests within limits, extended ones equal."""
    raw_requests, raw_limits = mapping(body, "requests"), mapping(body, "limits")
    limits, found = quantities(raw_limits, f"{path}.limits", name_rule=container_resource_name)
    yield from found
    requests, found = quantities(raw_requests, f"{path}.requests", name_rule=container_resource_name)
    yield from found
    yield from within(requests, limits, raw_requests, f"{path}.requests", "limit")
    for name, number in requests.items():
        if "/" in name and limits.get(name, number) != number:
            yield Finding(
                f"{path}.requests[{name}]",
                raw_requests[name],
                "must be equal to the limit of an extended resource",
            )


def ports(container: dict[str, Any], path: str) -> Findings:
    names: set[Any] = set()
    for i, port in items(container, "ports"):
        where = f"{path}.ports[{i}]"
        yield from check(f"{where}.containerPort", port.get("containerPort"), port_number)
        yield from optional(port, "hostPort", where, lambda v: port_number(v, 0))
        yield from optional(port, "protocol", where, _protocol)
        name = port.get("name")
        if name is not None:
            yield from check(f"{where}.name", name, iana_svc_name)
            if name in names:
                yield Finding(f"{where}.name", name, "Duplicate value: port names are unique in a container")
            names.add(name)


def probe(body: dict[str, Any], path: str) -> Findings:
    handlers = [k for k in ("exec", "httpGet", "tcpSocket", "grpc") if body.get(k) is not None]
    if len(handlers) != 1:
        yield Finding(path, body, "must specify exactly one handler of exec, httpGet, tcpSocket and grpc")
    for key in (
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ):
        yield from optional(body, key, path, non_negative)
    for handler in ("httpGet", "tcpSocket"):
        action = mapping(body, handler)
        if action:
            yield from check(f"{path}.{handler}.port", action.get("port"), port_or_name)
    yield from optional(
        mapping(body, "httpGet"), "scheme", f"{path}.httpGet", lambda v: one_of(v, ("HTTP", "HTTPS"))
    )
    yield from optional(mapping(body, "grpc"), "port", f"{path}.grpc", port_number)


def env(container: dict[str, Any], path: str) -> Findings:
    for i, var in items(container, "env"):
        yield from check(f"{path}.env[{i}].name", var.get("name"), _env_name)
        source = mapping(var, "valueFrom")
        if var.get("value") and source:
            yield Finding(
                f"{path}.env[{i}].valueFrom", source, "may not be specified when `value` is not empty"
            )
    for i, source in items(container, "envFrom"):
        yield from optional(source, "prefix", f"{path}.envFrom[{i}]", _env_name)


def container(body: dict[str, Any], path: str, volumes: set[Any]) -> Findings:
    yield from check(f"{path}.name", body.get("name"), dns_label)
    yield from optional(body, "imagePullPolicy", path, lambda v: one_of(v, PULL_POLICIES))
    yield from optional(
        body, "terminationMessagePolicy", path, lambda v: one_of(v, ("File", "FallbackToLogsOnError"))
    )
    yield from ports(body, path)
    yield from env(body, path)
    yield from resources(mapping(body, "resources"), f"{path}.resources")
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        if isinstance(body.get(kind), dict):
            yield from probe(body[kind], f"{path}.{kind}")
            success = body[kind].get("successThreshold")
            if kind != "readinessProbe" and success not in (None, 1):
                yield Finding(f"{path}.{kind}.successThreshold", success, "must be 1")
    yield from placement.container_security(body, path)
    paths: set[Any] = set()
    for i, mount in items(body, "volumeMounts"):
        if mount.get("name") not in volumes:
            yield Finding(
                f"{path}.volumeMounts[{i}].name",
                mount.get("name"),
                "Not found: no volume of the pod has this name",
            )
        if mount.get("mountPath") in paths:
            yield Finding(f"{path}.volumeMounts[{i}].mountPath", mount.get("mountPath"), "must be unique")
        paths.add(mount.get("mountPath"))


def volumes(spec: dict[str, Any], path: str) -> Findings:
    seen: set[Any] = set()
    for i, volume in items(spec, "volumes"):
        where = f"{path}.volumes[{i}]"
        name = volume.get("name")
        yield from check(f"{where}.name", name, dns_label)
        if name in seen:
            yield Finding(f"{where}.name", name, "Duplicate value: volume names are unique in a pod")
        seen.add(name)
        yield from _volume_source(volume, where)


def _volume_source(volume: dict[str, Any], where: str) -> Findings:
    """A volume's one source: its type, an emptyDir's size limit, a configMap's or secret's mode."""
    sources = [k for k, v in volume.items() if k != "name" and v is not None]
    if len(sources) > 1:
        yield Finding(where, sources, "may not specify more than 1 volume type")
    size = mapping(volume, "emptyDir").get("sizeLimit")
    if size is not None:
        _, found = quantities({"sizeLimit": size}, f"{where}.emptyDir", integer=lambda _: False)
        yield from (Finding(f"{where}.emptyDir.sizeLimit", f.value, f.rule) for f in found)
    for key in ("configMap", "secret"):
        yield from optional(mapping(volume, key), "defaultMode", f"{where}.{key}", _mode)


def _mode(value: Any) -> str | None:
    if isinstance(value, int) and not 0 <= value <= 0o777:
        return "must be a number between 0 and 0777 (octal), both inclusive"
    return None


POD_ENUMS = {
    "dnsPolicy": ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"),
    "preemptionPolicy": ("Never", "PreemptLowerPriority"),
}


def pod_spec(spec: dict[str, Any], path: str, restart: tuple[str, ...]) -> Findings:
    yield from optional(spec, "restartPolicy", path, lambda v: one_of(v, restart))
    for key, allowed in POD_ENUMS.items():
        yield from optional(spec, key, path, lambda v, a=allowed: one_of(v, a))
    for key in ("serviceAccountName", "priorityClassName", "schedulerName"):
        yield from optional(spec, key, path, dns_subdomain)
    yield from optional(spec, "hostname", path, dns_label)
    yield from optional(spec, "subdomain", path, dns_label)
    yield from optional(spec, "terminationGracePeriodSeconds", path, non_negative)
    yield from meta.labels(mapping(spec, "nodeSelector"), f"{path}.nodeSelector")
    yield from volumes(spec, path)
    names = {v.get("name") for _, v in items(spec, "volumes")}
    seen: set[Any] = set()
    for key in ("initContainers", "containers"):
        for i, body in items(spec, key):
            if body.get("name") in seen:
                yield Finding(
                    f"{path}.{key}[{i}].name",
                    body.get("name"),
                    "Duplicate value: container names are unique in a pod",
                )
            seen.add(body.get("name"))
            yield from container(body, f"{path}.{key}[{i}]", names)
    yield from placement.tolerations(spec, path)
    yield from placement.affinity(spec, path)
    yield from placement.spread(spec, path)
    yield from placement.pod_security(spec, path)


def template(body: dict[str, Any], path: str, restart: tuple[str, ...]) -> Findings:
    """A ``PodTemplateSpec`` at ``path`` (``spec.template``): its labels and annotations, its spec."""
    template_meta = mapping(body, "metadata")
    yield from meta.labels(mapping(template_meta, "labels"), f"{path}.metadata.labels")
    yield from meta.annotation_rules(mapping(template_meta, "annotations"), f"{path}.metadata.annotations")
    yield from pod_spec(mapping(body, "spec"), f"{path}.spec", restart)
