"""What each Flux release posts as commit statuses (promoter/gates/flux.py), and validate's
warnings about the commitStatus gates that wait for what their clusters' Flux cannot post
(promoter/gates/flux_checks.py): a warning where the release lacks what the gate needs, none
where it gives it."""

from __future__ import annotations

from typing import Any

import pytest

from promoter.gates import flux
from promoter.gates.flux_checks import gate_warnings
from promoter.model import NEWEST, ClusterType, GateSpec, Release, Source, Versions

SRC = Source("promoter.yaml", 14)
COUNT = {"contexts": ["kustomization/platform/*"], "minCount": 3}
HUB = GateSpec("hub", {"url": "https://hub.example.com"}, Source("promoter.yaml", 15))


@pytest.mark.parametrize(
    ("release", "failures", "switchable", "expr"),
    [
        ((2, 5), True, False, False),
        ((2, 6), True, False, True),
        ((2, 7), True, False, True),
        ((2, 8), False, False, True),
        ((2, 9), True, True, True),
        ((2, 10), True, True, True),
        ((3, 0), True, True, True),
    ],
)
def test_what_each_release_posts(release: Release, failures: bool, switchable: bool, expr: bool) -> None:
    assert flux.posts_failures(release) is failures
    assert flux.success_switchable(release) is switchable
    assert flux.has_status_expr(release) is expr


@pytest.mark.parametrize(
    ("pattern", "shaped"),
    [
        ("kustomization/*", True),
        ("kustomization/platform/*", True),
        ("kustomization/platform/????????", True),
        ("kustomization/platform/qa-*", False),  # names clusters: a commitStatusExpr's
        ("kustomization/*/qa-east-1", False),
        ("argocd/*", False),
        ("kustomization/platform/", False),
    ],
)
def test_which_patterns_read_the_default_contexts(pattern: str, shaped: bool) -> None:
    assert flux.default_shaped(pattern) is shaped


def test_the_release_a_cluster_type_runs_is_its_own_else_the_pipelines() -> None:
    def ct(reconciler: str, versions: Versions = NEWEST) -> ClusterType:
        return ClusterType("t", {}, reconciler, "default", "configmap", SRC, versions)

    pipeline = Versions(flux=(2, 8))
    assert flux.runs_flux(ct("flux"), pipeline) == (2, 8)
    assert flux.runs_flux(ct("flux", Versions(flux=(2, 9))), pipeline) == (2, 9)
    assert flux.runs_flux(ct("flux"), Versions()) is None  # not said: not judged
    assert flux.runs_flux(ct("argocd"), pipeline) is None  # Argo CD's cluster type


def test_the_cause_of_silence_follows_the_release() -> None:
    assert flux.silence_cause([(2, 9), (2, 8)]).startswith("Flux 2.8 posts no failure status")
    assert "DisableCommitStatusEvent" in flux.silence_cause([(2, 9)])
    assert flux.silence_cause([(2, 6), (2, 7)]).startswith("Flux 2.7 posts failures, so the silent clusters")
    assert flux.silence_cause([]).endswith("spec.versions says which Flux runs)")


def warnings(spec: Any, runs: dict[str, Release], *more: GateSpec) -> list[str]:
    return gate_warnings("qa", [GateSpec("commitStatus", spec, SRC), *more], runs)


def test_flux_2_8_warns_that_a_failure_is_silence_unless_a_hub_gate_stands_beside() -> None:
    [line] = warnings("kustomization/platform/*", {"large": (2, 8), "small": (2, 8), "edge": (2, 7)})
    assert line == (
        "promoter.yaml:14: gate commitStatus kustomization/platform/* of qa: cluster types large, small run "
        "Flux 2.8, which posts no failure status (fluxcd/notification-controller#1373): a failed "
        "reconciliation is silence, seen only at the timeout; add a hub gate beside it "
        "(docs/hub.md#the-hub-gate), or run Flux 2.9"
    )
    assert warnings("kustomization/platform/*", {"large": (2, 8)}, HUB) == []


def test_flux_2_9_is_not_warned_of_a_flag_promoter_cannot_see() -> None:
    """A warning nothing in the Pipeline can answer would fail every 2.9 Pipeline under --strict;
    the timeout names the flag instead."""
    assert warnings("kustomization/platform/*", {"edge": (2, 9)}, HUB) == []
    assert warnings("kustomization/platform/*", {"edge": (2, 9)}) == []
    assert "DisableCommitStatusEvent" in flux.silence_cause([(2, 9)])


def test_a_count_over_the_default_contexts_counts_providers() -> None:
    [line] = warnings(COUNT, {"large": (2, 7)})
    assert line.endswith(
        "minCount 3 counts contexts, and Flux's default context kustomization/<name>/<Provider UID prefix> is "
        "one per Provider, not per cluster (clusters whose Providers share a UID share one; a recreated "
        "Provider adds one): give each cluster its own context with a Provider v1beta3 spec.commitStatusExpr "
        "and list those in 'required' (docs/health-gates.md#one-context-per-cluster), or add a hub gate "
        "beside it"
    )
    [old] = warnings(COUNT, {"large": (2, 5)})
    assert old.endswith("Flux 2.5 has no Provider spec.commitStatusExpr (2.6 on): add a hub gate beside it")


@pytest.mark.parametrize(
    ("spec", "runs", "more"),
    [
        (COUNT, {}, ()),  # no Flux release said: promoter does not know the clusters run Flux
        ("kustomization/platform/*", {"large": (2, 7)}, ()),  # one status is enough: 2.7 gives it
        ({"required": ["kustomization/platform/qa-1", "kustomization/platform/qa-2"]}, {"large": (2, 7)}, ()),
        ({"contexts": ["kustomization/platform/qa-*"], "minCount": 3}, {"large": (2, 7)}, ()),
        (COUNT, {"large": (2, 7)}, (HUB,)),  # the hub counts clusters
        ({"contexts": ["argocd/*"], "minCount": 3}, {"large": (2, 8)}, ()),  # Argo CD's statuses
    ],
)
def test_no_warning_where_the_release_gives_what_the_gate_needs(
    spec: Any, runs: dict[str, Release], more: tuple[GateSpec, ...]
) -> None:
    assert warnings(spec, runs, *more) == []
