"""A git older than promoter needs is named at start, not mistaken for a merge conflict."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from promoter import gitcmd
from promoter.cli.main import cli
from promoter.errors import GitError
from promoter.gitbatch import BatchReader
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


def test_answers_about_full_shas_are_asked_once_and_about_refs_every_time(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = factory.create()
    first = factory.commit("main", {"a.yaml": "a: 1\n"}, "a", keep=True)
    second = factory.commit("main", {"b.yaml": "b: 1\n"}, "b", keep=True)
    git = gitcmd.Git(path)
    asked: list[str] = []
    real_run, real_ask = gitcmd.Git.run, BatchReader.ask

    def run(self: gitcmd.Git, *args: str, **kwargs: object) -> object:
        asked.append(args[0])
        return real_run(self, *args, **kwargs)  # type: ignore[arg-type]

    def ask(self: BatchReader, questions: list[tuple[str, str]]) -> object:
        asked.extend(f"{command} {name}" for command, name in questions)
        return real_ask(self, questions)

    monkeypatch.setattr(gitcmd.Git, "run", run)
    monkeypatch.setattr(BatchReader, "ask", ask)
    for _ in range(2):
        assert git.is_ancestor(first, second) and not git.is_ancestor(second, first)
        assert git.rev_parse(f"{second}^{{tree}}") == git.tree_of(second)
        assert git.rev_parse("main") == second
    assert asked == ["merge-base", "merge-base", f"info {second}^{{tree}}", "info main", "info main"]
    missing = "0" * 40 + "^{commit}"
    assert git.rev_parse(missing) is None  # a missing object is asked again: it may be fetched
    assert git.rev_parse(missing) is None and asked[-2:] == [f"info {missing}"] * 2


def test_the_layout_is_read_in_one_git_process(tmp_path: Path, factory: ControlPlaneFactory) -> None:
    """What ``git rev-parse`` says of a repository from any of its folders, through symlinks."""
    clone = factory.create()
    (clone / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "link").symlink_to(clone / "sub")
    top = Path(os.path.realpath(clone))
    for where in (clone, clone / "sub" / "deeper", tmp_path / "link", tmp_path / "link" / "deeper"):
        layout = gitcmd.Git(where).layout()
        assert layout == gitcmd.Layout(False, top / ".git" / "index", top), where
        assert gitcmd.Git(where).at_top().path == top
    bare = gitcmd.Git(factory.platform).layout()
    assert bare is not None and bare.bare and bare.top is None
    assert gitcmd.Git(clone / ".git").layout() == gitcmd.Layout(False, top / ".git" / "index", None)
    assert gitcmd.Git(tmp_path).layout() is None
