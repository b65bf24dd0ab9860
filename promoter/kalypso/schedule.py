"""Kalypso's scheduling, pure: deployment targets, the policies that place them on cluster types,
their namespaces and their platform config, as Kalypso's scheduler computes them: the 2023 one
(7a5558a) or the current one (``controllers/assignment_controller.go``, 2024).

- A deployment target is a Workload's target whose ``environment`` is the one rendered; its name
  is ``<workload>-<target>``; its labels are the target's, the Workload's on top (the Workload
  wins), then ``workload`` and ``workspace``.
- A SchedulingPolicy selects targets (its workspace, when set, must be the target's; its label
  selector matches the target's labels) and cluster types (by their own labels only); every
  selected target goes to every selected cluster type.
- Namespace ``<env>-<workspace>-<target name>`` (``current`` naming: ``<env>-<cluster type>-<target
  name>``), shortened to 63 characters the promoter's way when longer.
- Config (2023): the ``platform-config`` ConfigMaps whose other labels all match the cluster type
  (``cluster-type`` its name, any other its labels), merged shallowly in name order.
- Config (current, ``getConfigData`` and ``isConfigForClusterTypeAndTarget``): the ConfigMaps
  whose other labels (Flux's ``kustomize.toolkit.fluxcd.io/name`` and ``/namespace`` ignored too)
  all match the cluster type or the deployment target (``cluster-type``, ``deployment-target``
  and ``workload`` by name; any other key by the cluster type's label, else the target's), in
  name order; each value that parses as a YAML map or list is merged deeply into what is there
  (``mergeObjects``), a value in single quotes is the text inside them
  (``getObjectFromConfigValue``), any other value replaces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from promoter.errors import ConfigError
from promoter.k8s.names import bounded
from promoter.kalypso.configvalues import merge_values
from promoter.kalypso.generation import RULES, Generation
from promoter.model import ClusterType, ConfigMap, DeploymentTarget, SchedulingPolicy, Workload

PLATFORM_CONFIG = "platform-config"
AZURE_APP_CONFIG = "azure-app-config"
FLUX_NAME = "kustomize.toolkit.fluxcd.io/name"
FLUX_NAMESPACE = "kustomize.toolkit.fluxcd.io/namespace"
FLUX_SYSTEM = "flux-system"


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
    config: dict[str, Any] = field(compare=False)
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


def flux_labels(environment: str, registration: str) -> dict[str, str]:
    """The labels Flux's kustomize-controller writes on a Workload it applies: the current
    scheduler applies a registration's repo with the Kustomization ``<env>-<registration>`` in
    ``flux-system`` (``workloadregistration_controller.go``), and its Workload controller copies
    the Workload's labels onto each deployment target (``workload_controller.go``)."""
    return {FLUX_NAME: f"{environment}-{registration}", FLUX_NAMESPACE: FLUX_SYSTEM}


def current_config(
    ct: ClusterType, target: Target, configmaps: dict[str, ConfigMap], generation: Generation = "head"
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``getConfigData``: the config of one placement and the ConfigMaps it came from. First the
    ``platform-config: "true"`` ConfigMaps whose labels match, by name; then (HEAD) every
    ConfigMap named ``azure-app-config*``, label or not, by name, each key a label path
    (``getLabelsFromKey``) whose labels must match, its keys shortest first."""
    rules = RULES[generation]
    found = _platform_values(ct, target, configmaps)
    if rules.azure_app_config:
        found += _azure_app_values(ct, target, configmaps)
    pairs = (pair for _name, values in found for pair in values)
    merged = merge_values(pairs, by_name=rules.merge_lists_by_name)
    return dict(sorted(merged.items())), tuple(name for name, _values in found)


# the ConfigMaps that give a placement config, by name, each with the (key, value) pairs it gives
_Found = list[tuple[str, list[tuple[str, str]]]]


def _platform_values(ct: ClusterType, target: Target, configmaps: dict[str, ConfigMap]) -> _Found:
    """The ``platform-config`` ConfigMaps whose labels match, all their data."""
    found: _Found = []
    for name in sorted(configmaps):
        cm = configmaps[name]
        if cm.labels.get(PLATFORM_CONFIG) == "true" and _config_for(cm.labels, ct, target):
            found.append((name, [(key, str(value)) for key, value in cm.data.items()]))
    return found


def _azure_app_values(ct: ClusterType, target: Target, configmaps: dict[str, ConfigMap]) -> _Found:
    """The ``azure-app-config*`` ConfigMaps with a label path that matches, those keys only."""
    found: _Found = []
    for name in sorted(configmaps):
        values = (
            _labelled_values(configmaps[name].data, ct, target) if name.startswith(AZURE_APP_CONFIG) else []
        )
        if values:
            found.append((name, values))
    return found


def _labelled_values(data: dict[str, Any], ct: ClusterType, target: Target) -> list[tuple[str, str]]:
    """The keys of ``data`` whose label path matches, shortest first (Go's ``sort.Slice`` by
    length), each as the key the path ends in."""
    values = []
    for path in sorted(data, key=lambda k: (len(k), k)):
        labels, key = labels_from_key(path)
        if _config_for(labels, ct, target):
            values.append((key, str(data[path])))
    return values


def labels_from_key(path: str) -> tuple[dict[str, str], str]:
    """``getLabelsFromKey``: ``cluster-type.large.region.west.DB`` is the labels
    ``{cluster-type: large, region: west}`` and the key ``DB``; with an even number of parts the
    second-to-last is dropped."""
    parts = path.split(".")
    pairs = parts[:-1]
    return {pairs[i]: pairs[i + 1] for i in range(0, len(pairs) - 1, 2)}, parts[-1]


def _config_for(labels: dict[str, str], ct: ClusterType, target: Target) -> bool:
    """``isConfigForClusterTypeAndTarget``: every label but the ignored ones matches. A key the
    cluster type and the target lack matches the empty value, as Go's map lookup gives ``""``."""
    for key, value in labels.items():
        if key in (FLUX_NAME, FLUX_NAMESPACE, PLATFORM_CONFIG):
            continue
        if key == "cluster-type":
            ok = value == ct.name
        elif key == "deployment-target":
            ok = value == target.name
        elif key == "workload":
            ok = value == target.workload.name
        else:
            ok = ct.labels.get(key, "") == value or target.labels.get(key, "") == value
        if not ok:
            return False
    return True


def _twice(first: SchedulingPolicy, second: SchedulingPolicy, ct: ClusterType, t: Target) -> ConfigError:
    """Two policies placing one pair name the same Assignment, ``<workload>-<target>-<cluster
    type>`` (``scheduler/scheduler.go`` ``Schedule``): the second create fails, that policy is
    never Ready, and the environment's PR is never opened."""
    return ConfigError(
        f"SchedulingPolicy {second.name!r} places deployment target {t.name!r} on cluster type "
        f"{ct.name!r}, as {first.name!r} ({first.source}) does: Kalypso's scheduler names both "
        f"Assignments '{t.workload.name}-{t.name}-{ct.name}', the second fails to be created and the "
        "environment's GitOps PR is never opened; select the pair in one policy (or pass "
        "--kalypso-lenient to render it once, promoter's way)",
        file=second.source.file,
        line=second.source.line,
    )


def namespace(environment: str, ct: ClusterType, target: Target, naming: Generation) -> str:
    middle = target.workspace if naming == "2023" else ct.name
    return bounded(f"{environment}-{middle}-{target.name}")


def schedule(
    targets: list[Target],
    cluster_types: dict[str, ClusterType],
    policies: dict[str, SchedulingPolicy],
    configmaps: dict[str, ConfigMap],
    environment: str,
    naming: Generation,
    strict: bool = False,
) -> dict[str, list[Placement]]:
    """The placements per cluster type, every cluster type present (an empty list when nothing
    is placed there), each (cluster type, target) once, in name order. ``strict``: a pair two
    policies place is an error, as it is in Kalypso's scheduler (see ``_twice``)."""
    chosen = _choose(targets, cluster_types, policies, strict)
    return {
        name: _placements(environment, cluster_types[name], placed, configmaps, naming)
        for name, placed in chosen.items()
    }


def _choose(
    targets: list[Target],
    cluster_types: dict[str, ClusterType],
    policies: dict[str, SchedulingPolicy],
    strict: bool,
) -> dict[str, dict[str, Target]]:
    """The targets each cluster type gets, by name, every cluster type present in name order."""
    chosen: dict[str, dict[str, Target]] = {name: {} for name in sorted(cluster_types)}
    placed_by: dict[tuple[str, str], SchedulingPolicy] = {}
    for policy in policies.values():
        selected = [t for t in targets if policy.targets.matches(t.labels, t.workspace)]
        if not selected:
            continue
        for ct in cluster_types.values():
            if policy.cluster_types.matches(ct.labels):
                _claim(placed_by, policy, ct, selected, strict)
                chosen[ct.name].update({t.name: t for t in selected})
    return chosen


def _claim(
    placed_by: dict[tuple[str, str], SchedulingPolicy],
    policy: SchedulingPolicy,
    ct: ClusterType,
    selected: list[Target],
    strict: bool,
) -> None:
    """Note ``policy`` as placing ``selected`` on ``ct`` unless another did first; ``strict``:
    another having done so is an error."""
    for t in selected:
        first = placed_by.setdefault((ct.name, t.name), policy)
        if strict and first is not policy:
            raise _twice(first, policy, ct, t)


def _placements(
    environment: str,
    ct: ClusterType,
    placed: dict[str, Target],
    configmaps: dict[str, ConfigMap],
    naming: Generation,
) -> list[Placement]:
    """The placements on ``ct``, by target name, each with its namespace and config (2023: the
    cluster type's, one for all)."""
    shared: tuple[dict[str, Any], tuple[str, ...]] = (
        platform_config(ct, configmaps) if placed and naming == "2023" else ({}, ())
    )
    out = []
    for _, t in sorted(placed.items()):
        config, sources = shared if naming == "2023" else current_config(ct, t, configmaps, naming)
        out.append(Placement(environment, ct, t, namespace(environment, ct, t, naming), config, sources))
    return out
