"""Service, Ingress and NetworkPolicy as the API server validates them: ports and their names,
protocols and the other enums, hosts, paths and backends, peers and CIDRs.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

from promoter.k8s import meta
from promoter.k8s.fields import (
    Finding,
    Findings,
    check,
    dns1035_label,
    dns_label,
    dns_subdomain,
    iana_svc_name,
    items,
    mapping,
    one_of,
    optional,
    port_number,
    port_or_name,
    qualified_name,
)
from promoter.k8s.pods import PROTOCOLS

SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")


def _protocol(value: Any) -> str | None:
    return one_of(value, PROTOCOLS)


def service(body: dict[str, Any]) -> Findings:
    spec = mapping(body, "spec")
    kind = spec.get("type", "ClusterIP")
    yield from check("spec.type", kind, lambda v: one_of(v, SERVICE_TYPES))
    yield from optional(spec, "sessionAffinity", "spec", lambda v: one_of(v, ("ClientIP", "None")))
    for key in ("externalTrafficPolicy", "internalTrafficPolicy"):
        yield from optional(spec, key, "spec", lambda v: one_of(v, ("Cluster", "Local")))
    if spec.get("externalTrafficPolicy") and kind not in ("NodePort", "LoadBalancer"):
        yield Finding(
            "spec.externalTrafficPolicy",
            spec["externalTrafficPolicy"],
            "may only be set when `type` is 'NodePort' or 'LoadBalancer'",
        )
    if kind == "ExternalName":
        yield from check("spec.externalName", spec.get("externalName"), dns_subdomain)
    headless = spec.get("clusterIP") == "None"
    if not spec.get("ports") and not headless and kind != "ExternalName":
        yield Finding("spec.ports", spec.get("ports"), "Required value: a Service needs at least one port")
    yield from service_ports(spec, kind)
    yield from meta.labels(mapping(spec, "selector"), "spec.selector")
    yield from service_addresses(spec)


def _ip(value: Any) -> str | None:
    return (
        None if isinstance(value, str) and _is_ip(value) else "must be a valid IP address (such as 10.0.0.10)"
    )


def _cidr(value: Any) -> str | None:
    return None if _network(value) is not None else "must be a valid CIDR (such as 10.0.0.0/16)"


def service_addresses(spec: dict[str, Any]) -> Findings:
    """Cluster IPs, families, external IPs and source ranges."""
    for where, ip in _cluster_ips(spec):
        if ip != "None":
            yield from check(where, ip, _ip)
    yield from _each(spec, "externalIPs", _ip)
    yield from _each(spec, "loadBalancerSourceRanges", _cidr, clean=_stripped)
    policies = ("SingleStack", "PreferDualStack", "RequireDualStack")
    yield from optional(spec, "ipFamilyPolicy", "spec", lambda v: one_of(v, policies))
    yield from _each(spec, "ipFamilies", lambda v: one_of(v, ("IPv4", "IPv6")))


def _cluster_ips(spec: dict[str, Any]) -> list[tuple[str, Any]]:
    """Each cluster IP with its field path: those of ``clusterIPs``, else ``clusterIP``."""
    if spec.get("clusterIPs"):
        return [(f"spec.clusterIPs[{i}]", ip) for i, ip in enumerate(spec["clusterIPs"])]
    return [("spec.clusterIP", spec["clusterIP"])] if spec.get("clusterIP") else []


def _each(
    spec: dict[str, Any],
    key: str,
    rule: Callable[[Any], str | None],
    clean: Callable[[Any], Any] = lambda v: v,
) -> Findings:
    """The rule on each value of the list ``spec.<key>`` (as ``clean`` reads it)."""
    for i, value in enumerate(spec.get(key) or ()):
        yield from check(f"spec.{key}[{i}]", clean(value), rule)


def _stripped(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


def service_ports(spec: dict[str, Any], kind: str) -> Findings:
    ports = list(items(spec, "ports"))
    names: set[Any] = set()
    seen: set[tuple[Any, Any]] = set()
    for i, port in ports:
        where = f"spec.ports[{i}]"
        name = port.get("name")
        if len(ports) > 1 and not name:
            yield Finding(
                f"{where}.name", name, "Required value: each port of a Service with several ports is named"
            )
        if name:
            yield from check(f"{where}.name", name, dns_label)
            if name in names:
                yield Finding(f"{where}.name", name, "Duplicate value: port names are unique in a Service")
            names.add(name)
        yield from check(f"{where}.port", port.get("port"), port_number)
        yield from optional(port, "protocol", where, _protocol)
        yield from optional(port, "targetPort", where, port_or_name)
        yield from optional(port, "appProtocol", where, qualified_name)
        if port.get("nodePort") is not None:
            yield from check(f"{where}.nodePort", port["nodePort"], port_number)
            if kind not in ("NodePort", "LoadBalancer"):
                yield Finding(
                    f"{where}.nodePort", port["nodePort"], f"may not be used when `type` is '{kind}'"
                )
        key = (port.get("port"), port.get("protocol", "TCP"))
        if key in seen:
            yield Finding(where, f"{key[0]}/{key[1]}", "Duplicate value: the same port and protocol twice")
        seen.add(key)


PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")


def _host(value: Any) -> str | None:
    if isinstance(value, str) and _is_ip(value):
        return "must be a DNS name, not an IP address"
    text = value[2:] if isinstance(value, str) and value.startswith("*.") else value
    said = dns_subdomain(text)
    return f"{said} (a wildcard '*.' may start it)" if said else None


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def ingress(body: dict[str, Any]) -> Findings:
    spec = mapping(body, "spec")
    yield from optional(spec, "ingressClassName", "spec", dns_subdomain)
    if spec.get("defaultBackend") is not None:
        yield from backend(mapping(spec, "defaultBackend"), "spec.defaultBackend")
    elif not spec.get("rules"):
        yield Finding(
            "spec.rules",
            spec.get("rules"),
            "Required value: either `defaultBackend` or `rules` must be specified",
        )
    for i, tls in items(spec, "tls"):
        for j, host in enumerate(tls.get("hosts") or ()):
            yield from check(f"spec.tls[{i}].hosts[{j}]", host, _host)
    for i, rule in items(spec, "rules"):
        if rule.get("host"):
            yield from check(f"spec.rules[{i}].host", rule["host"], _host)
        for j, path in items(mapping(rule, "http"), "paths"):
            yield from ingress_path(path, f"spec.rules[{i}].http.paths[{j}]")


def ingress_path(path: dict[str, Any], where: str) -> Findings:
    kind = path.get("pathType")
    yield from check(f"{where}.pathType", kind, lambda v: one_of(v, PATH_TYPES))
    text = path.get("path")
    required = kind in ("Exact", "Prefix")  # ImplementationSpecific may leave it empty
    if (required or text) and not (isinstance(text, str) and text.startswith("/")):
        yield Finding(f"{where}.path", text, "must be an absolute path")
    yield from backend(mapping(path, "backend"), f"{where}.backend")


def backend(body: dict[str, Any], where: str) -> Findings:
    svc, resource = body.get("service"), body.get("resource")
    if (svc is None) == (resource is None):
        yield Finding(where, body, "must specify exactly one of `service` and `resource`")
        return
    if not isinstance(svc, dict):
        return
    yield from check(f"{where}.service.name", svc.get("name"), dns1035_label)
    port = mapping(svc, "port")
    if ("name" in port) == ("number" in port):
        yield Finding(f"{where}.service.port", port, "must specify exactly one of `name` and `number`")
    yield from optional(port, "name", f"{where}.service.port", iana_svc_name)
    yield from optional(port, "number", f"{where}.service.port", port_number)


def network_policy(body: dict[str, Any]) -> Findings:
    spec = mapping(body, "spec")
    yield from meta.selector(mapping(spec, "podSelector"), "spec.podSelector")
    types = spec.get("policyTypes") or []
    for i, kind in enumerate(types):
        yield from check(f"spec.policyTypes[{i}]", kind, lambda v: one_of(v, ("Ingress", "Egress")))
    if len(types) > 2:
        yield Finding("spec.policyTypes", types, "may not have more than 2 entries")
    for direction, peers_key in (("ingress", "from"), ("egress", "to")):
        for i, rule in items(spec, direction):
            where = f"spec.{direction}[{i}]"
            for j, port in items(rule, "ports"):
                yield from policy_port(port, f"{where}.ports[{j}]")
            for j, peer in items(rule, peers_key):
                yield from policy_peer(peer, f"{where}.{peers_key}[{j}]")


def policy_port(port: dict[str, Any], where: str) -> Findings:
    yield from optional(port, "protocol", where, _protocol)
    yield from optional(port, "port", where, port_or_name)
    end = port.get("endPort")
    if end is not None:
        if not isinstance(port.get("port"), int):
            yield Finding(f"{where}.endPort", end, "may only be specified when `port` is a number")
        elif isinstance(end, int) and end < port["port"]:
            yield Finding(f"{where}.endPort", end, "must be greater than or equal to `port`")
        yield from check(f"{where}.endPort", end, port_number)


def policy_peer(peer: dict[str, Any], where: str) -> Findings:
    block = peer.get("ipBlock")
    if block is not None and (
        peer.get("podSelector") is not None or peer.get("namespaceSelector") is not None
    ):
        yield Finding(where, peer, "may not specify `ipBlock` with `podSelector` or `namespaceSelector`")
    for key in ("podSelector", "namespaceSelector"):
        if isinstance(peer.get(key), dict):
            yield from meta.selector(peer[key], f"{where}.{key}")
    if isinstance(block, dict):
        yield from ip_block(block, f"{where}.ipBlock")


def ip_block(block: dict[str, Any], where: str) -> Findings:
    cidr = _network(block.get("cidr"))
    if cidr is None:
        yield Finding(
            f"{where}.cidr", block.get("cidr"), "must be a valid CIDR (such as 10.0.0.0/16 or 2001:db8::/48)"
        )
        return
    for i, text in enumerate(block.get("except") or ()):
        inner = _network(text)
        if inner is None:
            yield Finding(f"{where}.except[{i}]", text, "must be a valid CIDR (such as 10.0.1.0/24)")
        elif inner.version != cidr.version or not inner.subnet_of(cidr) or inner == cidr:  # type: ignore[arg-type]
            yield Finding(
                f"{where}.except[{i}]", text, f"must be a strict subset of `cidr` {block.get('cidr')}"
            )


def _network(text: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    if not isinstance(text, str) or "/" not in text:
        return None
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        return None
