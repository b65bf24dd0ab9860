"""Golden cases for Kalypso's scheduling rules, in its generations: the 2023 scheduler (7a5558a)
and the later ones (``controllers/assignment_controller.go``: ``getConfigData``,
``isConfigForClusterTypeAndTarget``, ``getObjectFromConfigValue``, ``mergeObjects``), each case
worked out from that code."""

from __future__ import annotations

from typing import Any

import pytest

from promoter.gotemplate.hashing import go_hash
from promoter.kalypso.configvalues import config_value, merge_objects
from promoter.kalypso.generation import Generation
from promoter.kalypso.schedule import Target, deployment_targets, flux_labels, schedule
from promoter.model import (
    ClusterType,
    ConfigMap,
    DeploymentTarget,
    SchedulingPolicy,
    Selector,
    Source,
    Workload,
)

SRC = Source("x.yaml", 1)


def ct(name: str, **labels: str) -> ClusterType:
    return ClusterType(name, labels, "flux", "ns", "configmap", SRC)


def cm(name: str, labels: dict[str, str], **data: str) -> ConfigMap:
    return ConfigMap(name, {"platform-config": "true", **labels}, data, SRC)


def targets() -> list[Target]:
    app = Workload(
        "app",
        {"tier": "gold"},
        "team",
        (
            DeploymentTarget("web", "dev", {"tier": "bronze", "edge": "true"}, {"repo": "r"}, SRC),
            DeploymentTarget("api", "dev", {"purpose": "api"}, {"repo": "r"}, SRC),
        ),
        SRC,
    )
    return deployment_targets([app], "dev")


def configs(naming: Generation, configmaps: list[ConfigMap]) -> dict[str, dict[str, Any]]:
    """The config of each placement, by '<cluster type>/<target>'."""
    everywhere = SchedulingPolicy("all", Selector(), Selector(), SRC)
    cts = {c.name: c for c in (ct("big", region="west", size="large"), ct("edge", region="east"))}
    placed = schedule(targets(), cts, {"all": everywhere}, {c.name: c for c in configmaps}, "dev", naming)
    return {f"{p.cluster_type.name}/{p.target.name}": p.config for ps in placed.values() for p in ps}


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (" 'postgres://db' ", "postgres://db"),  # trimmed, then every ' at either end
        ("'''a'''", "a"),
        ("'", ""),
        ("  plain  ", "  plain  "),  # a scalar is the value as written, spaces kept
        ("3", "3"),
        ("true", "true"),
        ('"quoted"', '"quoted"'),  # double quotes are not trimmed
        ("a: b\nc: [1, 2]\n", {"a": "b", "c": [1, 2]}),
        ("- x\n- y\n", ["x", True]),  # go-yaml v2 reads y as true
        ("a: [", "a: ["),  # not YAML: as written
        ("a: 1\n---\nb: 2\n", {"a": 1}),  # the first document, as go-yaml's Unmarshal reads
    ],
)
def test_a_config_value_is_parsed_as_get_object_from_config_value_does(value: str, want: Any) -> None:
    assert config_value(value) == want


def test_merge_objects_merges_maps_deeply_and_lists_by_name() -> None:
    existing = {"hosts": ["a"], "tls": False, "svc": [{"name": "api", "port": 1}, {"name": "web"}]}
    new = {"hosts": ["b"], "svc": [{"name": "api", "replicas": 2}, {"name": "db"}, "raw"], "tls": True}
    assert merge_objects(existing, new) == {
        "hosts": ["a", "b"],  # lists are appended
        "tls": True,  # a scalar replaces
        "svc": [{"name": "api", "port": 1, "replicas": 2}, {"name": "web"}, {"name": "db"}, "raw"],
    }
    # maps with no name match one another (Go compares two missing keys as equal)
    assert merge_objects([{"a": 1}, {"b": 2}], [{"c": 3}]) == [{"a": 1, "c": 3}, {"b": 2, "c": 3}]
    assert merge_objects(["a"], {"k": "v"}) == {"k": "v"}  # a list and a map: the new one
    assert merge_objects("old", ["new"]) == ["new"]


CONFIGMAPS = [
    cm("a-all", {}, LOG="info", HOSTS="- a\n"),
    cm("b-west", {"region": "west"}, LOG="debug", HOSTS="- b\n"),  # a cluster type's label
    cm("c-edge", {"edge": "true"}, EDGE="yes"),  # a target's label (big has none)
    cm("d-target", {"deployment-target": "app-api"}, ONLY="api"),
    cm("e-workload", {"workload": "app"}, W=" 'quoted' "),
    cm(
        "f-flux",
        {"kustomize.toolkit.fluxcd.io/name": "x", "kustomize.toolkit.fluxcd.io/namespace": "y"},
        F="f",
    ),
    cm("g-type", {"cluster-type": "edge"}, T="edge"),
    cm("h-absent", {"zone": ""}, Z="empty matches absent"),  # Go's map lookup gives ""
]


def test_current_config_is_selected_per_target_and_merged_deeply() -> None:
    got = configs("head", CONFIGMAPS)
    base = {"F": "f", "W": "quoted", "Z": "empty matches absent"}
    assert got["big/app-web"] == {**base, "LOG": "debug", "HOSTS": ["a", "b"], "EDGE": "yes"}
    assert got["big/app-api"] == {**base, "LOG": "debug", "HOSTS": ["a", "b"], "ONLY": "api"}
    assert got["edge/app-web"] == {**base, "LOG": "info", "HOSTS": ["a"], "EDGE": "yes", "T": "edge"}
    assert got["edge/app-api"] == {**base, "LOG": "info", "HOSTS": ["a"], "ONLY": "api", "T": "edge"}
    assert list(got["big/app-web"]) == sorted(got["big/app-web"])  # keys sorted, as Go sorts them


def test_2023_config_is_the_cluster_types_merged_shallowly_in_name_order() -> None:
    got = configs("2023", CONFIGMAPS)
    # big: a-all, b-west (region), h-absent? no: 2023 compares the label with the cluster type's
    # (a missing label is no match); no target, workload or Flux label is known to it
    assert got["big/app-web"] == got["big/app-api"] == {"LOG": "debug", "HOSTS": "- b\n"}
    assert got["edge/app-web"] == {"LOG": "info", "HOSTS": "- a\n", "T": "edge"}


def test_flux_labels_name_the_registrations_kustomization() -> None:
    assert flux_labels("dev", "hello-world-app") == {
        "kustomize.toolkit.fluxcd.io/name": "dev-hello-world-app",
        "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
    }


def test_a_config_value_hashes_with_go_yamls_types() -> None:
    """``hosts: [y]`` is ``[]interface{}{true}`` in Kalypso: hashed as a bool, not a string."""
    value = config_value("hosts: [y]\nport: 0x50\n")
    assert value == {"hosts": [True], "port": 80}
    assert go_hash(value) == go_hash({"hosts": [True], "port": 80}) != go_hash({"hosts": ["y"], "port": 80})
