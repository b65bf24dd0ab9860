"""The fast-import writer: a large commit written in two processes (blobs and the trees of whole
folders, then a commit naming those trees) is the same tree as one process writing it all."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from promoter.gitcmd import Git
from promoter.platform import writer
from promoter.platform.objects import blob_id
from promoter.platform.plan import TreePlan


def _files(prefix: str, count: int) -> dict[str, bytes]:
    return {
        f"{prefix}-{i % 7}/app-{i}/{role}.yaml": f"kind: {role}\nname: app-{i}\n".encode()
        for i in range(count)
        for role in ("reconciler", "namespace")
    }


def _plan(files: dict[str, bytes], **kwargs: object) -> TreePlan:
    entries = {path: ("100644", blob_id(data)) for path, data in files.items()}
    return TreePlan(entries=entries, inline=dict(files), **kwargs)  # type: ignore[arg-type]


def _tree(git: Git, commit: str) -> str:
    return git.out("rev-parse", "--verify", operands=[f"{commit}^{{tree}}"])


def _files_of(git: Git, commit: str, root: str = "") -> dict[str, bytes]:
    entries = git.ls_tree(commit, root or None)
    blobs = git.read_blobs(e.sha for e in entries)
    return {e.path: blobs[e.sha] for e in entries}


def _both(monkeypatch: pytest.MonkeyPatch, git: Git, plan: TreePlan, root: str, parents: list[str]) -> str:
    """The commit written in two processes, after checking one process writes the same tree."""
    monkeypatch.setattr(writer, "_cpus", lambda: 2)
    monkeypatch.setattr(writer, "PARALLEL_BLOBS", 10**9)
    alone = writer.write_commit(git, plan, root, parents, "one process")
    monkeypatch.setattr(writer, "PARALLEL_BLOBS", 1)
    split = writer.write_commit(git, plan, root, parents, "two processes")
    assert _tree(git, split) == _tree(git, alone)
    leftovers = git.out("for-each-ref", "--format=%(refname)", operands=["refs/promoter/"])
    assert leftovers == ""  # the parts' refs are gone
    return split


@pytest.fixture
def git(tmp_path: Path) -> Git:
    subprocess.run(["git", "init", "--quiet", "--bare", str(tmp_path / "repo.git")], check=True)
    return Git(tmp_path / "repo.git")


def test_a_new_tree_in_two_processes_is_the_tree_of_one(monkeypatch: pytest.MonkeyPatch, git: Git) -> None:
    files = {**_files("ct", 60), "README.md": b"platform\n", ".promoter/promotion.yaml": b"a: 1\n"}
    commit = _both(monkeypatch, git, _plan(files), "", [])
    assert _files_of(git, commit) == files


def test_under_a_root_on_a_parent_it_does_not_extend(monkeypatch: pytest.MonkeyPatch, git: Git) -> None:
    first = writer.write_commit(git, _plan({"other/keep.txt": b"kept\n"}), "", [], "first")
    files = _files("ct", 40)
    commit = _both(monkeypatch, git, _plan(files), "clusters", [first])
    assert _files_of(git, commit, "clusters") == {f"clusters/{p}": d for p, d in files.items()}
    assert _files_of(git, commit, "other") == {"other/keep.txt": b"kept\n"}


def test_on_its_base_only_touched_folders_are_replaced_whole(
    monkeypatch: pytest.MonkeyPatch, git: Git
) -> None:
    old = _files("ct", 40)
    base = writer.write_commit(git, _plan(old), "", [], "base")
    new = {p: d + b"changed: true\n" for p, d in old.items() if p.startswith("ct-1/")}
    new["ct-9/app-1/reconciler.yaml"] = b"kind: new\n"  # a new folder, touched
    new["ct-2/app-new/namespace.yaml"] = b"kind: added\n"  # a new file in an untouched folder
    new["README.md"] = b"readme\n"
    plan = _plan(new, base=base, touched=frozenset({"ct-1", "ct-9", "README.md"}))
    commit = _both(monkeypatch, git, plan, "", [base])
    expected = {**old, **new}
    assert _files_of(git, commit) == expected  # ct-2 keeps every file it had
