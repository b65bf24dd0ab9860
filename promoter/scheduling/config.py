"""Merging the config of an assignment: an index of the platform-config ConfigMaps per cluster
type, and merges memoised by the ConfigMaps they come from."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from promoter.model import (
    ClusterType,
    ConfigMap,
)
from promoter.scheduling.targets import (
    PLATFORM_CONFIG,
    Assignment,
    Fact,
    Ordered,
    config_maps_for,
    left_for_target,
    order,
)


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
                index.by_fact.setdefault(left[0], []).append((order(cm), left[1:]))
            else:
                index.always.append(order(cm))
        self._per_cluster_type[ct.name] = index
        return index

    def names(self, ct: ClusterType, facts: frozenset[Fact]) -> tuple[str, ...]:
        """The names ``config_maps_for`` gives, in merge order, for an assignment to ``ct`` of a
        deployment target with ``facts``."""
        index = self._index(ct)
        chosen = list(index.always)
        for fact in facts:
            for ordered, rest in index.by_fact.get(fact, ()):
                if all(f in facts for f in rest):
                    chosen.append(ordered)
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
        return _merge_maps(base, override)
    if _named_list(base) and _named_list(override):
        return _merge_by_name(base, override)
    return _copy(override)


def _merge_maps(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``base`` with each key of ``override`` merged in (a scalar replaces whatever was there)."""
    out = dict(base)
    for key, value in override.items():
        if type(value) in IMMUTABLE:
            out[key] = value
        else:
            out[key] = merge_values(base[key], value) if key in base else copy.deepcopy(value)
    return out


def _merge_by_name(base: list[dict[str, Any]], override: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items of ``base`` with those of ``override`` merged in by name (new names last)."""
    merged = {item["name"]: item for item in base}
    for item in override:
        name = item["name"]
        merged[name] = merge_values(merged[name], item) if name in merged else _copy(item)
    return list(merged.values())


IMMUTABLE = frozenset({str, int, float, bool, type(None)})


def _copy(value: Any) -> Any:
    """A copy that shares nothing mutable with ``value`` (scalars need no copy)."""
    return value if type(value) in IMMUTABLE else copy.deepcopy(value)


def _named_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(i, dict) and "name" in i for i in value)


def merged_config(a: Assignment, configmaps: dict[str, ConfigMap]) -> tuple[dict[str, Any], tuple[str, ...]]:
    config: dict[str, Any] = {}
    chosen = config_maps_for(a, configmaps)
    for cm in chosen:
        config = merge_values(config, cm.data)
    return config, tuple(cm.name for cm in chosen)
