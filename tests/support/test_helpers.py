"""The test helpers that read git's files instead of asking git answer as git answers."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.helpers import Commit, import_commits, read_refs


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def _for_each_ref(repo: Path) -> dict[str, str]:
    listed = _git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    return dict(line.split(" ", 1) for line in listed.splitlines())


def test_read_refs_lists_what_for_each_ref_lists(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    main, dev, _ = import_commits(
        repo,
        [
            Commit("main", {"a.yaml": "a: 1\n"}, "main"),
            Commit("dev", {"b.yaml": "b: 1\n"}, "dev"),
            Commit("feature/deep/name", {"c.yaml": "c: 1\n"}, "nested"),
        ],
    )
    _git(repo, "tag", "-a", "-m", "annotated", "v1", main)  # packed below: a peeled line
    _git(repo, "notes", "--ref=promoter", "add", "-m", "a note", dev)
    _git(repo, "pack-refs", "--all")
    _git(repo, "update-ref", "refs/heads/dev", main)  # loose now, over its packed value
    _git(repo, "update-ref", "refs/promoter/lock", dev)
    _git(repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/heads/dev")
    _git(repo, "symbolic-ref", "refs/remotes/origin/gone", "refs/heads/missing")
    assert read_refs(repo) == _for_each_ref(repo)
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    assert read_refs(bare) == _for_each_ref(bare)
