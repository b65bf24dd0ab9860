"""An empty platform repo (no branches at all): an environment merged by a person gets its branch
made first, empty, so the promotion can be merged into it with plain git, as the run says; an
automatic merge makes the branch at its merge, as before."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.gitcmd import Git
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline, stage

WHO = {
    "GIT_AUTHOR_NAME": "Ada",
    "GIT_AUTHOR_EMAIL": "a@b",
    "GIT_COMMITTER_NAME": "Ada",
    "GIT_COMMITTER_EMAIL": "a@b",
}


def promote(path: Path) -> str:
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--wait", "none"])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_manual_environment_of_an_empty_platform_repo_can_be_merged_by_hand(
    factory: ControlPlaneFactory, tmp_path: Path
) -> None:
    text = pipeline("dev", "qa", stage("prod", merge="manual", timeout="1h"))
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD}, platform_branches=())
    assert Git(factory.platform).out("for-each-ref") == ""  # nothing at all
    first = promote(path)
    assert "prod: made prod, empty, for its first promotion" in first
    assert "prod: waiting for someone to merge promoter/prod into prod" in first
    clone = tmp_path / "merge"
    env = {**os.environ, **WHO}
    for args in (
        ["git", "clone", "--quiet", "--branch", "prod", str(factory.platform), str(clone)],
        ["git", "-C", str(clone), "merge", "--quiet", "--no-ff", "--no-edit", "origin/promoter/prod"],
        ["git", "-C", str(clone), "push", "--quiet", "origin", "prod"],
    ):
        subprocess.run(args, check=True, env=env, capture_output=True)
    second = promote(path)
    assert "prod: success" in second, second
    assert "made dev" not in first  # an automatic merge makes its branch as it merges
    assert Git(factory.platform).commit_of("refs/heads/dev") is not None
