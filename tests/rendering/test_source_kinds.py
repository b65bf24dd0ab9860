"""The built-in reconcilers for every manifest store: git, OCI artifacts and Helm charts (from an
HTTP or an OCI repository), for Flux and Argo CD. Each tree is compared with its golden copy and
judged by the same checks as every render (CRD and Kubernetes schemas, reference rules)."""

from __future__ import annotations

import os
from typing import Any

import pytest
import yaml

from promoter.controlplane.repo import ControlPlane
from promoter.k8s import core
from promoter.k8s.manifests import Doc, check_document, check_folder, check_tree
from promoter.rendering.tree import render_environment
from tests.support.helpers import ENV, PIPELINE, ControlPlaneFactory
from tests.support.paths import TESTS

GOLDEN = TESTS / "golden-sources"

WORKLOAD = """\
apiVersion: promoter.dev/v1alpha1
kind: Workload
metadata: {name: shop}
spec:
  workspace: team
  deploymentTargets:
    - {name: git, environment: dev, manifests: {repo: https://example.com/shop, branch: release, path: ./deploy}}
    - {name: oci, environment: dev, manifests: {repo: oci://ghcr.io/acme/shop-manifests, tag: v1.4.0}}
    - {name: oci-semver, environment: dev, manifests: {repo: oci://ghcr.io/acme/shop-manifests, semver: ">=1.4.0 <2.0.0"}}
    - name: helm
      environment: dev
      manifests: {repo: https://charts.example.com, chart: shop, version: 2.1.x, values: {replicas: 2}}
    - name: helm-oci
      environment: dev
      manifests: {repo: oci://ghcr.io/acme/charts, chart: shop, version: 2.1.3}
"""


def parsed(files: dict[str, bytes]) -> dict[str, list[Any]]:
    return {p: list(yaml.safe_load_all(d)) for p, d in files.items()}


@pytest.mark.parametrize("reconciler", ["flux", "argocd"])
def test_every_source_kind_renders_what_reconciles(factory: ControlPlaneFactory, reconciler: str) -> None:
    env = ENV.replace("spec: {reconciler: flux}", f"spec: {{reconciler: {reconciler}}}")
    factory.create(
        main={"promoter.yaml": PIPELINE, "workloads/shop.yaml": WORKLOAD},
        envs={e: {"env.yaml": env} for e in ("dev", "qa", "prod")},
    )
    cp = ControlPlane(factory.path)
    main = cp.main(cp.resolve(None))
    dev = main.pipeline.environments[0]
    rendered = dict(render_environment(main, cp.environment(dev), "dev").files)
    assert check_tree(parsed(rendered)) == []
    folder = GOLDEN / reconciler
    if os.environ.get("PROMOTER_UPDATE_GOLDEN"):
        for path, data in rendered.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_bytes(data)
    expected = {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*.yaml")}
    assert sorted(rendered) == sorted(expected)
    for path, data in rendered.items():
        assert data == expected[path], path
    kinds = {d["kind"] for docs in parsed(rendered).values() for d in docs}
    if reconciler == "flux":
        assert {"GitRepository", "OCIRepository", "HelmRepository", "Kustomization", "HelmRelease"} <= kinds
    else:
        sources = [
            d["spec"]["source"]
            for docs in parsed(rendered).values()
            for d in docs
            if d["kind"] == "Application"
        ]
        assert {"repoURL": "ghcr.io/acme/charts", "chart": "shop"}.items() <= next(
            s for s in sources if s.get("chart") and "ghcr" in s["repoURL"]
        ).items()


def test_golden_source_trees_pass_the_checks() -> None:
    for reconciler in ("flux", "argocd"):
        root = GOLDEN / reconciler
        files = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*.yaml")}
        assert files and check_tree(parsed(files)) == []


def release(namespace: str = "ns", version: str = "v2", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"helm.toolkit.fluxcd.io/{version}",
        "kind": "HelmRelease",
        "metadata": {"name": "app", "namespace": namespace},
        "spec": {"interval": "5m", **spec},
    }


CHART = {"spec": {"chart": "app", "sourceRef": {"kind": "HelmRepository", "name": "app"}}}


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (release(chart={"spec": {"chart": "app"}}), "sourceRef"),
        (release(chart=CHART, releaseName="r" * 54), "releaseName"),
        (release(chart=CHART, valuesFrom=[{"kind": "Map", "name": "x"}]), "valuesFrom.0.kind"),
        (release(chart=CHART, valueFrom=[]), "'valueFrom' was unexpected"),
        (
            {**release(chart=CHART), "apiVersion": "helm.toolkit.fluxcd.io/v2beta1"},
            "not served by the HelmRelease CRD",
        ),
        (
            {
                "apiVersion": "source.toolkit.fluxcd.io/v1",
                "kind": "OCIRepository",
                "metadata": {"name": "a"},
                "spec": {"interval": "1m", "url": "https://ghcr.io/x"},
            },
            "spec.url",
        ),
        (
            {
                "apiVersion": "source.toolkit.fluxcd.io/v1",
                "kind": "HelmRepository",
                "metadata": {"name": "a"},
                "spec": {"url": "s3://bucket"},
            },
            "spec.url",
        ),
        (
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "a"},
                "spec": {
                    "selector": {},
                    "template": {
                        "spec": {
                            "containers": [{"name": "c", "image": "i", "ports": [{"containerPort": "80"}]}]
                        }
                    },
                },
            },
            "containerPort: '80' is not of type 'integer' (the Kubernetes 1.33 schema of Deployment)",
        ),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"PORT": 80}},
            "data.PORT",
        ),
        (
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}, "sepc": {}},
            "'sepc' was unexpected",
        ),
        (
            {"apiVersion": "extensions/v1beta1", "kind": "Ingress", "metadata": {"name": "a"}},
            "serves no Ingress",
        ),
        ({"apiVersion": "v1", "kind": "Deploymnet", "metadata": {"name": "a"}}, "serves no Deploymnet in v1"),
    ],
)
def test_documents_of_every_kind_are_judged_by_their_schema(body: dict[str, Any], says: str) -> None:
    problems = check_document(Doc("t/x.yaml", body))
    assert problems and says in str(problems[0]), problems


def test_custom_resources_of_unknown_groups_pass_and_valid_core_kinds_pass() -> None:
    assert core.check({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"anything": 1}}) is None
    assert (
        core.check(
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "a", "namespace": "b"}}
        )
        is None
    )
    assert core.kubernetes_version() == "1.33"


def _docs(*bodies: dict[str, Any]) -> list[Doc]:
    return [Doc("t/x.yaml", b) for b in bodies]


def _configmap(namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "vals", "namespace": namespace}}


def _helmrepo(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "HelmRepository",
        "metadata": {"name": "app", "namespace": namespace},
        "spec": {"url": "https://c.example.com"},
    }


@pytest.mark.parametrize(
    ("docs", "says"),
    [
        (_docs(release(version="v2beta2")), "exactly one of spec.chart and spec.chartRef"),
        (
            _docs(release(version="v2beta2", chart=CHART, chartRef={"kind": "OCIRepository", "name": "a"})),
            "exactly one",
        ),
        (
            _docs(
                release(chart=CHART, valuesFrom=[{"kind": "ConfigMap", "name": "vals"}]),
                _configmap("other"),
                _helmrepo("ns"),
            ),
            "valuesFrom ConfigMap/vals is in namespace other, not ns",
        ),
        (
            _docs(release(chart=CHART), _helmrepo("flux-system")),
            "chart.spec.sourceRef HelmRepository/app is in namespace flux-system",
        ),
    ],
)
def test_reference_rules_of_helm_releases(docs: list[Doc], says: str) -> None:
    problems = check_folder(docs)
    assert problems and says in str(problems[0]), problems


@pytest.mark.parametrize("spec", [{}, {"chart": CHART, "chartRef": {"kind": "OCIRepository", "name": "a"}}])
def test_a_v2_helm_release_s_chart_rule_is_its_crd_s_own_said_once(spec: dict[str, Any]) -> None:
    (doc,) = _docs(release(**spec))
    found = [str(p) for p in check_document(doc) + check_folder([doc]) if "chart" in str(p)]
    assert len(found) == 1 and "either chart or chartRef must be set" in found[0], found


def test_a_source_named_with_its_namespace_is_fine() -> None:
    ref = {
        "spec": {
            "chart": "app",
            "sourceRef": {"kind": "HelmRepository", "name": "app", "namespace": "flux-system"},
        }
    }
    assert check_folder(_docs(release(chart=ref), _helmrepo("flux-system"))) == []
