"""Scheduling and config (DESIGN section 4), pure: objects in, assignments and config out."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from promoter.errors import SchemaError
from promoter.model import (
    ClusterType,
    ConfigMap,
    ConfigSchema,
    DeploymentTarget,
    EnvironmentObjects,
    MainObjects,
    Workload,
)

PLATFORM_CONFIG = "platform-config"


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
        return f"{self.workload.name}-{self.target.name}"

    @property
    def labels(self) -> dict[str, str]:
        """Target labels over workload labels."""
        return {**self.workload.labels, **self.target.labels}

    @property
    def namespace(self) -> str:
        return f"{self.environment}-{self.cluster_type.name}-{self.name}"

    def __str__(self) -> str:
        return f"{self.environment}/{self.cluster_type.name}/{self.name}"


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


def schedule(main: MainObjects, env: EnvironmentObjects, environment: str) -> list[Assignment]:
    """Every (deployment target, cluster type) pair some policy assigns, each once, sorted."""
    targets = [(w, t) for w in main.workloads.values() for t in w.targets if t.environment == environment]
    pairs: dict[tuple[str, str], Assignment] = {}
    for policy in env.policies.values():
        chosen_targets = [
            (w, t) for w, t in targets if policy.targets.matches(target_selection_labels(w, t), w.workspace)
        ]
        if not chosen_targets:
            continue
        for ct in env.cluster_types.values():
            if not policy.cluster_types.matches(cluster_type_selection_labels(ct)):
                continue
            for w, t in chosen_targets:
                key = (ct.name, f"{w.name}-{t.name}")
                if key not in pairs:
                    pairs[key] = Assignment(environment, ct, w, t)
    return [pairs[k] for k in sorted(pairs)]


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


def _selects(labels: dict[str, str], a: Assignment) -> bool:
    return all(label_matches(k, v, a) for k, v in labels.items() if k != PLATFORM_CONFIG)


def specificity(cm: ConfigMap) -> int:
    return sum(1 for k in cm.labels if k != PLATFORM_CONFIG)


def config_maps_for(a: Assignment, configmaps: dict[str, ConfigMap]) -> list[ConfigMap]:
    """The platform-config ConfigMaps of ``a``, in merge order: fewest labels first, then name."""
    chosen = [
        cm
        for cm in configmaps.values()
        if cm.labels.get(PLATFORM_CONFIG) == "true" and _selects(cm.labels, a)
    ]
    return sorted(chosen, key=lambda cm: (specificity(cm), cm.name))


def merge_values(base: Any, override: Any) -> Any:
    """Maps merge deeply; lists of maps with a ``name`` merge by name; anything else is replaced."""
    if isinstance(base, dict) and isinstance(override, dict):
        out = dict(base)
        for key, value in override.items():
            out[key] = merge_values(base[key], value) if key in base else copy.deepcopy(value)
        return out
    if _named_list(base) and _named_list(override):
        merged = {item["name"]: item for item in base}
        for item in override:
            name = item["name"]
            merged[name] = merge_values(merged[name], item) if name in merged else copy.deepcopy(item)
        return list(merged.values())
    return copy.deepcopy(override)


def _named_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(i, dict) and "name" in i for i in value)


def merged_config(a: Assignment, configmaps: dict[str, ConfigMap]) -> tuple[dict[str, Any], tuple[str, ...]]:
    config: dict[str, Any] = {}
    chosen = config_maps_for(a, configmaps)
    for cm in chosen:
        config = merge_values(config, cm.data)
    return config, tuple(cm.name for cm in chosen)


def check_schemas(a: Assignment, schemas: dict[str, ConfigSchema]) -> None:
    """The merged config of ``a`` meets every ConfigSchema whose labels match it."""
    for schema in sorted(schemas.values(), key=lambda s: s.name):
        if not _selects(schema.labels, a):
            continue
        validator_cls = jsonschema.validators.validator_for(schema.schema)
        error = jsonschema.exceptions.best_match(validator_cls(schema.schema).iter_errors(a.config))
        if error is not None:
            where = "config" + "".join(
                f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path
            )
            raise SchemaError(
                f"ConfigSchema {schema.name!r}: assignment {a} ({', '.join(a.config_sources) or 'no ConfigMaps'}): "
                f"{where}: {error.message}",
                file=schema.source.file,
                line=schema.source.line,
            )


def assign(main: MainObjects, env: EnvironmentObjects, environment: str) -> list[Assignment]:
    """Schedule, merge config and check schemas: the assignments ready to render."""
    out = []
    for a in schedule(main, env, environment):
        config, sources = merged_config(a, env.configmaps)
        done = Assignment(a.environment, a.cluster_type, a.workload, a.target, config, sources)
        check_schemas(done, main.schemas)
        out.append(done)
    return out
