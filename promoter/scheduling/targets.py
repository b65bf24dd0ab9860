"""Deployment targets x cluster types -> assignments, and which ConfigMaps match an assignment
(DESIGN section 4), pure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from promoter.k8s.names import bounded
from promoter.model import (
    ClusterType,
    ConfigMap,
    DeploymentTarget,
    EnvironmentObjects,
    MainObjects,
    SchedulingPolicy,
    Workload,
)

PLATFORM_CONFIG = "platform-config"

# Label keys that name the assignment itself; they match nothing else (DESIGN section 4).
IMPLICIT_KEYS = frozenset({"cluster-type", "deployment-target", "workload", "workspace"})


@dataclass(frozen=True)
class Assignment:
    """One deployment target scheduled onto one cluster type in one environment."""

    environment: str
    cluster_type: ClusterType
    workload: Workload
    target: DeploymentTarget
    config: dict[str, Any] = field(default_factory=dict, compare=False)
    config_sources: tuple[str, ...] = field(default=(), compare=False)

    @property
    def name(self) -> str:
        return target_name(self.workload, self.target)

    @property
    def labels(self) -> dict[str, str]:
        """Target labels over workload labels."""
        return {**self.workload.labels, **self.target.labels}

    @property
    def namespace(self) -> str:
        return bounded(f"{self.environment}-{self.cluster_type.name}-{self.name}")

    @property
    def dependencies(self) -> list[dict[str, str]]:
        """The targets this one comes after on its cluster type (``dependsOn``), each with the
        ``name`` and ``namespace`` its own assignment there has (what the templates name them)."""
        out = []
        for workload, target, _ in self.target.depends_on:
            name = bounded(f"{workload}-{target}")
            namespace = bounded(f"{self.environment}-{self.cluster_type.name}-{name}")
            out.append(
                {"workload": workload, "deployment_target": target, "name": name, "namespace": namespace}
            )
        return out

    def __str__(self) -> str:
        return f"{self.environment}/{self.cluster_type.name}/{self.name}"


def target_name(workload: Workload, target: DeploymentTarget) -> str:
    """A deployment target's name in the output: ``<workload>-<target>``, within 63 characters."""
    return bounded(f"{workload.name}-{target.name}")


def target_selection_labels(workload: Workload, target: DeploymentTarget) -> dict[str, str]:
    """What a deploymentTargetSelector sees: the labels plus implicit workload/target names."""
    return {
        **workload.labels,
        **target.labels,
        "workload": workload.name,
        "deployment-target": target.name,
        "workspace": workload.workspace,
    }


def cluster_type_selection_labels(ct: ClusterType) -> dict[str, str]:
    return {**ct.labels, "cluster-type": ct.name}


Pair = tuple[ClusterType, Workload, DeploymentTarget]


def pairs(main: MainObjects, env: EnvironmentObjects, environment: str) -> list[Pair]:
    """Every (cluster type, workload, target) some policy assigns, each once, sorted by
    cluster type and output name."""
    targets = _targets_of(main, environment)
    pairs: dict[tuple[str, str], Pair] = {}
    for policy in env.policies.values():
        chosen_targets = [(w, t) for w, t in targets if _selects_target(policy, w, t)]
        if not chosen_targets:
            continue
        for ct in env.cluster_types.values():
            if policy.cluster_types.matches(cluster_type_selection_labels(ct)):
                for w, t in chosen_targets:
                    pairs.setdefault((ct.name, target_name(w, t)), (ct, w, t))
    return [pairs[k] for k in sorted(pairs)]


def _targets_of(main: MainObjects, environment: str) -> list[tuple[Workload, DeploymentTarget]]:
    """(workload, target) of each deployment target of ``environment``."""
    return [(w, t) for w in main.workloads.values() for t in w.targets if t.environment == environment]


def _selects_target(policy: SchedulingPolicy, w: Workload, t: DeploymentTarget) -> bool:
    return policy.targets.matches(target_selection_labels(w, t), w.workspace)


def idle_policies(
    main: MainObjects, env: EnvironmentObjects, environment: str
) -> list[tuple[SchedulingPolicy, str]]:
    """The policies that assign nothing, each with why (a selector that selects nothing: a silent
    no-op otherwise); none where the environment has no target or no cluster type at all."""
    targets = _targets_of(main, environment)
    if not targets or not env.cluster_types:
        return []
    idle = []
    for policy in env.policies.values():
        why = _why_idle(policy, targets, env, environment)
        if why:
            idle.append((policy, why))
    return idle


def _why_idle(
    policy: SchedulingPolicy,
    targets: list[tuple[Workload, DeploymentTarget]],
    env: EnvironmentObjects,
    environment: str,
) -> str:
    """Why ``policy`` assigns nothing (the first of its selectors that selects nothing); empty if it does."""
    if not any(_selects_target(policy, w, t) for w, t in targets):
        return f"its deploymentTargetSelector matches no deployment target of {environment}"
    if not any(
        policy.cluster_types.matches(cluster_type_selection_labels(ct)) for ct in env.cluster_types.values()
    ):
        return f"its clusterTypeSelector matches no cluster type of {environment}"
    return ""


def schedule(main: MainObjects, env: EnvironmentObjects, environment: str) -> list[Assignment]:
    """Every (deployment target, cluster type) pair some policy assigns, each once, sorted."""
    return [Assignment(environment, ct, w, t) for ct, w, t in pairs(main, env, environment)]


def label_matches(key: str, value: str, a: Assignment) -> bool:
    """Does one ConfigMap/ConfigSchema label match this assignment? (DESIGN section 4)"""
    implicit = {
        "cluster-type": a.cluster_type.name,
        "deployment-target": a.target.name,
        "workload": a.workload.name,
        "workspace": a.workload.workspace,
    }
    if key in implicit:
        return value == implicit[key] or (key == "deployment-target" and value == a.name)
    return a.cluster_type.labels.get(key) == value or a.labels.get(key) == value


def selects(labels: dict[str, str], a: Assignment) -> bool:
    return all(label_matches(k, v, a) for k, v in labels.items() if k != PLATFORM_CONFIG)


def specificity(cm: ConfigMap) -> int:
    return sum(1 for k in cm.labels if k != PLATFORM_CONFIG)


def order(cm: ConfigMap) -> tuple[int, str]:
    return specificity(cm), cm.name


def config_maps_for(a: Assignment, configmaps: dict[str, ConfigMap]) -> list[ConfigMap]:
    """The platform-config ConfigMaps of ``a``, in merge order: fewest labels first, then name."""
    chosen = [
        cm for cm in configmaps.values() if cm.labels.get(PLATFORM_CONFIG) == "true" and selects(cm.labels, a)
    ]
    return sorted(chosen, key=order)


Fact = tuple[str, str]


def target_facts(workload: Workload, target: DeploymentTarget) -> frozenset[Fact]:
    """The (key, value) labels a deployment target matches on its own side of an assignment."""
    facts = {(k, v) for k, v in {**workload.labels, **target.labels}.items() if k not in IMPLICIT_KEYS}
    facts.update(
        {
            ("workload", workload.name),
            ("workspace", workload.workspace),
            ("deployment-target", target.name),
            ("deployment-target", f"{workload.name}-{target.name}"),
        }
    )
    return frozenset(facts)


def left_for_target(labels: dict[str, str], ct: ClusterType) -> tuple[Fact, ...] | None:
    """The labels of a ConfigMap or ConfigSchema that the deployment target must match on
    ``ct``; None when ``ct`` rules it out. (A label matches the cluster type's label or the
    target's; the implicit keys match only their own names: see label_matches.)"""
    left = []
    for key, value in labels.items():
        if key == PLATFORM_CONFIG:
            continue
        if key == "cluster-type":
            if value != ct.name:
                return None
        elif key in IMPLICIT_KEYS or ct.labels.get(key) != value:
            left.append((key, value))
    return tuple(sorted(left))


Ordered = tuple[int, str]  # (specificity, name): the merge order
