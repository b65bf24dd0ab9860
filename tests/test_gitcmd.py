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
from tests.support.helpers import Commit, ControlPlaneFactory, import_commits


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


def _asked(where: Path, env: dict[str, str] | None = None) -> gitcmd.Layout | None:
    """The layout as git says it, the files not read."""
    git = gitcmd.Git(where, env)
    plain, gitcmd.plain_layout = gitcmd.plain_layout, lambda path, env: None  # type: ignore[assignment]
    try:
        return git.layout()
    finally:
        gitcmd.plain_layout = plain  # type: ignore[assignment]


def test_the_layout_is_what_git_rev_parse_says(tmp_path: Path, factory: ControlPlaneFactory) -> None:
    """Read from the files at the top of a clone or a bare repository, asked of git in one
    process anywhere else; the same answers either way, through symlinks."""
    clone = factory.create()
    (clone / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "link").symlink_to(clone / "sub")
    (tmp_path / "top-link").symlink_to(clone)
    top = Path(os.path.realpath(clone))
    for where in (
        clone,
        tmp_path / "top-link",
        clone / "sub" / "deeper",
        tmp_path / "link",
        tmp_path / "link" / "deeper",
    ):
        layout = gitcmd.Git(where).layout()
        assert layout == gitcmd.Layout(False, top / ".git" / "index", top) == _asked(where), where
        assert gitcmd.Git(where).at_top().path == top
    bare = gitcmd.Git(factory.platform).layout()
    assert bare is not None and bare.bare and bare.top is None and bare == _asked(factory.platform)
    assert gitcmd.Git(clone / ".git").layout() == gitcmd.Layout(False, top / ".git" / "index", None)
    assert gitcmd.Git(tmp_path).layout() is None
    assert (
        gitcmd.plain_layout(clone, {}) is not None and gitcmd.plain_layout(factory.platform, {}) is not None
    )
    # what moves a repository's parts is left to git
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert gitcmd.plain_layout(clone, {"GIT_WORK_TREE": str(elsewhere)}) is None
    gitcmd.Git(clone).run("config", "core.worktree", str(elsewhere))
    assert gitcmd.plain_layout(clone, {}) is None
    moved = gitcmd.Git(clone).layout()
    assert moved == _asked(clone) and moved is not None and moved.top != top


def test_notes_are_read_as_git_notes_show_prints_them_at_any_fan_out(factory: ControlPlaneFactory) -> None:
    clone = factory.create()
    git = gitcmd.Git(clone)
    main = git.rev_parse("main")
    dev = git.rev_parse("dev")
    assert main and dev
    assert git.note("refs/notes/promoter", main) is None  # no notes ref yet
    git.run("notes", "--ref=refs/notes/promoter", "add", "-m", "line one", operands=[main])
    # a notes tree fanned out one and two levels, as git writes one with many notes
    for ref, path in (("fan1", f"{dev[:2]}/{dev[2:]}"), ("fan2", f"{dev[:2]}/{dev[2:4]}/{dev[4:]}")):
        (sha,) = import_commits(clone, [Commit(f"notes-{ref}", {path: "fanned\n"}, "notes")])
        git.run("update-ref", operands=[f"refs/notes/{ref}", sha])
    for ref, obj in (
        ("refs/notes/promoter", main),
        ("promoter", "main"),
        ("fan1", dev),
        ("fan2", "dev"),
        ("fan1", main),
    ):
        shown = git.run("notes", f"--ref={ref}", "show", operands=[obj], check=False)
        assert git.note(ref, obj) == (shown.stdout if shown.returncode == 0 else None), (ref, obj)
    assert git.note("promoter", "no-such-branch") is None


@pytest.mark.parametrize(
    "name",
    [
        "main",
        "feature/x-1",
        "release/v1.2",
        "a.b",
        "under_score",
        "-x",
        "HEAD",
        "a..b",
        "a/.b",
        "a.lock",
        "a/b.lock/c",
        "a//b",
        "a/",
        "/a",
        "a.",
        "@",
        "a@{1}",
        "a b",
        "a~1",
        "a^",
        "a:b",
        "a?",
        "a*",
        "a[",
        "a\\b",
        "ünïcode",
        "x/@/y",
        ".hidden",
        "ok.lockx",
    ],
)
def test_branch_names_are_judged_as_git_check_ref_format_judges_them(name: str) -> None:
    import subprocess

    asked = subprocess.run(
        ["git", "check-ref-format", f"refs/heads/{name}"], capture_output=True, check=False
    )
    by_git = asked.returncode == 0 and not name.startswith("-") and name != "HEAD"
    assert gitcmd.valid_branch(name) == by_git
