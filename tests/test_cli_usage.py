"""The command line as people use it: one error style, output formats, exit codes, the control
plane found from the working directory, the working tree, completion, colour."""

from __future__ import annotations

from click.testing import CliRunner

from promoter.cli.main import cli


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
