"""The command line as people use it: one error style, output formats, exit codes, the control
plane found from the working directory, the working tree, completion, colour."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from tests.helpers import ControlPlaneFactory


def test_click_usage_errors_use_the_promoters_error_style() -> None:
    result = CliRunner().invoke(cli, ["render", "--control-plane", "."])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == "Usage: promoter render [OPTIONS]"
    assert lines[-1] == "error: Missing option '--env'."
    assert "Error:" not in result.stderr


def test_an_unknown_command_is_one_error_line_after_the_usage() -> None:
    result = CliRunner().invoke(cli, ["bogus"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == "error: No such command 'bogus'."


def test_the_control_plane_defaults_to_the_repo_of_the_working_directory(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = factory.create()
    monkeypatch.delenv("PROMOTER_CONTROL_PLANE", raising=False)
    monkeypatch.chdir(path / "workloads")
    result = CliRunner().invoke(cli, ["validate"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1].startswith("valid: main ")


def test_a_subfolder_as_control_plane_reads_the_platform_repo_relative_to_its_top(
    factory: ControlPlaneFactory,
) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path / "workloads"), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "no git repository" not in result.output


def test_outside_any_repo_the_error_says_to_pass_the_control_plane(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PROMOTER_CONTROL_PLANE", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    result = CliRunner().invoke(cli, ["validate"])
    assert result.exit_code == 2
    assert result.stderr == "error: the working directory (no --control-plane given): not a git repository\n"
