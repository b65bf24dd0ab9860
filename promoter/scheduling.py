"""Scheduling and config (DESIGN section 4), pure: objects in, assignments and config out.

At scale (hundreds of workloads on hundreds of cluster types) testing every ConfigMap against
every assignment costs millions of label comparisons, so ``assign`` uses a ``ConfigIndex``:
per cluster type, the ConfigMaps that its own labels do not rule out, keyed by one label the
deployment target still has to match. Merged configs are memoised by the ConfigMaps they come
from, and schema checks by the config they check. ``config_maps_for`` keeps the plain
definition; both give the same answer.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
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


Pair = tuple[ClusterType, Workload, DeploymentTarget]


def _pairs(main: MainObjects, env: EnvironmentObjects, environment: str) -> list[Pair]:
    """Every (cluster type, workload, target) some policy assigns, each once, sorted by
    cluster type and output name."""
    targets = [(w, t) for w in main.workloads.values() for t in w.targets if t.environment == environment]
    pairs: dict[tuple[str, str], Pair] = {}
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
                pairs.setdefault((ct.name, f"{w.name}-{t.name}"), (ct, w, t))
    return [pairs[k] for k in sorted(pairs)]


def schedule(main: MainObjects, env: EnvironmentObjects, environment: str) -> list[Assignment]:
    """Every (deployment target, cluster type) pair some policy assigns, each once, sorted."""
    return [Assignment(environment, ct, w, t) for ct, w, t in _pairs(main, env, environment)]


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


def _order(cm: ConfigMap) -> tuple[int, str]:
    return specificity(cm), cm.name


def config_maps_for(a: Assignment, configmaps: dict[str, ConfigMap]) -> list[ConfigMap]:
    """The platform-config ConfigMaps of ``a``, in merge order: fewest labels first, then name."""
    chosen = [
        cm
        for cm in configmaps.values()
        if cm.labels.get(PLATFORM_CONFIG) == "true" and _selects(cm.labels, a)
    ]
    return sorted(chosen, key=_order)


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


@dataclass
class _ClusterTypeIndex:
    always: list[Ordered]  # matched by the cluster type alone
    by_fact: dict[Fact, list[tuple[Ordered, tuple[Fact, ...]]]]  # keyed by one label left to match


class ConfigIndex:
    """The platform-config ConfigMaps of many assignments, found without testing each one."""

    def __init__(self, configmaps: dict[str, ConfigMap]) -> None:
        self._by_name = {
            cm.name: cm for cm in configmaps.values() if cm.labels.get(PLATFORM_CONFIG) == "true"
        }
        # A ConfigMap labelled with a cluster-type can only match that cluster type.
        self._general: list[ConfigMap] = []
        self._named: dict[str, list[ConfigMap]] = {}
        for cm in self._by_name.values():
            name = cm.labels.get("cluster-type")
            if name is None:
                self._general.append(cm)
            else:
                self._named.setdefault(name, []).append(cm)
        self._per_cluster_type: dict[str, _ClusterTypeIndex] = {}
        self._merged: dict[tuple[str, ...], dict[str, Any]] = {(): {}}

    def general(self) -> list[ConfigMap]:
        """The ConfigMaps without a cluster-type label, which any cluster type may match."""
        return self._general

    def named(self, ct: ClusterType) -> list[ConfigMap]:
        """The ConfigMaps labelled with ``ct``'s name, the only others it may match."""
        return self._named.get(ct.name, [])

    def _index(self, ct: ClusterType) -> _ClusterTypeIndex:
        found = self._per_cluster_type.get(ct.name)
        if found is not None:
            return found
        index = _ClusterTypeIndex([], {})
        for cm in self._general + self._named.get(ct.name, []):
            left = left_for_target(cm.labels, ct)
            if left is None:
                continue
            if left:
                index.by_fact.setdefault(left[0], []).append((_order(cm), left[1:]))
            else:
                index.always.append(_order(cm))
        self._per_cluster_type[ct.name] = index
        return index

    def names(self, ct: ClusterType, facts: frozenset[Fact]) -> tuple[str, ...]:
        """The names ``config_maps_for`` gives, in merge order, for an assignment to ``ct`` of a
        deployment target with ``facts``."""
        index = self._index(ct)
        chosen = list(index.always)
        for fact in facts:
            for order, rest in index.by_fact.get(fact, ()):
                if all(f in facts for f in rest):
                    chosen.append(order)
        chosen.sort()
        return tuple(name for _, name in chosen)

    def merged(self, names: tuple[str, ...]) -> dict[str, Any]:
        """The config merged from these ConfigMaps in this order; every prefix is memoised, so
        assignments that share their general ConfigMaps share that work. Treat as read-only."""
        found = self._merged.get(names)
        if found is None:
            found = merge_values(self.merged(names[:-1]), self._by_name[names[-1]].data)
            self._merged[names] = found
        return found


def merge_values(base: Any, override: Any) -> Any:
    """Maps merge deeply; lists of maps with a ``name`` merge by name; anything else is replaced."""
    if isinstance(base, dict) and isinstance(override, dict):
        out = dict(base)
        for key, value in override.items():
            if type(value) in _IMMUTABLE:  # a scalar replaces whatever was there
                out[key] = value
            else:
                out[key] = merge_values(base[key], value) if key in base else copy.deepcopy(value)
        return out
    if _named_list(base) and _named_list(override):
        merged = {item["name"]: item for item in base}
        for item in override:
            name = item["name"]
            merged[name] = merge_values(merged[name], item) if name in merged else _copy(item)
        return list(merged.values())
    return _copy(override)


_IMMUTABLE = frozenset({str, int, float, bool, type(None)})


def _copy(value: Any) -> Any:
    """A copy that shares nothing mutable with ``value`` (scalars need no copy)."""
    return value if type(value) in _IMMUTABLE else copy.deepcopy(value)


def _named_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(i, dict) and "name" in i for i in value)


def merged_config(a: Assignment, configmaps: dict[str, ConfigMap]) -> tuple[dict[str, Any], tuple[str, ...]]:
    config: dict[str, Any] = {}
    chosen = config_maps_for(a, configmaps)
    for cm in chosen:
        config = merge_values(config, cm.data)
    return config, tuple(cm.name for cm in chosen)


# Top-level keywords whose verdict on a mapping depends only on the keys they name: a schema
# made of these alone gives the same verdict to configs that agree on those keys.
_LOCAL_KEYWORDS = frozenset(
    {
        "type",
        "required",
        "properties",
        "$schema",
        "$id",
        "$defs",
        "definitions",
        "title",
        "description",
        "$comment",
        "default",
        "examples",
    }
)


class SchemaChecker:
    """Checks merged configs against the ConfigSchemas that match them, with one validator per
    schema. Assignments share most of their config, so verdicts are memoised: by the values of
    the keys a schema names when it is made only of ``_LOCAL_KEYWORDS``, else by config."""

    def __init__(self, schemas: dict[str, ConfigSchema]) -> None:
        self.schemas = sorted(schemas.values(), key=lambda s: s.name)
        self._validators = {
            s.name: jsonschema.validators.validator_for(s.schema)(s.schema) for s in self.schemas
        }
        self._keys = {s.name: _named_keys(s.schema) for s in self.schemas}
        self._verdicts: dict[tuple[str, object], bool] = {}
        self._left: dict[tuple[str, str], tuple[Fact, ...] | None] = {}

    def check(self, a: Assignment, facts: frozenset[Fact] | None = None) -> None:
        """The merged config of ``a`` meets every ConfigSchema whose labels match it."""
        for schema in self.schemas:
            if not self._applies(schema, a, facts):
                continue
            key = (schema.name, self._memo_key(schema.name, a.config))
            valid = self._verdicts.get(key)
            if valid is None:
                valid = self._verdicts[key] = self._validators[schema.name].is_valid(a.config)
            if not valid:
                _raise_schema_error(schema, a, self._validators[schema.name].iter_errors(a.config))

    def _applies(self, schema: ConfigSchema, a: Assignment, facts: frozenset[Fact] | None) -> bool:
        if facts is None:
            return _selects(schema.labels, a)
        key = (schema.name, a.cluster_type.name)
        if key not in self._left:
            self._left[key] = left_for_target(schema.labels, a.cluster_type)
        left = self._left[key]
        return left is not None and all(f in facts for f in left)

    def _memo_key(self, schema: str, config: dict[str, Any]) -> object:
        keys = self._keys[schema]
        if keys is None:
            return id(config)  # configs are memoised by ConfigIndex: alive and shared
        values: list[tuple[object, ...]] = []
        for k in keys:
            if k not in config:
                values.append((k,))
                continue
            value = config[k]
            if type(value) not in _IMMUTABLE:
                return id(config)
            values.append((k, type(value), value))  # the type keeps True apart from 1
        return tuple(values)


def _named_keys(schema: dict[str, Any]) -> tuple[str, ...] | None:
    """The top-level keys a schema looks at, when its verdict depends on nothing else."""
    if not isinstance(schema, dict) or not set(schema) <= _LOCAL_KEYWORDS:
        return None
    required, properties = schema.get("required", []), schema.get("properties", {})
    if not isinstance(required, list) or not isinstance(properties, dict):
        return None
    return tuple(sorted({str(k) for k in required} | {str(k) for k in properties}))


def _raise_schema_error(schema: ConfigSchema, a: Assignment, errors: Iterable[Any]) -> None:
    error = jsonschema.exceptions.best_match(errors)
    if error is None:
        return
    where = "config" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    raise SchemaError(
        f"ConfigSchema {schema.name!r}: assignment {a} ({', '.join(a.config_sources) or 'no ConfigMaps'}): "
        f"{where}: {error.message}",
        file=schema.source.file,
        line=schema.source.line,
    )


def check_schemas(a: Assignment, schemas: dict[str, ConfigSchema]) -> None:
    """The merged config of ``a`` meets every ConfigSchema whose labels match it."""
    SchemaChecker(schemas).check(a)


class EnvironmentSchedule:
    """The assignments of one environment, grouped by cluster type, with config merged and
    checked per cluster type on demand: a render that reuses a cluster type's earlier result
    need not merge its config."""

    def __init__(self, main: MainObjects, env: EnvironmentObjects, environment: str) -> None:
        self.environment = environment
        self.pairs: dict[str, list[Pair]] = {}  # by cluster type name, in order
        for pair in _pairs(main, env, environment):
            self.pairs.setdefault(pair[0].name, []).append(pair)
        self.index = ConfigIndex(env.configmaps)
        self._checker = SchemaChecker(main.schemas)
        self._facts: dict[tuple[str, str], frozenset[Fact]] = {}

    def assign(self, cluster_type: str) -> list[Assignment]:
        """The assignments to one cluster type, config merged and checked (SchemaError)."""
        out = []
        for ct, w, t in self.pairs.get(cluster_type, ()):
            facts = self._facts.get((w.name, t.name))
            if facts is None:
                facts = self._facts[(w.name, t.name)] = target_facts(w, t)
            names = self.index.names(ct, facts)
            done = Assignment(self.environment, ct, w, t, self.index.merged(names), names)
            self._checker.check(done, facts)
            out.append(done)
        return out


def assign(main: MainObjects, env: EnvironmentObjects, environment: str) -> list[Assignment]:
    """Schedule, merge config and check schemas: the assignments ready to render."""
    schedule = EnvironmentSchedule(main, env, environment)
    return [a for cluster_type in schedule.pairs for a in schedule.assign(cluster_type)]
