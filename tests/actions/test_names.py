"""One vocabulary: ``--env ENV`` (and the actions' ``environment``) is "this environment" in
render and diff; the scheduling flow is ``promote --schedule ENV`` (the actions' ``schedule``).
The old ``promote --env`` works for one more release and says so on stderr. ``diff`` takes the
github forge's options like the other commands."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from promoter import masking
from promoter.cli.main import cli
from tests.support.fake_github import World, make_world
from tests.support.helpers import ENV, ControlPlaneFactory

WARNING = (
    "warning: promote --env is deprecated and goes away in the next release; use --schedule dev "
    "(the scheduling flow; --env means 'this environment' in render and diff)"
)


def report(output: str) -> dict[str, Any]:
    return dict(json.loads(output[output.index("{\n") :]))


def test_schedule_runs_the_scheduling_flow_and_env_still_does_with_a_warning(
    factory: ControlPlaneFactory,
) -> None:
    path = str(factory.create(platform_branches=("dev", "qa", "prod")))
    runner = CliRunner()
    first = runner.invoke(cli, ["promote", "--control-plane", path, "--poll-interval", "0.1s"])
    assert first.exit_code == 0, first.output
    factory.commit("dev", {"env.yaml": ENV.replace("REGION: here", "REGION: there")}, "dev: move")

    new = runner.invoke(cli, ["promote", "--control-plane", path, "--schedule", "dev", "--output", "json"])
    assert new.exit_code == 0, new.output
    assert (report(new.stdout)["flow"], WARNING in new.stderr) == ("scheduling", False)

    old = runner.invoke(cli, ["promote", "--control-plane", path, "--env", "dev", "--output", "json"])
    assert old.exit_code == 0, old.output
    assert report(old.stdout)["flow"] == "scheduling"
    assert old.stderr.splitlines()[0] == WARNING


def test_help_shows_the_new_names_only() -> None:
    promote = CliRunner().invoke(cli, ["promote", "--help"]).output
    assert "--schedule ENV" in promote and not re.search(r"--env\b", promote)
    diff = CliRunner().invoke(cli, ["diff", "--help"]).output
    assert "--control-plane-repo" in diff and "--github-api-url" in diff


@pytest.fixture
def world(factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    # the tokens this world registers for masking stay in this test (masking is process-wide)
    monkeypatch.setattr(masking, "_extra", set())
    w = make_world(factory, monkeypatch)
    yield w
    w.close()


def test_diff_on_github_takes_the_github_options(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    result = CliRunner().invoke(
        cli,
        [
            "diff",
            "--control-plane",
            str(world.control_plane),
            "--control-plane-repo",
            "org/control-plane",
            "--github-api-url",
            "https://api.github.com",
            "--env",
            "dev",
        ],
    )
    assert result.exit_code == 1, result.output  # a difference
    assert result.stderr.startswith("dev: ")
