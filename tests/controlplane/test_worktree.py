"""The working tree and the index of a clone as commits (promoter/controlplane/worktree.py): what
one ``git status`` says decides whether a snapshot is built at all."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from promoter.controlplane.worktree import snapshot, uncommitted
from promoter.gitcmd import Git
from tests.support.helpers import Commit, import_commits


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    repo = tmp_path / "clone"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    files = {
        "a.yaml": "a: 1\n",
        "dir with space/b.yml": "b: 1\n",
        "README.md": "r\n",
        ".github/x.yaml": "x: 1\n",
    }
    import_commits(repo, [Commit("main", files, "files")])
    _git(repo, "checkout", "-q", "main")
    return repo


def _files(repo: Path, *, staged: bool) -> tuple[str, ...] | None:
    found = snapshot(Git(repo), staged=staged)
    return None if found is None else found.files


def test_a_clean_clone_or_edits_outside_the_control_plane_make_no_snapshot(clone: Path) -> None:
    assert _files(clone, staged=False) is None
    (clone / "README.md").write_text("changed\n")
    (clone / ".github" / "x.yaml").write_text("x: 2\n")  # a dot-folder holds no control-plane file
    (clone / "notes.txt").write_text("untracked\n")
    assert _files(clone, staged=False) is None
    assert _files(clone, staged=True) is None


def test_edited_deleted_and_untracked_yaml_are_read_and_staged_reads_the_index(clone: Path) -> None:
    (clone / "dir with space" / "b.yml").write_text("b: 2\n")
    (clone / "a.yaml").unlink()
    (clone / "new" / "deep").mkdir(parents=True)
    (clone / "new" / "deep" / "c.yaml").write_text("c: 1\n")
    assert _files(clone, staged=False) == ("a.yaml", "dir with space/b.yml", "new/deep/c.yaml")
    assert _files(clone, staged=True) is None  # nothing staged yet
    _git(clone, "add", "dir with space/b.yml")
    assert _files(clone, staged=True) == ("dir with space/b.yml",)
    assert uncommitted(Git(clone)) == ("a.yaml", "dir with space/b.yml", "new/deep/c.yaml")


def test_an_edit_made_and_undone_makes_no_snapshot(clone: Path) -> None:
    (clone / "a.yaml").write_text("a: 2\n")
    (clone / "a.yaml").write_text("a: 1\n")
    assert _files(clone, staged=False) is None


def test_a_detached_or_unborn_head_makes_no_snapshot(clone: Path, tmp_path: Path) -> None:
    (clone / "a.yaml").write_text("a: 2\n")
    _git(clone, "checkout", "-q", "--detach")
    assert _files(clone, staged=False) is None
    unborn = tmp_path / "unborn"
    subprocess.run(["git", "init", "-q", "-b", "main", str(unborn)], check=True)
    (unborn / "a.yaml").write_text("a: 1\n")
    assert _files(unborn, staged=False) is None
