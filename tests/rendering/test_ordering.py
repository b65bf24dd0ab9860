"""Ordering on a cluster, rendered: the built-in Flux template writes ``spec.dependsOn`` naming
the Kustomization (or HelmRelease) of each dependency in the same folder, the Argo CD template an
``argocd.argoproj.io/sync-wave`` from the dependency depth; a custom template reads the same
variables. Every tree passes the checks of every render and the controllers' own CRDs as
../shared/crds holds them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from promoter.controlplane.repo import ControlPlane
from promoter.errors import TemplateError
from promoter.k8s.manifests import check_tree
from promoter.model import MainObjects
from promoter.rendering.builtins import all_templates
from promoter.rendering.memo import folder_digests
from promoter.rendering.tree import render_environment
from promoter.scheduling.environment import EnvironmentSchedule
from tests.support.helpers import PIPELINE, ControlPlaneFactory
from tests.support.ordering import HELM, environment, target, workload
from tests.support.paths import ROOT

SHARED_CRDS = ROOT.parent / "shared" / "crds"
CRD_FILES = {
    "Kustomization": "kustomize.toolkit.fluxcd.io_kustomizations.json",
    "HelmRelease": "helm.toolkit.fluxcd.io_helmreleases.json",
    "GitRepository": "source.toolkit.fluxcd.io_gitrepositories.json",
    "HelmRepository": "source.toolkit.fluxcd.io_helmrepositories.json",
    "Application": "argoproj.io_applications.json",
}
# crds <- db <- app, and app on crds as well: depths 0, 1, 2
CHAIN = {
    "workloads/crds.yaml": workload("crds", target("dev")),
    "workloads/db.yaml": workload("db", target("main", depends_on="[{workload: crds}]")),
    "workloads/app.yaml": workload(
        "app", target("web", depends_on="[{workload: db, target: main}, {workload: crds, target: dev}]")
    ),
}
Tree = dict[str, list[dict[str, Any]]]


def _load(factory: ControlPlaneFactory, files: dict[str, str], dev: str) -> tuple[ControlPlane, MainObjects]:
    envs = {e: {"env.yaml": dev} for e in ("dev", "qa", "prod")}
    factory.create(main={"promoter.yaml": PIPELINE, **files}, envs=envs)
    cp = ControlPlane(factory.path)
    return cp, cp.main(cp.resolve(None))


def _render(factory: ControlPlaneFactory, files: dict[str, str], dev: str) -> Tree:
    cp, main = _load(factory, files, dev)
    rendered = render_environment(main, cp.environment(main.pipeline.environments[0]), "dev")
    return {path: list(yaml.safe_load_all(data)) for path, data in rendered.files.items()}


def _objects(tree: Tree, kind: str) -> dict[str, dict[str, Any]]:
    """``<folder>/<target>`` -> the object of ``kind`` in its reconciler.yaml."""
    return {path.rsplit("/", 1)[0]: doc for path, docs in tree.items() for doc in docs if doc["kind"] == kind}


def _schema(kind: str, api_version: str) -> dict[str, Any]:
    """The JSON Schema of ``kind`` as its controller's CRD (../shared/crds) defines it, turned into
    JSON Schema as scripts/gen-crd-schemas.py does (unknown fields refused)."""
    spec = importlib.util.spec_from_file_location("gen_crd_schemas", ROOT / "scripts" / "gen-crd-schemas.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    crd = json.loads((SHARED_CRDS / CRD_FILES[kind]).read_text())
    schema: dict[str, Any] = script.convert(crd["versions"][api_version.rpartition("/")[2]]["schema"])
    return schema


def _against_shared_crds(tree: Tree) -> int:
    """How many documents were checked against ../shared/crds (each must pass)."""
    if not SHARED_CRDS.is_dir():
        pytest.skip(f"no {SHARED_CRDS}")
    checked = 0
    for docs in tree.values():
        for doc in docs:
            if doc["kind"] in CRD_FILES:
                jsonschema.validate(doc, _schema(doc["kind"], doc["apiVersion"]))
                checked += 1
    return checked


def test_flux_kustomizations_depend_on_their_dependencies_in_the_same_folder(
    factory: ControlPlaneFactory,
) -> None:
    tree = _render(factory, CHAIN, environment(("small", "flux"), ("large", "flux")))
    kustomizations = _objects(tree, "Kustomization")
    for folder in ("small", "large"):
        named = {
            where: {"name": k["metadata"]["name"], "namespace": k["metadata"]["namespace"]}
            for where, k in kustomizations.items()
        }
        assert kustomizations[f"{folder}/app-web"]["spec"]["dependsOn"] == [
            named[f"{folder}/db-main"],
            named[f"{folder}/crds-dev"],
        ]
        assert named[f"{folder}/db-main"] == {"name": "db-main", "namespace": f"dev-{folder}-db-main"}
        assert kustomizations[f"{folder}/db-main"]["spec"]["dependsOn"] == [named[f"{folder}/crds-dev"]]
        assert "dependsOn" not in kustomizations[f"{folder}/crds-dev"]["spec"]
    assert check_tree(tree) == []
    assert _against_shared_crds(tree) == 12  # a GitRepository and a Kustomization per assignment


def test_flux_helm_releases_depend_on_helm_releases(factory: ControlPlaneFactory) -> None:
    files = {
        "workloads/db.yaml": workload("db", target("main", manifests=HELM)),
        "workloads/app.yaml": workload("app", target("web", manifests=HELM, depends_on="[{workload: db}]")),
    }
    tree = _render(factory, files, environment(("small", "flux")))
    releases = _objects(tree, "HelmRelease")
    assert releases["small/app-web"]["spec"]["dependsOn"] == [
        {"name": "db-main", "namespace": "dev-small-db-main"}
    ]
    assert check_tree(tree) == []
    assert _against_shared_crds(tree) == 4


def test_flux_cannot_order_a_kustomization_after_a_helm_release(factory: ControlPlaneFactory) -> None:
    files = {
        "workloads/db.yaml": workload("db", target("main", manifests=HELM)),
        "workloads/app.yaml": workload("app", target("web", depends_on="[{workload: db}]")),
    }
    with pytest.raises(TemplateError) as err:
        _render(factory, files, environment(("small", "flux")))
    assert str(err.value) == (
        "builtin:flux.yaml:10: template 'flux', assignment dev/small/app-web: small/app-web/reconciler.yaml: "
        "Kustomization/dev-small-app-web/app-web: dependsOn dev-small-db-main/db-main is a HelmRelease in this "
        "folder, not a Kustomization: Flux's dependsOn waits only for objects of the referrer's own kind, so "
        "this one would wait forever (give both targets the same kind of source, or order them otherwise)"
    )


def test_argocd_applications_take_their_depth_as_sync_wave(factory: ControlPlaneFactory) -> None:
    files = {
        **CHAIN,
        "workloads/db.yaml": workload("db", target("main", manifests=HELM, depends_on="[{workload: crds}]")),
    }
    tree = _render(factory, files, environment(("edge", "argocd")))
    waves = {
        where: app["metadata"].get("annotations", {}).get("argocd.argoproj.io/sync-wave")
        for where, app in _objects(tree, "Application").items()
    }
    # wave 0 is Argo CD's default: not written
    assert waves == {"edge/crds-dev": None, "edge/db-main": "1", "edge/app-web": "2"}
    assert check_tree(tree) == []
    assert _against_shared_crds(tree) == 3


def test_a_custom_template_reads_the_dependencies(factory: ControlPlaneFactory) -> None:
    custom = """\
apiVersion: promoter.dev/v1alpha1
kind: Template
metadata: {name: ordered}
spec:
  type: reconciler
  manifests:
    - |
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: order
        namespace: {{ namespace }}
        annotations:
          example.com/wave: {{ dependency_depth | quote }}
      data:
        after: {{ depends_on | map(attribute="workload") | join(" ") | quote }}
        namespaces: {{ depends_on | map(attribute="namespace") | join(" ") | quote }}
        targets: {{ depends_on | map(attribute="deployment_target") | join(" ") | quote }}
"""
    tree = _render(factory, {**CHAIN, "templates/ordered.yaml": custom}, environment(("small", "ordered")))
    order = {path.split("/")[1]: docs[0] for path, docs in tree.items() if path.endswith("reconciler.yaml")}
    assert order["app-web"]["data"] == {
        "after": "db crds",
        "namespaces": "dev-small-db-main dev-small-crds-dev",
        "targets": "main dev",
    }
    assert order["app-web"]["metadata"]["annotations"] == {"example.com/wave": "2"}
    assert order["crds-dev"]["data"] == {"after": "", "namespaces": "", "targets": ""}


def test_without_depends_on_the_templates_write_no_order(factory: ControlPlaneFactory) -> None:
    files = {
        "workloads/app.yaml": workload("app", target("web")),
        "workloads/db.yaml": workload("db", target("main")),
    }
    tree = _render(factory, files, environment(("small", "flux"), ("edge", "argocd")))
    text = json.dumps(tree)
    assert "dependsOn" not in text and "sync-wave" not in text and "annotations" not in text


def test_a_folder_is_rendered_again_when_its_order_changes(tmp_path: Path) -> None:
    """The memo's digest holds each target's dependencies and depth: a new dependsOn is never
    answered with the tree rendered before it."""
    digests = []
    for n, app in enumerate(
        (workload("app", target("web")), workload("app", target("web", depends_on="[{workload: db}]")))
    ):
        one = ControlPlaneFactory(tmp_path / str(n))
        cp, main = _load(one, {"workloads/app.yaml": app, "workloads/db.yaml": workload("db", target("main"))},
                         environment(("small", "flux")))  # fmt: skip
        env = cp.environment(main.pipeline.environments[0])
        schedule = EnvironmentSchedule(main, env, "dev")
        digests.append(folder_digests(main, env, "dev", schedule, all_templates(main))["small"])
    assert digests[0] != digests[1]
