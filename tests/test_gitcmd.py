"""A git older than promoter needs is named at start, not mistaken for a merge conflict."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from promoter import gitcmd
from promoter.cli.main import cli
from promoter.errors import GitError
from promoter.gitcmd import MIN_GIT, git_version, require_git
from tests.support.helpers import ControlPlaneFactory


def test_this_machines_git_is_new_enough() -> None:
    found = git_version()
    assert found is not None and found >= MIN_GIT
    require_git()


@pytest.mark.parametrize(
    ("text", "version"), [("git version 2.39.5\n", (2, 39)), ("git version 2.37.1.windows.1", (2, 37))]
)
def test_versions_are_read_from_git(text: str, version: tuple[int, int]) -> None:
    assert git_version(text) == version


def test_an_old_git_is_named_with_the_version_needed() -> None:
    with pytest.raises(GitError, match=r"git 2\.37 is too old: promoter needs git 2\.38 or newer"):
        require_git((2, 37))


def test_a_missing_git_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(GitError, match="git is not installed"):
        require_git()


def test_the_cli_names_the_git_it_needs_before_anything_else(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = factory.create()
    monkeypatch.setattr(gitcmd, "git_version", lambda text=None: (2, 30))
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert result.exit_code == 1
    assert (
        result.stderr
        == "error: git 2.30 is too old: promoter needs git 2.38 or newer (for git merge-tree --write-tree)\n"
    )
