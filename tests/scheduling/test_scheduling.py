"""Scheduling and config merge: pure functions, no git."""

from __future__ import annotations

from typing import Any

import pytest

from promoter.errors import SchemaError
from promoter.model import (
    ClusterType,
    ConfigMap,
    ConfigSchema,
    DeploymentTarget,
    EnvironmentObjects,
    MainObjects,
    Pipeline,
    Requirement,
    SchedulingPolicy,
    Selector,
    Source,
    Workload,
)
from promoter.scheduling.config import merge_values
from promoter.scheduling.environment import assign
from promoter.scheduling.targets import schedule

SRC = Source("x.yaml", 1)


def ct(name: str, **labels: str) -> ClusterType:
    return ClusterType(name, labels, "flux", "default", "configmap", SRC)


def workload(
    name: str, workspace: str = "team", labels: dict[str, str] | None = None, **targets: dict[str, str]
) -> Workload:
    return Workload(
        name,
        labels or {},
        workspace,
        tuple(DeploymentTarget(t, "dev", lbl, {"repo": "r"}, SRC) for t, lbl in targets.items()),
        SRC,
    )


def cm(name: str, data: dict[str, Any], **labels: str) -> ConfigMap:
    return ConfigMap(name, {"platform-config": "true", **labels}, data, SRC)


def objects(
    workloads: list[Workload],
    cts: list[ClusterType],
    policies: list[SchedulingPolicy],
    cms: list[ConfigMap] = (),
    schemas: list[ConfigSchema] = (),
) -> tuple[MainObjects, EnvironmentObjects]:  # type: ignore[assignment]
    pipeline = Pipeline("p", "../platform", None, (), SRC)
    main = MainObjects("x" * 40, pipeline, {}, {w.name: w for w in workloads}, {s.name: s for s in schemas})
    env = EnvironmentObjects(
        "dev", "e" * 40, {c.name: c for c in cts}, {p.name: p for p in policies}, {c.name: c for c in cms}
    )
    return main, env


def policy(
    name: str, targets: Selector | None = None, cluster_types: Selector | None = None
) -> SchedulingPolicy:
    return SchedulingPolicy(name, targets or Selector(), cluster_types or Selector(), SRC)


def test_policies_assign_each_pair_once_and_sorted() -> None:
    main, env = objects(
        [workload("web", a={"tier": "front"}), workload("db", workspace="data", b={})],
        [ct("large", size="large"), ct("small", size="small")],
        [
            policy("everything"),
            policy("large-only", cluster_types=Selector({"size": "large"})),
        ],
    )
    pairs = [(a.cluster_type.name, a.name) for a in schedule(main, env, "dev")]
    assert pairs == [("large", "db-b"), ("large", "web-a"), ("small", "db-b"), ("small", "web-a")]


def test_selectors_use_workspace_labels_and_expressions() -> None:
    main, env = objects(
        [workload("web", a={"tier": "front"}, b={"tier": "back"}), workload("db", workspace="data", c={})],
        [ct("large", size="large", region="west"), ct("small", size="small", region="east")],
        [
            policy(
                "front-on-west",
                Selector({"tier": "front"}, workspace="team"),
                Selector(match_expressions=(Requirement("region", "In", ("west",)),)),
            ),
            policy(
                "data-not-large",
                Selector(workspace="data"),
                Selector(match_expressions=(Requirement("size", "NotIn", ("large",)),)),
            ),
            policy(
                "by-implicit-name", Selector({"deployment-target": "b"}), Selector({"cluster-type": "small"})
            ),
        ],
    )
    pairs = [(a.cluster_type.name, a.name) for a in schedule(main, env, "dev")]
    assert pairs == [("large", "web-a"), ("small", "db-c"), ("small", "web-b")]


def test_config_merges_by_specificity_then_name() -> None:
    main, env = objects(
        [workload("web", labels={"team": "shop"}, a={"purpose": "test"})],
        [ct("large", region="west", size="large")],
        [policy("all")],
        [
            # name order would put these first; specificity puts them last
            cm(
                "a-most-specific",
                {"LEVEL": "three", "NESTED": {"x": 3}},
                region="west",
                purpose="test",
                workload="web",
            ),
            cm("b-two", {"LEVEL": "two-b", "NESTED": {"y": 2}}, region="west", size="large"),
            cm("a-two", {"LEVEL": "two-a", "ONLY_A": True}, region="west", team="shop"),
            cm("z-general", {"LEVEL": "one", "NESTED": {"x": 1, "z": 1}, "PORT": 8080}),
            cm("not-matching", {"LEVEL": "never"}, region="east"),
            ConfigMap("not-platform-config", {}, {"LEVEL": "never"}, SRC),
        ],
    )
    [a] = assign(main, env, "dev")
    assert a.config_sources == ("z-general", "a-two", "b-two", "a-most-specific")
    assert a.config == {"LEVEL": "three", "NESTED": {"x": 3, "z": 1, "y": 2}, "PORT": 8080, "ONLY_A": True}
    assert isinstance(a.config["PORT"], int)  # values keep their YAML types


def test_merge_values_rules() -> None:
    base = {"list": [1, 2], "named": [{"name": "a", "v": 1}, {"name": "b", "v": 2}], "m": {"k": 1}}
    over = {"list": [3], "named": [{"name": "b", "v": 20, "w": 1}, {"name": "c", "v": 3}], "m": "scalar"}
    assert merge_values(base, over) == {
        "list": [3],
        "named": [{"name": "a", "v": 1}, {"name": "b", "v": 20, "w": 1}, {"name": "c", "v": 3}],
        "m": "scalar",
    }
    assert base["named"][1] == {"name": "b", "v": 2}  # inputs are not mutated


def test_schema_failure_names_assignment_value_and_schema() -> None:
    schema = ConfigSchema(
        "base",
        {},
        {"type": "object", "required": ["REGION"], "properties": {"PORT": {"type": "integer"}}},
        Source("schemas/base.yaml", 4),
    )
    main, env = objects(
        [workload("web", a={})],
        [ct("large")],
        [policy("all")],
        [cm("d", {"REGION": "w", "PORT": "eighty"})],
        [schema],
    )
    with pytest.raises(SchemaError) as err:
        assign(main, env, "dev")
    assert str(err.value) == (
        "x.yaml:1: config.PORT: 'eighty' is not of type 'integer' (ConfigMap 'd', checked by "
        "ConfigSchema 'base' at schemas/base.yaml:4 for assignment dev/large/web-a, config merged from d)"
    )


def test_schema_failure_points_at_the_configmap_line_that_wrote_the_value() -> None:
    schema = ConfigSchema(
        "base",
        {},
        {"properties": {"DB": {"properties": {"port": {"type": "integer"}}}}},
        Source("schemas/base.yaml", 4),
    )
    general = ConfigMap(
        "defaults",
        {"platform-config": "true"},
        {"DB": {"port": "x"}},
        Source("dev:config.yaml", 2),
        {"DB": 9},
    )
    large = ConfigMap(
        "large",
        {"platform-config": "true", "size": "large"},
        {"DB": {"host": "h"}, "PORT": 1},
        Source("dev:config.yaml", 12),
        {"DB": 19, "PORT": 20},
    )
    main, env = objects(
        [workload("web", a={})], [ct("big", size="large")], [policy("all")], [general, large], [schema]
    )
    with pytest.raises(SchemaError) as err:
        assign(main, env, "dev")
    # "large" is merged last but does not set DB.port: the message points at "defaults"
    assert str(err.value).startswith(
        "dev:config.yaml:9: config.DB.port: 'x' is not of type 'integer' (ConfigMap 'defaults',"
    )


def test_schema_applies_only_where_its_labels_match() -> None:
    schema = ConfigSchema("west-needs-db", {"region": "west"}, {"required": ["DB"]}, SRC)
    main, env = objects(
        [workload("web", a={})],
        [ct("east", region="east"), ct("west", region="west")],
        [policy("all")],
        [],
        [schema],
    )
    with pytest.raises(SchemaError, match="dev/west/web-a"):
        assign(main, env, "dev")
