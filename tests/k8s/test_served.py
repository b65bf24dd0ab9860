"""What a cluster serves follows the releases it declares it runs (promoter/k8s/served.py): a
ClusterType's ``spec.versions``, or the Pipeline's as the default; declaring nothing is judged
by the newest releases (Flux 2.8, Kubernetes 1.33), as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.k8s.manifests import check_tree
from promoter.k8s.served import parse_release
from promoter.model import Versions
from tests.support.helpers import ENV, WORKLOAD, ControlPlaneFactory, pipeline

GIT_V1BETA2 = {
    "apiVersion": "source.toolkit.fluxcd.io/v1beta2",
    "kind": "GitRepository",
    "metadata": {"name": "app", "namespace": "flux-system"},
    "spec": {"interval": "1m", "url": "https://example.com/app", "ref": {"branch": "main"}},
}
HELMRELEASE_V2 = {
    "apiVersion": "helm.toolkit.fluxcd.io/v2",
    "kind": "HelmRelease",
    "metadata": {"name": "app", "namespace": "flux-system"},
    "spec": {
        "interval": "1m",
        "chart": {"spec": {"chart": "app", "sourceRef": {"kind": "HelmRepository", "name": "r"}}},
    },
}
PDB_V1BETA1 = {
    "apiVersion": "policy/v1beta1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "app", "namespace": "apps"},
    "spec": {"minAvailable": 1},
}


def judge(doc: dict[str, Any], runs: Versions) -> tuple[list[str], list[str]]:
    warnings: list[str] = []
    problems = check_tree({"small/app/reconciler.yaml": [doc]}, {"small": runs}, warnings)
    return [p.rule for p in problems], warnings


@pytest.mark.parametrize(
    ("text", "want"), [("1.29", (1, 29)), ("v2.3.1", (2, 3)), ("2.10", (2, 10)), ("two", None), ("2", None)]
)
def test_a_release_is_major_and_minor(text: str, want: tuple[int, int] | None) -> None:
    assert parse_release(text) == want


def test_flux_v1beta2_is_refused_by_default_and_accepted_before_2_8_with_a_warning() -> None:
    rules, _ = judge(GIT_V1BETA2, Versions())
    assert rules == [
        "source.toolkit.fluxcd.io/v1beta2 is not served by the GitRepository CRD (served: source.toolkit.fluxcd.io/v1)"
    ]
    rules, warnings = judge(GIT_V1BETA2, Versions(flux=(2, 3)))
    assert rules == []
    assert warnings == [
        "small: source.toolkit.fluxcd.io/v1beta2 GitRepository is served by Flux 2.3, but Flux 2.8 no longer "
        "serves it: move to source.toolkit.fluxcd.io/v1 before upgrading (promoter has no schema for "
        "v1beta2, so only its apiVersion is checked)"
    ]
    rules, _ = judge(GIT_V1BETA2, Versions(flux=(2, 8)))
    assert rules == [
        "source.toolkit.fluxcd.io/v1beta2 GitRepository is not served by Flux 2.8 (served until Flux 2.8 (not included))"
    ]


def test_a_ga_version_is_refused_before_the_flux_release_that_serves_it() -> None:
    rules, _ = judge(HELMRELEASE_V2, Versions(flux=(2, 2)))
    assert rules == ["helm.toolkit.fluxcd.io/v2 HelmRelease is not served by Flux 2.2 (served from Flux 2.3)"]
    rules, warnings = judge(HELMRELEASE_V2, Versions(flux=(2, 3)))
    assert (rules, warnings) == ([], [])  # served, and checked against the v2 schema
    broken = {**HELMRELEASE_V2, "spec": {**HELMRELEASE_V2["spec"], "nope": 1}}
    rules, _ = judge(broken, Versions(flux=(2, 3)))
    assert len(rules) == 1 and "the HelmRelease CRD schema" in rules[0]


def test_kubernetes_versions_the_newest_no_longer_serves_follow_the_declared_release() -> None:
    rules, _ = judge(PDB_V1BETA1, Versions())
    assert len(rules) == 1 and "policy/v1beta1" in rules[0]
    rules, warnings = judge(PDB_V1BETA1, Versions(kubernetes=(1, 24)))
    assert rules == [] and "served by Kubernetes 1.24, but Kubernetes 1.25 no longer serves it" in warnings[0]
    rules, _ = judge(PDB_V1BETA1, Versions(kubernetes=(1, 25)))
    assert len(rules) == 1


V1BETA2_TEMPLATE = """\
apiVersion: promoter.dev/v1alpha1
kind: Template
metadata: {name: old-flux}
spec:
  type: reconciler
  manifests:
    - |
      apiVersion: source.toolkit.fluxcd.io/v1beta2
      kind: GitRepository
      metadata: {name: "{{ name }}", namespace: "{{ namespace }}"}
      spec: {interval: 1m, url: "{{ manifests.repo }}", ref: {branch: main}}
"""


def control_plane(tmp_path: Path, pipeline_versions: str, cluster_type_versions: str) -> Path:
    text = pipeline("dev", "qa", "prod")
    if pipeline_versions:
        text += f"  versions: {pipeline_versions}\n"
    env = ENV.replace("spec: {reconciler: flux}", f"spec: {{reconciler: old-flux{cluster_type_versions}}}")
    return ControlPlaneFactory(tmp_path).create(
        {"promoter.yaml": text, "workloads/app.yaml": WORKLOAD, "templates/old-flux.yaml": V1BETA2_TEMPLATE},
        {"dev": {"env.yaml": env}, "qa": {"env.yaml": ENV}, "prod": {"env.yaml": ENV}},
    )


@pytest.mark.parametrize(
    ("pipeline_versions", "cluster_type_versions", "ok"),
    [
        ("", "", False),  # the newest: Flux 2.8 serves no v1beta2
        ("{flux: '2.3', kubernetes: '1.30'}", "", True),  # the Pipeline's default
        ("{flux: '2.3'}", ", versions: {flux: '2.8'}", False),  # the cluster type's own wins
        ("", ", versions: {flux: v2.7.2}", True),
    ],
)
def test_the_pipeline_declares_the_default_and_a_cluster_type_its_own(
    tmp_path: Path, pipeline_versions: str, cluster_type_versions: str, ok: bool
) -> None:
    cp = control_plane(tmp_path, pipeline_versions, cluster_type_versions)
    result = CliRunner().invoke(
        cli, ["render", "--control-plane", str(cp), "--env", "dev", "--out", str(tmp_path / "out")]
    )
    if ok:
        assert result.exit_code == 0, result.output
        assert (
            "warning: dev/small: source.toolkit.fluxcd.io/v1beta2 GitRepository is served by Flux 2."
            in result.output
        )
    else:
        assert result.exit_code == 2, result.output
        assert "v1beta2" in result.output and "not served" in result.output


def test_a_release_that_is_not_one_is_bad_input(tmp_path: Path) -> None:
    cp = control_plane(tmp_path, "", ", versions: {flux: latest}")
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(cp)])
    assert result.exit_code == 2
    assert "spec.versions.flux: must be a release such as 1.29 or v2.3.1, got 'latest'" in result.output
