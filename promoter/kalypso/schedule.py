"""Kalypso's scheduling, pure: deployment targets, the policies that place them on cluster types,
their namespaces and their platform config, as Kalypso's scheduler (7a5558a) computes them.

- A deployment target is a Workload's target whose ``environment`` is the one rendered; its name
  is ``<workload>-<target>``; its labels are the target's, the Workload's on top (the Workload
  wins), then ``workload`` and ``workspace``.
- A SchedulingPolicy selects targets (its workspace, when set, must be the target's; its label
  selector matches the target's labels) and cluster types (by their own labels only); every
  selected target goes to every selected cluster type.
- Namespace ``<env>-<workspace>-<target name>`` (``current`` naming: ``<env>-<cluster type>-<target
  name>``), shortened to 63 characters the promoter's way when longer.
- Config: the ``platform-config`` ConfigMaps whose other labels all match the cluster type
  (``cluster-type`` its name, any other its labels), merged shallowly in name order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from promoter.errors import ConfigError
from promoter.k8s.names import bounded
from promoter.model import ClusterType, ConfigMap, DeploymentTarget, SchedulingPolicy, Workload

Naming = Literal["2023", "current"]
NAMINGS: tuple[Naming, ...] = ("2023", "current")
PLATFORM_CONFIG = "platform-config"


@dataclass(frozen=True)
class Target:
    """One deployment target of the environment rendered."""

    workload: Workload
    target: DeploymentTarget
    name: str
    labels: dict[str, str]

    @property
    def workspace(self) -> str:
        return self.workload.workspace


@dataclass(frozen=True)
class Placement:
    """A deployment target on a cluster type, with its namespace and config."""

    environment: str
    cluster_type: ClusterType
    target: Target
    namespace: str
    config: dict[str, str] = field(compare=False)
    config_sources: tuple[str, ...] = field(compare=False)

    def __str__(self) -> str:
        return f"{self.environment}/{self.cluster_type.name}/{self.target.name}"


def deployment_targets(workloads: list[Workload], environment: str) -> list[Target]:
    """The targets of ``environment``, by name; two targets of one name are an error."""
    found: dict[str, Target] = {}
    for workload in workloads:
        for t in workload.targets:
            if t.environment != environment:
                continue
            name = f"{workload.name}-{t.name}"
            if name in found:
                first = found[name].target.source
                raise ConfigError(
                    f"deployment target {name!r} is defined twice (also at {first})",
                    file=t.source.file,
                    line=t.source.line,
                )
            labels = {
                **t.labels,
                **workload.labels,
                "workload": workload.name,
                "workspace": workload.workspace,
            }
            found[name] = Target(workload, t, name, labels)
    return [found[k] for k in sorted(found)]


def platform_config(
    ct: ClusterType, configmaps: dict[str, ConfigMap]
) -> tuple[dict[str, str], tuple[str, ...]]:
    """The merged config of a cluster type and the names of the ConfigMaps it came from."""
    merged: dict[str, str] = {}
    names: list[str] = []
    for name in sorted(configmaps):
        cm = configmaps[name]
        if cm.labels.get(PLATFORM_CONFIG) != "true":
            continue
        if all(_label_matches(ct, k, v) for k, v in cm.labels.items() if k != PLATFORM_CONFIG):
            merged.update({k: str(v) for k, v in cm.data.items()})
            names.append(name)
    return merged, tuple(names)


def _label_matches(ct: ClusterType, key: str, value: str) -> bool:
    if key == "cluster-type":
        return value == ct.name
    return ct.labels.get(key) == value


def namespace(environment: str, ct: ClusterType, target: Target, naming: Naming) -> str:
    middle = target.workspace if naming == "2023" else ct.name
    return bounded(f"{environment}-{middle}-{target.name}")


def schedule(
    targets: list[Target],
    cluster_types: dict[str, ClusterType],
    policies: dict[str, SchedulingPolicy],
    configmaps: dict[str, ConfigMap],
    environment: str,
    naming: Naming,
) -> dict[str, list[Placement]]:
    """The placements per cluster type, every cluster type present (an empty list when nothing
    is placed there), each (cluster type, target) once, in name order."""
    chosen: dict[str, dict[str, Target]] = {name: {} for name in sorted(cluster_types)}
    for policy in policies.values():
        selected = [t for t in targets if policy.targets.matches(t.labels, t.workspace)]
        if not selected:
            continue
        for ct in cluster_types.values():
            if policy.cluster_types.matches(ct.labels):
                chosen[ct.name].update({t.name: t for t in selected})
    out: dict[str, list[Placement]] = {}
    for ct_name, placed in chosen.items():
        ct = cluster_types[ct_name]
        config, sources = platform_config(ct, configmaps) if placed else ({}, ())
        out[ct_name] = [
            Placement(environment, ct, t, namespace(environment, ct, t, naming), config, sources)
            for _, t in sorted(placed.items())
        ]
    return out
