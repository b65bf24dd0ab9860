"""What is rendered reconciles: every built-in template's output passes the CRD schemas and the
reference rules (promoter/k8s/manifests.py), names stay within Kubernetes' limits, and a
template that breaks a rule is bad input naming the file, the template, the assignment and
the rule, with nothing pushed."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.controlplane.repo import ControlPlane
from promoter.k8s.manifests import Doc, check_document, check_folder, check_tree
from promoter.k8s.names import bounded, is_dns_label
from promoter.rendering.tree import render_environment
from tests.controlplane.test_bad_input import ANY_LINE, DE, Case, _check, sub, template
from tests.support.helpers import ENV, PIPELINE, ControlPlaneFactory, dedent
from tests.support.paths import ROOT, TESTS

GOLDEN = TESTS / "golden"
EXAMPLES = ROOT / "examples"


def parsed(files: dict[str, bytes]) -> dict[str, list[Any]]:
    return {p: list(yaml.safe_load_all(d)) for p, d in files.items()}


@pytest.mark.parametrize("environment", ["dev", "qa", "prod"])
def test_the_golden_trees_reconcile(environment: str) -> None:
    root = GOLDEN / environment
    files = {
        str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*.yaml") if ".promoter" not in p.parts
    }
    assert files
    assert check_tree(parsed(files)) == []


@pytest.mark.parametrize("reconciler", ["flux", "argocd"])
def test_every_built_in_template_renders_what_reconciles(
    factory: ControlPlaneFactory, reconciler: str
) -> None:
    env = ENV.replace("spec: {reconciler: flux}", f"spec: {{reconciler: {reconciler}}}")
    factory.create(envs={e: {"env.yaml": env} for e in ("dev", "qa", "prod")})
    cp = ControlPlane(factory.path)
    main = cp.main(cp.resolve(None))
    for pipeline_env in main.pipeline.environments:
        rendered = render_environment(main, cp.environment(pipeline_env), pipeline_env.name)
        assert len(rendered.files) == 3
        assert check_tree(parsed(dict(rendered.files))) == []


LONG = "a" * 40


def test_long_names_are_shortened_the_same_way_every_time(factory: ControlPlaneFactory) -> None:
    workload = dedent(
        f"""
        apiVersion: promoter.dev/v1alpha1
        kind: Workload
        metadata: {{name: {LONG}}}
        spec:
          workspace: team
          deploymentTargets:
            - {{name: {LONG}-one, environment: dev, manifests: {{repo: https://example.com/x}}}}
            - {{name: {LONG}-two, environment: dev, manifests: {{repo: https://example.com/x}}}}
        """
    )
    factory.create(main={"promoter.yaml": PIPELINE, "workloads/app.yaml": workload})
    cp = ControlPlane(factory.path)
    main = cp.main(cp.resolve(None))
    env = main.pipeline.environments[0]
    first = render_environment(main, cp.environment(env), "dev")
    again = render_environment(main, cp.environment(env), "dev")
    assert list(first.files) == list(again.files)
    folders = {p.split("/")[1] for p in first.files}
    assert len(folders) == 2 and all(len(f) <= 63 for f in folders)
    namespaces = {a.namespace for a in first.assignments}
    assert len(namespaces) == 2 and all(is_dns_label(n) for n in namespaces)
    assert check_tree(parsed(dict(first.files))) == []


def test_bounded_keeps_a_prefix_and_a_hash() -> None:
    name = "dev-" + "x" * 80
    short = bounded(name)
    assert len(short) == 63 and short.startswith("dev-xxxx") and short == bounded(name)
    assert bounded(name + "y") != short
    assert bounded("short") == "short"


def kustomization(**spec: Any) -> dict[str, Any]:
    base = {"interval": "5m", "prune": True, "sourceRef": {"kind": "GitRepository", "name": "app"}}
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "app", "namespace": "team"},
        "spec": {**base, **spec},
    }


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (
            {**kustomization(), "apiVersion": "kustomize.toolkit.fluxcd.io/v1beta2"},
            "is not served by the Kustomization CRD",
        ),
        (kustomization(interval=5), "interval: 5 is not of type 'string'"),
        (kustomization(prune="yes"), "prune: 'yes' is not of type 'boolean'"),
        (kustomization(sourceRef={"kind": "Bucket2", "name": "x"}), "is not one of"),
        (kustomization(unknownField=1), "Additional properties are not allowed"),
        ({**kustomization(), "metadata": {"name": "k" * 70, "namespace": "team"}}, "at most 63 characters"),
        ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "Bad_Name"}}, "DNS label"),
    ],
)
def test_documents_are_judged_by_their_schema_and_limits(body: dict[str, Any], says: str) -> None:
    problems = check_document(Doc("small/app-t/reconciler.yaml", body))
    assert any(says in p.rule for p in problems), problems


def _folder(*bodies: dict[str, Any]) -> list[Doc]:
    return [Doc(f"small/app-t/f{i}.yaml", b) for i, b in enumerate(bodies)]


NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}


def configmap(namespace: str, **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "platform-config", "namespace": namespace},
        "data": data,
    }


@pytest.mark.parametrize(
    ("docs", "says"),
    [
        (
            _folder(NAMESPACE, kustomization(targetNamespace="elsewhere")),
            "targetNamespace elsewhere is not created",
        ),
        (
            _folder(
                NAMESPACE,
                configmap("other"),
                kustomization(
                    postBuild={"substituteFrom": [{"kind": "ConfigMap", "name": "platform-config"}]}
                ),
            ),
            "Flux reads it from the Kustomization's own namespace only",
        ),
        (
            _folder(
                NAMESPACE,
                configmap("team", **{"feature.flags": "on"}),
                kustomization(
                    postBuild={"substituteFrom": [{"kind": "ConfigMap", "name": "platform-config"}]}
                ),
            ),
            "is not a Flux variable name",
        ),
        (_folder(NAMESPACE, NAMESPACE), "the same object is also in"),
        (
            _folder(
                {
                    "apiVersion": "argoproj.io/v1alpha1",
                    "kind": "Application",
                    "metadata": {"name": "app", "namespace": "argocd"},
                    "spec": {
                        "project": "default",
                        "destination": {"namespace": "nowhere", "server": "https://x"},
                    },
                }
            ),
            "neither in this folder nor created",
        ),
    ],
)
def test_reference_rules_within_a_cluster_type(docs: list[Doc], says: str) -> None:
    problems = check_folder(docs)
    assert any(says in p.rule for p in problems), problems


def test_the_examples_flux_tree_uses_the_kustomizations_namespace() -> None:
    flux = (EXAMPLES.parent / "promoter" / "templates" / "flux.yaml").read_text()
    assert "namespace: flux-system" not in flux and "namespace: {{ namespace }}" in flux


CASES = [
    Case(
        "template-v1beta2-kustomization",
        "templates/flux.yaml",
        ANY_LINE,
        "is not served by the Kustomization CRD",
        main={
            "templates/flux.yaml": template(
                "apiVersion: kustomize.toolkit.fluxcd.io/v1beta2",
                "kind: Kustomization",
                "metadata: {name: '{{ name }}', namespace: '{{ namespace }}'}",
                "spec: {interval: 5m, prune: true, sourceRef: {kind: GitRepository, name: x}}",
            )
        },
    ),
    Case(
        "template-kustomization-in-flux-system",
        "templates/flux.yaml",
        ANY_LINE,
        "own namespace only",
        main={
            "templates/flux.yaml": template(
                "apiVersion: kustomize.toolkit.fluxcd.io/v1",
                "kind: Kustomization",
                "metadata: {name: '{{ name }}', namespace: flux-system}",
                "spec: {interval: 5m, prune: true, sourceRef: {kind: GitRepository, name: x},",
                "  postBuild: {substituteFrom: [{kind: ConfigMap, name: platform-config}]}}",
            )
        },
    ),
    Case(
        "config-key-with-space",
        DE,
        14,
        "is not a ConfigMap key",
        dev={"env.yaml": sub(ENV, "REGION: here", "'db url': x")},
    ),
    Case(
        "config-value-no",
        DE,
        14,
        "'NO' is read by YAML as 'false'; quote it",
        dev={"env.yaml": sub(ENV, "REGION: here", "FLAG: NO")},
    ),
    Case(
        "config-value-version",
        DE,
        14,
        "'1.10' is read by YAML as '1.1'",
        dev={"env.yaml": sub(ENV, "REGION: here", "V: 1.10")},
    ),
    Case(
        "config-value-octal",
        DE,
        14,
        "'0755' is read by YAML as '493'",
        dev={"env.yaml": sub(ENV, "REGION: here", "MODE: 0755")},
    ),
    Case(
        "config-value-time",
        DE,
        14,
        "'12:30' is read by YAML as '750'",
        dev={"env.yaml": sub(ENV, "REGION: here", "AT: 12:30")},
    ),
    Case(
        "config-key-on",
        DE,
        14,
        "'on' is read by YAML as 'True'",
        dev={"env.yaml": sub(ENV, "REGION: here", "on: x")},
    ),
    Case(
        "config-key-not-a-flux-variable",  # the user's key at its line first, the template second
        "dev:env.yaml",
        14,
        "ConfigMap 'defaults' key 'feature.flags' is not a Flux variable name ([_a-zA-Z][_a-zA-Z0-9]*), "
        "and Flux substitutes config by variable name: template 'flux' (builtin:flux.yaml:10) renders Kustomization/",
        dev={"env.yaml": sub(ENV, "REGION: here", "feature.flags: x")},
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_manifests_that_would_not_reconcile_are_bad_input(factory: ControlPlaneFactory, case: Case) -> None:
    _check(factory, case)


def test_check_platform_judges_the_merged_tree_by_the_same_rules(factory: ControlPlaneFactory) -> None:
    """The command gate (``promoter check-platform``) finds what a hand-edited platform tree breaks."""
    factory.create()
    flux = (GOLDEN / "dev" / "east-large" / "hello-world-functional-test" / "reconciler.yaml").read_text()
    broken = flux.replace("kustomize.toolkit.fluxcd.io/v1", "kustomize.toolkit.fluxcd.io/v1beta2")
    sha = factory.commit_platform(
        "dev",
        {
            ".promoter/promotion.yaml": "mainCommit: x\n",
            "east-large/app/reconciler.yaml": broken,
            "east-large/app/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: dev-east-large-hello-world-functional-test}\n",
        },
    )
    result = CliRunner().invoke(cli, ["check-platform", "--repo", str(factory.platform), "--ref", sha])
    assert result.exit_code == 1, result.output
    assert "kustomize.toolkit.fluxcd.io/v1beta2 is not served by the Kustomization CRD" in result.stderr
    assert re.search(r"^1 problem in \d+ manifests at ", result.stderr, re.M), result.stderr
