"""Rendering: golden trees of the sample control plane, and template errors with lines."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.controlplane.repo import ControlPlane
from promoter.demos.promotion import build_repos
from promoter.errors import TemplateError
from promoter.rendering.tree import render_environment
from tests.support.helpers import ENV, PIPELINE, WORKLOAD, ControlPlaneFactory
from tests.support.paths import TESTS

GOLDEN = TESTS / "golden"


@pytest.fixture
def sample(tmp_path: Path) -> ControlPlane:
    control_plane, _ = build_repos(tmp_path)
    return ControlPlane(control_plane)


@pytest.mark.parametrize("environment", ["dev", "qa", "prod"])
def test_sample_renders_like_golden(sample: ControlPlane, environment: str) -> None:
    main = sample.main(sample.resolve(None))
    env = main.pipeline.environment(environment)
    assert env is not None
    rendered = render_environment(main, sample.environment(env), environment)
    folder = GOLDEN / environment
    if os.environ.get("PROMOTER_UPDATE_GOLDEN"):
        for path, data in rendered.files.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_bytes(data)
    expected = {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*.yaml")}
    assert sorted(rendered.files) == sorted(expected)
    for path, data in rendered.files.items():
        assert data == expected[path], path
        assert all(isinstance(d, dict) for d in yaml.safe_load_all(data))
    # 3 cluster types, 2 workloads; observability only where size is large
    assert rendered.cluster_types == ("east-large", "edge", "west-small")
    assert {p.split("/")[1] for p in rendered.files} == {
        f"hello-world-{_target(environment)}",
        f"observability-metrics-{environment}",
    }


def _target(environment: str) -> str:
    return {"dev": "functional-test", "qa": "uat", "prod": "live"}[environment]


def test_sample_config_merge_order_matters(sample: ControlPlane) -> None:
    main = sample.main(sample.resolve(None))
    env = main.pipeline.environment("dev")
    assert env is not None
    files = render_environment(main, sample.environment(env), "dev").files
    edge = yaml.safe_load(files["edge/hello-world-functional-test/platform-config.yaml"])["data"]
    east = yaml.safe_load(files["east-large/hello-world-functional-test/platform-config.yaml"])["data"]
    # defaults (0 labels) < west-us (1 label) < hello-world-on-edge (2 labels)
    assert edge["LOG_LEVEL"] == "warn" and edge["REGION"] == "West US" and edge["REPLICAS"] == "1"
    assert east["FEATURES"] == '{"canary": false, "tracing": true}'  # maps merge deeply


def _template_plane(factory: ControlPlaneFactory, body: str) -> Path:
    template = (
        "apiVersion: promoter.dev/v1alpha1\nkind: Template\nmetadata: {name: broken}\nspec:\n  type: reconciler\n  manifests:\n    - |\n"
        + "".join(f"      {line}\n" for line in body.splitlines())
    )
    env = ENV.replace("reconciler: flux", "reconciler: broken")
    return factory.create(
        {"promoter.yaml": PIPELINE, "workloads/app.yaml": WORKLOAD, "templates/broken.yaml": template},
        {e: {"env.yaml": env} for e in ("dev", "qa", "prod")},
    )


def test_undefined_variable_names_template_assignment_and_line(factory: ControlPlaneFactory) -> None:
    path = _template_plane(factory, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ nope }}\n")
    cp = ControlPlane(path)
    main = cp.main(cp.resolve(None))
    env = main.pipeline.environments[0]
    with pytest.raises(TemplateError) as err:
        render_environment(main, cp.environment(env), "dev")
    assert str(err.value) == (
        "templates/broken.yaml:11: template 'broken' manifest 1, assignment dev/small/app-t: "
        "undefined variable 'nope': (the variables are cluster_type, cluster_type_labels, config, "
        "dependency_depth, depends_on, deployment_target, environment, labels, manifests, name, namespace, "
        "workload, workspace)"
    )


def test_a_missing_config_key_is_named_with_the_keys_there_are(factory: ControlPlaneFactory) -> None:
    template = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  m: {{ config.REGOIN }}\n"
    cp = ControlPlane(_template_plane(factory, template))
    main = cp.main(cp.resolve(None))
    with pytest.raises(TemplateError) as err:
        render_environment(main, cp.environment(main.pipeline.environments[0]), "dev")
    assert str(err.value) == (
        "templates/broken.yaml:13: template 'broken' manifest 1, assignment dev/small/app-t: "
        "config has no key 'REGOIN': did you mean 'REGION'? it has REGION "
        "(config comes from the ConfigMaps on the environment branch); "
        "or give a default: config.REGOIN | default(...)"
    )
    assert "dict object" not in str(err.value)


def test_template_error_through_cli_is_exit_2_with_one_line(factory: ControlPlaneFactory) -> None:
    path = _template_plane(factory, "apiVersion: v1\nkind: {{ workload ]]\n")
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert result.exit_code == 2
    assert result.output.startswith(
        "error: templates/broken.yaml:9: template 'broken' manifest 1: syntax error:"
    )
    assert result.output.count("\n") == 1


def test_sandbox_blocks_python_internals(factory: ControlPlaneFactory) -> None:
    path = _template_plane(
        factory,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ ''.__class__.__mro__[1].__subclasses__() }}\n",
    )
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert result.exit_code == 2
    assert "templates/broken.yaml:11:" in result.output and "unsafe" in result.output


def test_render_command_writes_tree_with_provenance(sample: ControlPlane, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["render", "--control-plane", str(sample.path), "--env", "qa", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert result.output == f"qa: wrote 12 files for 4 assignments to {out}\n"
    prov = yaml.safe_load((out / ".promoter/promotion.yaml").read_text())
    assert prov["mainCommit"] == sample.resolve(None) and prov["environment"] == "qa"
    assert (out / "edge/hello-world-uat/reconciler.yaml").read_bytes() == (
        GOLDEN / "qa/edge/hello-world-uat/reconciler.yaml"
    ).read_bytes()
