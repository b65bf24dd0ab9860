"""Kalypso's scheduler at HEAD (the default generation), rule by rule, on the small world
(tests/support/kalypso_world.py): ``azure-app-config*`` ConfigMaps, the config file's name by
``contentType``, Templates found by name, what Kalypso fails on (refused, or rendered with
``--kalypso-lenient``), and what a commit keeps in the GitOps branch."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.kalypso.control import at_root
from promoter.kalypso.gitops import scheduler_tree
from promoter.kalypso.loading import KalypsoBranch
from promoter.kalypso.objects import GitOpsRepo, RepoRef
from promoter.kalypso.schedule import labels_from_key
from promoter.model import Source
from tests.support.kalypso_repos import tree_of
from tests.support.kalypso_world import API, ENVIRONMENT, config, convert, policy, world


@pytest.fixture(autouse=True)
def _head(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROMOTER_KALYPSO_NAMING")


def run(cp: Path, out: Path, *args: str, env: str = "dev") -> tuple[int, str]:
    result = CliRunner().invoke(
        cli, ["render", "--control-plane", str(cp), "--env", env, "--out", str(out), *args]
    )
    return result.exit_code, result.output


def values(tree: dict[str, bytes], path: str) -> dict[str, str]:
    """The data of the ConfigMap the ``current`` reconciler writes (its second document)."""
    data: dict[str, str] = list(yaml.safe_load_all(tree[path]))[1]["data"]
    return data


def test_azure_app_config_maps_feed_the_config_by_label_path(tmp_path: Path) -> None:
    """Named ``azure-app-config*``, no label needed; each key a label path, shortest first."""
    azure = config(
        "azure-app-config-west",
        "{}",
        "{AZ: everywhere, cluster-type.big.AZ: on-big, region.east.EAST: x, ALL: all, size.large.x.LIST: '[1]'}",
    )
    cp = world(tmp_path, reconciler="current", dev={"configs/azure.yaml": azure})
    code, output = run(cp, tmp_path / "out")
    assert code == 0, output
    got = tree_of(tmp_path / "out")
    big = values(got, "big/svc-api/reconciler.yaml")
    assert big["AZ"] == "on-big"  # the longer key comes later and replaces
    assert big["LIST"] == "- 1"  # an even number of parts: the second-to-last dropped
    assert big["ALL"] == "all" and "EAST" not in big  # region east: not the big cluster type's
    assert labels_from_key("cluster-type.large.region.west.DB") == (
        {"cluster-type": "large", "region": "west"},
        "DB",
    )


CONFIG_CT = API + (
    "kind: ClusterType\nmetadata: {name: big, labels: {size: large, region: west}}\n"
    "spec: {reconciler: current, namespaceService: ns, configType: cfg}\n"
)


@pytest.mark.parametrize(
    ("content_type", "file"), [("sh", "platform-config.sh"), ("env", "platform-config.yaml")]
)
def test_only_content_type_sh_writes_a_shell_file(tmp_path: Path, content_type: str, file: str) -> None:
    cfg = API + (
        f"kind: Template\nmetadata: {{name: cfg}}\nspec:\n  type: config\n  contentType: {content_type}\n"
        "  manifests:\n    - 'REGION: {{ .ConfigData.REGION }}'\n"
    )
    cp = world(
        tmp_path, reconciler="current", main={"templates/cfg.yaml": cfg}, dev={"cts/big.yaml": CONFIG_CT}
    )
    code, output = run(cp, tmp_path / "out")
    assert code == 0, output
    got = tree_of(tmp_path / "out")
    assert got[f"big/svc-api/{file}"] == b"REGION: west"
    assert {p for p in got if p.startswith("big/svc-api/platform-config")} == {f"big/svc-api/{file}"}


def test_a_template_is_found_by_name_its_type_not_checked(tmp_path: Path) -> None:
    """The reconciler names a Template of type namespace: Kalypso renders it; 2023 refused."""
    ct = CONFIG_CT.replace("reconciler: current", "reconciler: ns").replace(", configType: cfg", "")
    cp = world(tmp_path, reconciler="current", dev={"cts/big.yaml": ct})
    code, output = run(cp, tmp_path / "out")
    assert code == 0, output
    assert b"kind: Namespace" in tree_of(tmp_path / "out")["big/svc-api/reconciler.yaml"]


def test_two_policies_placing_one_pair_are_refused_as_kalypso_fails(tmp_path: Path) -> None:
    twin = policy(
        "gold-too",
        "{labelSelector: {matchLabels: {tier: gold}}}",
        "{labelSelector: {matchLabels: {size: large}}}",
    )
    cp = world(tmp_path, reconciler="current", dev={"policies/twin.yaml": twin})
    code, output = run(cp, tmp_path / "out")
    assert code == 2
    assert output.startswith(
        "error: dev:policies/twin.yaml:1: SchedulingPolicy 'gold-too' places deployment target 'app-web'"
    )
    assert "names both Assignments 'app-app-web-big'" in output and "--kalypso-lenient" in output
    assert not (tmp_path / "out").exists()
    code, output = run(cp, tmp_path / "out", "--kalypso-lenient")
    assert code == 0, output
    assert "big/app-web/reconciler.yaml" in tree_of(tmp_path / "out")


def test_an_environment_name_with_a_dash_is_refused_as_kalypso_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = ENVIRONMENT.replace("{name: dev}", "{name: dev-east}")
    cp = world(tmp_path, reconciler="current", main={".environments/dev.yaml": env})
    code, output = run(cp, tmp_path / "out", env="dev-east")
    assert code == 2
    assert output.startswith("error: .environments/dev.yaml:")
    assert "looks for the WorkloadRegistration 'east-app'" in output
    monkeypatch.setenv("PROMOTER_KALYPSO_LENIENT", "1")
    code, output = run(cp, tmp_path / "out", env="dev-east")
    assert code == 0, output


def test_a_commit_keeps_what_kalypsos_get_tree_keeps() -> None:
    old = {
        "README.md": b"root",
        ".github/tracking/Promoted_Commit_Id": b"old",
        "big/README.md": b"r",
        "big/app-web/reconciler.yaml": b"old",
        "big/app-web/platform-config.yaml": b"stale config",  # a target folder still there: kept
        "big/gone-target/reconciler.yaml": b"x",  # no such target: deleted
        "big/notes.txt": b"x",  # neither README.md nor a target: deleted
        "gone-type/README.md": b"x",  # no such cluster type: deleted
    }
    rendered = {
        "big/README.md": b"r",
        "big/app-web/reconciler.yaml": b"new",
        ".github/tracking/Promoted_Commit_Id": b"new",
    }
    assert scheduler_tree(old, rendered, {"big": {"app-web"}}) == {
        ".github/tracking/Promoted_Commit_Id": b"new",
        "README.md": b"root",
        "big/README.md": b"r",
        "big/app-web/platform-config.yaml": b"stale config",
        "big/app-web/reconciler.yaml": b"new",
    }


def test_the_gitops_repos_path_is_not_used() -> None:
    gitops = GitOpsRepo(RepoRef("https://example.com/g", "dev", "clusters/dev"), Source("g.yaml", 1))
    branch = KalypsoBranch("dev", "c0ffee", None, gitops, {}, {}, {})
    moved = at_root(branch).gitops
    assert moved is not None and moved.ref.path == "" and moved.ref.repo == gitops.ref.repo


@pytest.mark.parametrize(
    ("generation", "want"),
    [
        ("head", "- name: a\n  v: 1\n  w: 2\n- name: b"),  # merged by name; yaml.v3
        ("2024", "- name: a\n  v: 1\n- name: a\n  w: 2\n- name: b"),  # appended; yaml.v2
    ],
)
def test_the_generation_decides_how_config_lists_merge(tmp_path: Path, generation: str, want: str) -> None:
    lists = {
        "configs/l1.yaml": config("l1", '{platform-config: "true"}', r'{L: "- name: a\n  v: 1\n"}'),
        "configs/l2.yaml": config(
            "l2", '{platform-config: "true"}', r'{L: "- {name: a, w: 2}\n- name: b\n"}'
        ),
    }
    cp = world(tmp_path, reconciler="current", dev=lists)
    code, output = run(cp, tmp_path / "out", "--kalypso-generation", generation)
    assert code == 0, output
    assert values(tree_of(tmp_path / "out"), "big/svc-api/reconciler.yaml")["L"] == want


def test_convert_carries_the_generation(tmp_path: Path) -> None:
    """Under 2024 a Template calling toYaml would write yaml.v3 as a promoter Template: refused."""
    cp = world(tmp_path, reconciler="current", main={"templates/flux.yaml": None})
    result = convert(cp, tmp_path / "out", "--kalypso-generation", "2024")
    assert result.exit_code == 2
    assert (
        "template current calls stringify, which Kalypso's 2024 scheduler writes in yaml.v2" in result.output
    )
    assert not (tmp_path / "out").exists()
