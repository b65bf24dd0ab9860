"""A platform repo per environment (``environments[].gitops.repo``): each environment renders,
lands and is gated in its own repo; the others never see it; the branch checks hold per repo."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.controlplane.repo import ControlPlane
from promoter.gitcmd import Git
from tests.support.fake_github import make_world
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline, stage
from tests.support.helpers import pipeline as build_pipeline


def _bare(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    return path


def _heads(repo: Path) -> dict[str, str]:
    out = subprocess.run(
        ["git", "-C", str(repo), "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return dict(line.split() for line in out.splitlines())


def test_each_environment_lands_in_its_own_platform_repo(
    factory: ControlPlaneFactory, tmp_path: Path
) -> None:
    _bare(tmp_path / "prod-platform.git")
    text = pipeline(
        "dev",
        "qa",
        stage("prod", gitops="{repo: ../prod-platform.git, branch: main}"),
    )
    cp = factory.create(main={"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(cp)])
    assert result.exit_code == 0, result.output
    shared, prod = _heads(factory.platform), _heads(tmp_path / "prod-platform.git")
    assert {"dev", "qa"} <= set(shared) and "prod" not in shared
    assert "main" in prod and "dev" not in prod
    files = Git(tmp_path / "prod-platform.git").out("ls-tree", "-r", "--name-only", "main").split()
    assert "small/app-t3/reconciler.yaml" in files and ".promoter/promotion.yaml" in files
    status = CliRunner().invoke(cli, ["status", "--control-plane", str(cp), "-o", "json"])
    assert status.exit_code == 0, status.output
    assert '"platformCommit": "' + prod["main"] in status.output.replace(" ", "").replace('":"', '": "')
    again = CliRunner().invoke(cli, ["promote", "--control-plane", str(cp)])
    assert again.exit_code == 0 and "prod: already promoted" in again.output
    assert _heads(tmp_path / "prod-platform.git") == prod
    diff = CliRunner().invoke(cli, ["diff", "--control-plane", str(cp), "--env", "prod"])
    assert diff.exit_code == 0, diff.output  # prod's repo already holds what would be rendered


def test_environments_of_different_repos_may_share_a_branch_name(factory: ControlPlaneFactory) -> None:
    text = pipeline(
        stage("dev", gitops="{branch: main}"),
        stage("qa", gitops="{repo: ../qa-platform.git, branch: main}"),
        "prod",
    )
    cp = factory.create(main={"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    main = ControlPlane(cp).main(ControlPlane(cp).resolve(None))
    qa = main.pipeline.environment("qa")
    assert qa is not None and qa.platform_url == "../qa-platform.git"
    assert main.pipeline.platform_of(qa) == "../qa-platform.git"


@pytest.mark.parametrize(
    ("gitops", "says"),
    [
        ("{repo: 'ext::sh -c touch% /tmp/x'}", "gitops.repo: git remote-helper transports"),
        ("{repo: https://github.com/org/prod-platform}", "gitops.repo"),
        ("{repo: [a]}", "gitops.repo"),
        ("{branch: dev}", "spec.environments[2].gitops: branch 'dev'"),
    ],
)
def test_bad_platform_repos_are_bad_input(factory: ControlPlaneFactory, gitops: str, says: str) -> None:
    text = pipeline("dev", "qa", stage("prod", gitops=gitops))
    cp = factory.create(main={"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    before = factory.refs()
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(cp)])
    assert result.exit_code == 2, result.output
    line = result.output.strip().splitlines()[-1]
    assert line.startswith("error: promoter.yaml:") and says in line, line
    assert factory.refs() == before


def test_a_missing_repo_names_the_environment_field(factory: ControlPlaneFactory) -> None:
    text = pipeline("dev", "qa", stage("prod", gitops="{repo: ../nowhere.git}"))
    cp = factory.create(main={"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(cp), "--dry-run"])
    assert result.exit_code == 2, result.output
    assert "spec.environments[2].gitops.repo: no git repository at" in result.output


def test_on_github_each_environment_opens_its_pr_in_its_own_repo(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    world = make_world(factory, monkeypatch)
    try:
        prod_repo = _bare(tmp_path / "prod-platform.git")
        seed = factory.commit_platform  # the README the fake's repos start with, on prod's own repo
        factory.platform, saved = prod_repo, factory.platform
        seed("main", {"README.md": "prod platform\n"})
        factory.platform = saved
        world.fake.add_repo("org/prod-platform", prod_repo)
        monkeypatch.setenv("GIT_CONFIG_COUNT", "2")
        monkeypatch.setenv("GIT_CONFIG_KEY_1", f"url.{prod_repo}.insteadOf")
        monkeypatch.setenv("GIT_CONFIG_VALUE_1", "https://github.com/org/prod-platform.git")
        text = build_pipeline(
            stage("dev", gates="[{soak: 30s}]"),
            "qa",
            stage("prod", gitops="{repo: https://github.com/org/prod-platform, branch: main}"),
            platform="{url: https://github.com/org/platform}",
        )
        factory.commit("main", {"promoter.yaml": text, "workloads/app.yaml": WORKLOAD}, "prod elsewhere")
        subprocess.run(["git", "-C", str(world.control_plane), "checkout", "-q", "-f", "main"], check=True)
        result = CliRunner().invoke(
            cli,
            [
                "promote",
                "--control-plane",
                str(world.control_plane),
                "--control-plane-repo",
                "org/control-plane",
                "--poll-interval",
                "5s",
            ],
        )
        assert result.exit_code == 0, result.output
        assert [(p["base"]["ref"], p["merged"]) for p in world.fake.prs("org/platform")] == [
            ("dev", True),
            ("qa", True),
        ]
        assert [
            (p["head"]["ref"], p["base"]["ref"], p["merged"]) for p in world.fake.prs("org/prod-platform")
        ] == [("promoter/prod", "main", True)]
        files = Git(prod_repo).out("ls-tree", "-r", "--name-only", "main").split()
        assert "README.md" in files and "small/app-t3/reconciler.yaml" in files
    finally:
        world.close()
