"""The long-lived reader behind ``gitcmd.Git``'s reads: the same answers as the one-shot git
commands, refs and objects that other processes change seen at once, and a fallback to the
one-shot command for whatever the reader cannot carry."""

from __future__ import annotations

import gc
import os
import subprocess
from pathlib import Path

import pytest

from promoter import gitbatch
from promoter.errors import GitError
from promoter.gitbatch import BatchReader
from promoter.gitcmd import Git, TreeEntry
from tests.support.helpers import Commit, import_commits


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], input=input, capture_output=True, check=True
    ).stdout.decode()


def ls_tree(repo: Path, treeish: str, *paths: str) -> list[TreeEntry]:
    """What ``git ls-tree -r --full-tree`` says."""
    raw = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "-z", "--full-tree", treeish, "--", *paths],
        capture_output=True,
        check=True,
    ).stdout
    return gitbatch.ls_tree_records(raw)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    files = {
        "a.yaml": "a: 1\n",
        "z.yaml": "z: 1\n",
        "dir/b.yaml": "b: 1\n",
        "dir/deeper/c.yaml": "c: 1\n",
        "dir-x/d.yaml": "d: 1\n",  # sorts between "dir" and "dir/" in git's tree order
        "with space/é ü.yaml": "e: 1\n",
    }
    import_commits(path, [Commit("main", files, "files")])
    return path


def with_link_exec_and_submodule(repo: Path) -> str:
    """A commit whose tree holds a symlink, an executable and a submodule (a gitlink)."""
    blob = git(repo, "hash-object", "-w", "--stdin", input=b"#!/bin/sh\n").strip()
    link = git(repo, "hash-object", "-w", "--stdin", input=b"a.yaml").strip()
    sub_tree = git(repo, "mktree", input=f"100755 blob {blob}\trun.sh\n".encode()).strip()
    listing = (
        f"120000 blob {link}\tlink\n"
        f"160000 commit {'1' * 40}\tvendor\n"
        f"040000 tree {sub_tree}\tbin\n"
        f"040000 tree {git(repo, 'rev-parse', 'main^{tree}').strip()}\told\n"
    )
    tree = git(repo, "mktree", input=listing.encode()).strip()
    return git(repo, "commit-tree", "-m", "odd entries", tree).strip()


def test_ls_tree_answers_as_git_ls_tree(repo: Path) -> None:
    odd = with_link_exec_and_submodule(repo)
    reader = Git(repo)
    assert reader.ls_tree("main") == ls_tree(repo, "main")
    assert reader.ls_tree("main", "dir") == ls_tree(repo, "main", "dir/")
    assert reader.ls_tree("main", "dir/") == ls_tree(repo, "main", "dir/")
    assert reader.ls_tree("main", "with space") == ls_tree(repo, "main", "with space/")
    assert reader.ls_tree(odd) == ls_tree(repo, odd)
    assert reader.ls_tree(odd, "old/dir") == ls_tree(repo, odd, "old/dir/")
    assert reader.ls_tree("main", "nothing") == [] == reader.ls_tree("main", "a.yaml")
    assert {e.type for e in reader.ls_tree(odd)} == {"blob", "commit"}
    with pytest.raises(GitError, match="ls-tree"):
        reader.ls_tree("no-such-branch")


def test_reads_answer_as_the_one_shot_commands(repo: Path) -> None:
    reader = Git(repo)
    head = git(repo, "rev-parse", "main").strip()
    assert reader.rev_parse("main") == head == reader.commit_of("refs/heads/main")
    assert reader.rev_parse("nothing") is None and reader.commit_of("0" * 40) is None
    assert reader.read_file("main", "dir/deeper/c.yaml") == b"c: 1\n"
    assert reader.read_file("main", "with space/é ü.yaml") == b"e: 1\n"
    assert reader.read_file("main", "dir") is None  # a tree is no file
    assert reader.read_file("main", "missing.yaml") is None
    blobs = {e.sha: e.path for e in reader.ls_tree("main")}
    assert {blobs[sha]: raw for sha, raw in reader.read_blobs(list(blobs)).items()}["a.yaml"] == b"a: 1\n"
    with pytest.raises(GitError, match="missing"):
        reader.read_blobs(["0" * 40])
    assert reader.ref_values(["refs/heads/main", "refs/heads/none"]) == {"refs/heads/main": head}


def test_refs_and_objects_another_process_writes_are_seen(repo: Path) -> None:
    reader = Git(repo)
    before = reader.rev_parse("main")
    (after,) = import_commits(repo, [Commit("main", {"new.yaml": "n: 1\n"}, "later")])
    assert reader.rev_parse("main") == after != before
    assert reader.read_file("main", "new.yaml") == b"n: 1\n"
    git(repo, "pack-refs", "--all")
    git(repo, "update-ref", "refs/heads/main", before)  # loose again, over the packed one
    assert reader.rev_parse("main") == before
    git(repo, "update-ref", "-d", "refs/heads/main")
    assert reader.rev_parse("main") is None
    git(repo, "repack", "-a", "-d", "-q")  # the objects move into a new pack
    assert reader.read_file(after, "new.yaml") == b"n: 1\n"


def test_what_the_reader_cannot_carry_goes_to_the_one_shot_command(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = Git(repo)
    ran: list[str] = []
    real = Git.run

    def run(self: Git, *args: str, **kwargs: object) -> object:
        ran.append(args[0])
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Git, "run", run)
    assert reader.read_file("main", "a\nb") is None and ran == ["cat-file"]
    assert reader.rev_parse(" main") is None and ran[-1] == "rev-parse"
    assert reader.ls_tree("main", "dir/../dir") == ls_tree(repo, "main", "dir/") and ran[-1] == "ls-tree"
    assert reader.ls_tree("main", "dir/..") == ls_tree(repo, "main", "dir/../") and ran[-1] == "ls-tree"
    ran.clear()
    assert reader.rev_parse("main") and ran == []  # the reader again


def test_a_reader_that_dies_leaves_its_questions_to_the_one_shot_commands(repo: Path) -> None:
    reader = Git(repo)
    assert reader.rev_parse("main")
    proc = reader._batch._proc
    assert proc is not None
    proc.kill()
    proc.wait()
    assert reader.read_file("main", "a.yaml") == b"a: 1\n"
    assert reader.ls_tree("main") == ls_tree(repo, "main")


def test_a_forked_child_asks_a_reader_of_its_own(repo: Path) -> None:
    reader = Git(repo)
    assert reader.rev_parse("main")
    parent = reader._batch._proc
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's pipes stay the parent's
        ok = reader.read_file("main", "a.yaml") == b"a: 1\n" and reader._batch._proc is not parent
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.close(write)
    assert os.read(read, 1) == b"1"
    os.waitpid(pid, 0)
    assert reader._batch._proc is parent and reader.read_file("main", "z.yaml") == b"z: 1\n"


def test_the_reader_ends_with_its_handle(repo: Path) -> None:
    reader = Git(repo)
    assert reader.rev_parse("main")
    proc = reader._batch._proc
    assert proc is not None and proc.poll() is None
    del reader
    gc.collect()
    assert proc.returncode == 0


def test_many_questions_cross_the_pipe_in_chunks(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """More questions than one chunk, with answers larger than a pipe's buffer: no deadlock."""
    monkeypatch.setattr(gitbatch, "_CHUNK", 200)
    big = {f"f{i:03}.yaml": f"n: {i}\n" + "x" * 100_000 for i in range(40)}
    import_commits(repo, [Commit("main", big, "big")])
    reader = BatchReader(repo, dict(os.environ))
    try:
        answers = reader.ask([("contents", f"main:f{i:03}.yaml") for i in range(40)])
        assert [a.contents if a else None for a in answers] == [
            big[f"f{i:03}.yaml"].encode() for i in range(40)
        ]
    finally:
        reader.close()


def test_a_sha256_repository_is_read_alike(tmp_path: Path) -> None:
    path = tmp_path / "sha256"
    subprocess.run(
        ["git", "init", "-q", "--bare", "--object-format=sha256", "-b", "main", str(path)], check=True
    )
    import_commits(path, [Commit("main", {"dir/a.yaml": "a: 1\n", "b.yaml": "b: 1\n"}, "files")])
    reader = Git(path)
    assert reader.ls_tree("main") == ls_tree(path, "main")
    assert len(reader.ls_tree("main")[0].sha) == 64
