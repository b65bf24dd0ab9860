"""Kalypso control planes, read and rendered with no management cluster (docs/kalypso.md).

The first tests run Kalypso's own sample (tests/kalypso/sample) through ``promoter render`` and
compare with the tree Kalypso's scheduler committed for dev; the others are golden cases for the
rules the sample does not exercise."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.demos.promotion import commit_folder
from promoter.gitcmd import Git
from tests.support.kalypso_repos import SAMPLE_MAIN_SHA, build_sample, expected_tree, point_url, tree_of
from tests.support.kalypso_world import world


def render(cp: Path, out: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, bytes]:
    result = CliRunner(env=env).invoke(
        cli, ["render", "--control-plane", str(cp), "--env", "dev", "--out", str(out), *args]
    )
    assert result.exit_code == 0, result.output
    return tree_of(out)


def parsed(path: str, data: bytes) -> object:
    if path.endswith(".yaml"):
        return list(yaml.safe_load_all(data))
    return data


def test_the_sample_renders_to_the_tree_kalypso_committed(tmp_path: Path) -> None:
    cp, main_sha = build_sample(tmp_path / "repos")
    got = render(cp, tmp_path / "out")
    want = expected_tree("dev", main_sha)
    assert sorted(got) == sorted(want)
    assert {p: parsed(p, d) for p, d in got.items()} == {p: parsed(p, d) for p, d in want.items()}
    # byte for byte, too: go-yaml's quoting ("false"), order and layout
    assert got == want


def test_validate_renders_every_environment_of_the_sample(tmp_path: Path) -> None:
    cp, main_sha = build_sample(tmp_path / "repos")
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(cp)])
    assert result.exit_code == 0, result.output
    assert "dev: ok, 4 assignments, 17 files" in result.output
    # stage: uat-test matches no stage policy; drone and large get their README only
    assert "stage: ok, 0 assignments, 3 files" in result.output
    assert f"valid (Kalypso): main {main_sha[:12]}, 2 workload registrations, 3 templates" in result.output


def test_a_given_commit_is_rendered_instead_of_the_base_repo_one(tmp_path: Path) -> None:
    cp, main_sha = build_sample(tmp_path / "repos")
    git = Git(cp)
    (cp / "NOTES.md").write_text("a later main commit\n")
    git.run("add", "NOTES.md")
    git.run("commit", "-q", "-m", "later")
    later = git.commit_of("HEAD")
    assert later is not None and later != main_sha
    got = render(cp, tmp_path / "out", "--commit", later)
    assert got[".github/tracking/Promoted_Commit_Id"] == later.encode()
    # without --commit, dev's BaseRepo pins the first main commit
    again = render(cp, tmp_path / "out2")
    assert again[".github/tracking/Promoted_Commit_Id"] == main_sha.encode()


def test_rendering_again_into_an_earlier_render_replaces_it(tmp_path: Path) -> None:
    cp, _ = build_sample(tmp_path / "repos")
    out = tmp_path / "out"
    render(cp, out)
    (out / "large" / "stale").mkdir()
    (out / "large" / "stale" / "reconciler.yaml").write_text("kind: Stale\n")
    assert "large/stale/reconciler.yaml" not in render(cp, out)


def test_an_unrelated_non_empty_out_directory_is_refused(tmp_path: Path) -> None:
    cp, _ = build_sample(tmp_path / "repos")
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep me\n")
    result = CliRunner().invoke(
        cli, ["render", "--control-plane", str(cp), "--env", "dev", "--out", str(out)]
    )
    assert result.exit_code == 2
    assert (out / "mine.txt").read_text() == "keep me\n"


def test_kalypso_rules_the_sample_does_not_exercise(tmp_path: Path) -> None:
    got = render(world(tmp_path), tmp_path / "out")
    assert sorted(got) == [
        ".github/tracking/Promoted_Commit_Id",
        "big/README.md",
        "big/app-web/config.yaml",
        "big/app-web/namespace.yaml",
        "big/app-web/reconciler.yaml",
        "big/svc-api/config.yaml",
        "big/svc-api/namespace.yaml",
        "big/svc-api/reconciler.yaml",
        "empty/README.md",  # a cluster type nothing is placed on keeps its folder
    ]
    assert got["big/app-web/config.yaml"] == (
        b"apiVersion: v1\ndata:\n  A: a\n  B: from-c\n  C: c\n  REGION: west\nkind: ConfigMap\n"
        b"metadata:\n  name: platform-config\n  namespace: dev-app-team-app-web\n"
    )
    assert got["big/svc-api/namespace.yaml"] == (
        b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: dev-platform-team-svc-api\n"
    )
    # mapping manifests: string values templated, list items left as written
    assert got["big/app-web/reconciler.yaml"] == (
        b"apiVersion: v1\nkind: Marker\nmetadata:\n  name: app-web\nspec:\n"
        b"  list:\n  - '{{ .Path }}'\n  path: ./web\n  repo: https://example.com/web-gitops\n"
    )


def test_current_form_templates_with_sprig_and_current_naming(tmp_path: Path) -> None:
    cp = world(tmp_path, reconciler="current")
    got = render(cp, tmp_path / "out", env={"PROMOTER_KALYPSO_NAMING": "current"})
    assert "big/svc-api/platform-config.yaml" in got and "big/svc-api/config.yaml" not in got
    docs = list(yaml.safe_load_all(got["big/svc-api/reconciler.yaml"]))
    assert len(docs) == 2  # the prod-only manifest renders empty and is left out
    repo, values = docs
    assert repo["metadata"]["name"].startswith("svc-api-")
    assert repo["metadata"]["namespace"] == "dev-big-svc-api"
    assert repo["metadata"]["labels"] == {"kind": "kustomize"}
    assert repo["spec"] == {"url": "https://example.com/api-gitops", "ref": {"branch": "dev"}}
    assert values["data"] == {
        "A": "a",
        "B": "from-c",
        "C": "c",
        "REGION": "west",
        "REGION_UPPER": "WEST",
        "CLUSTER": "big",  # the output held {{ .ClusterType }}: rendered again, as Kalypso does
    }
    web = yaml.safe_load_all(got["big/app-web/reconciler.yaml"])
    assert "labels" not in next(iter(web))["metadata"]  # no .Manifests.type: the if is false
    # the same config gives the same hash on every run
    again = render(cp, tmp_path / "out2", env={"PROMOTER_KALYPSO_NAMING": "current"})
    assert again["big/svc-api/reconciler.yaml"] == got["big/svc-api/reconciler.yaml"]


def test_an_unknown_naming_is_a_usage_error(tmp_path: Path) -> None:
    cp = world(tmp_path)
    result = CliRunner(env={"PROMOTER_KALYPSO_NAMING": "2024"}).invoke(
        cli, ["render", "--control-plane", str(cp), "--env", "dev", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "PROMOTER_KALYPSO_NAMING=2024: must be one of 2023, current" in result.output


@pytest.mark.parametrize("env_name", ["qa"])
def test_an_environment_main_does_not_define_is_named(tmp_path: Path, env_name: str) -> None:
    cp = world(tmp_path)
    result = CliRunner().invoke(
        cli, ["render", "--control-plane", str(cp), "--env", env_name, "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert f"--env {env_name}: no such environment (main's .environments/ has dev)" in result.output


def seed_gitops(root: Path, files: dict[str, bytes]) -> Path:
    """kalypso-gitops with a dev branch holding ``files`` (URL redirected)."""
    folder = root / "gitops-src"
    for path, data in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    repo = root / "kalypso-gitops.git"
    Git(root).run("init", "--quiet", "--bare", "--initial-branch=main", str(repo))
    commit_folder(Git(repo), folder, "dev", "Kalypso Scheduler commit")
    point_url("https://github.com/microsoft/kalypso-gitops", repo)
    return repo


def test_diff_shows_what_the_scheduler_would_commit(tmp_path: Path) -> None:
    cp, main_sha = build_sample(tmp_path / "repos")
    committed = expected_tree("dev", SAMPLE_MAIN_SHA)  # as the branch stands: main 42f2c201 tracked
    leftovers = {
        ".github/workflows/check-promote.yaml": b"name: check\n",
        "manifests-statement.txt": b"kept\n",
        "retired/old-app/reconciler.yaml": b"kind: Old\n",
    }
    seed_gitops(tmp_path, {**committed, **leftovers})
    result = CliRunner().invoke(cli, ["diff", "--control-plane", str(cp), "--env", "dev"])
    assert result.exit_code == 1, result.output  # a difference, as flux diff says it
    assert "dev: +0 ~1 -1 against dev@" in result.output
    assert f"-{SAMPLE_MAIN_SHA}\n\\ No newline at end of file\n+{main_sha}" in result.output
    assert "--- a/retired/old-app/reconciler.yaml\n+++ /dev/null" in result.output
    assert "manifests-statement.txt" not in result.output and "check-promote" not in result.output
    # stage's GitOps branch does not exist yet: every file is new
    stage = CliRunner().invoke(cli, ["diff", "--control-plane", str(cp), "--env", "stage"])
    assert stage.exit_code == 1, stage.output
    assert "stage: +3 ~0 -0 against new branch" in stage.output


def test_diff_with_the_deployed_main_renders_what_the_branch_tracks(tmp_path: Path) -> None:
    cp, _ = build_sample(tmp_path / "repos")
    git = Git(cp)
    (cp / "templates" / "extra.yaml").write_text("not: kalypso\n")
    git.run("add", "templates/extra.yaml")
    git.run("commit", "-q", "-m", "later")
    later = git.commit_of("HEAD")
    assert later is not None
    seed_gitops(tmp_path, expected_tree("dev", later))  # the branch runs the later main commit
    pinned = CliRunner().invoke(cli, ["diff", "--control-plane", str(cp), "--env", "dev"])
    assert "dev: +0 ~1 -0 against dev@" in pinned.output  # BaseRepo pins the first one
    deployed = CliRunner().invoke(
        cli, ["diff", "--control-plane", str(cp), "--env", "dev", "--deployed-main"]
    )
    assert deployed.exit_code == 0, deployed.output
    assert "dev: +0 ~0 -0 against dev@" in deployed.output
    refused = CliRunner().invoke(cli, ["diff", "--control-plane", str(cp), "--to", "dev"])
    assert refused.exit_code == 2
    assert "keeps no order of environments" in refused.output


def test_promote_on_a_kalypso_control_plane_asks_for_the_order(tmp_path: Path) -> None:
    cp, _ = build_sample(tmp_path / "repos")
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(cp)])
    assert result.exit_code == 2
    assert result.output.startswith(
        "error: a Kalypso control plane keeps no order of environments in git: give --environments dev,stage"
    )
    assert "docs/kalypso.md#promote" in result.output


def test_the_option_renders_the_sample_as_the_2023_scheduler_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--kalypso-naming 2023`` wins over the variable (here the default, current)."""
    monkeypatch.delenv("PROMOTER_KALYPSO_NAMING")
    cp, main_sha = build_sample(tmp_path / "repos")
    got = render(cp, tmp_path / "out", "--kalypso-naming", "2023")
    assert got == expected_tree("dev", main_sha)
    result = CliRunner().invoke(
        cli,
        [
            "render",
            "--control-plane",
            str(cp),
            "--env",
            "dev",
            "--out",
            str(tmp_path / "o"),
            "--kalypso-naming",
            "2024",
        ],
    )
    assert result.exit_code == 2 and "'2024' is not one of '2023', 'current'" in result.output
