"""Kalypso's current scheduler (the default naming): a control plane of its time
(tests/kalypso/current) renders byte for byte to the tree worked out from the scheduler's code,
and each of its rules has a golden case (docs/kalypso.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from tests.support.kalypso_repos import build_current, expected_current, tree_of


def render(cp: Path, env: str, out: Path, *args: str) -> dict[str, bytes]:
    result = CliRunner().invoke(
        cli, ["render", "--control-plane", str(cp), "--env", env, "--out", str(out), *args]
    )
    assert result.exit_code == 0, result.output
    return tree_of(out)


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_a_current_control_plane_renders_byte_for_byte_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str
) -> None:
    monkeypatch.delenv("PROMOTER_KALYPSO_NAMING")
    cp, main_sha = build_current(tmp_path / "repos")
    got = render(cp, env, tmp_path / "out")
    want = expected_current(env, main_sha)
    assert sorted(got) == sorted(want)
    for path in want:
        assert got[path] == want[path], path


def test_the_option_chooses_the_naming_over_the_variable(tmp_path: Path) -> None:
    cp, main_sha = build_current(tmp_path / "repos")  # the variable says 2023 here
    got = render(cp, "dev", tmp_path / "out", "--kalypso-naming", "current")
    assert got == expected_current("dev", main_sha)
