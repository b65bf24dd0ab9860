"""``promoter.gitremote``: a push that lost the race is False (the caller reads again); a push the
remote refuses (a hook, a protection, a token without write: ``[remote rejected]``) is an error at
once, never taken for a race and retried."""

from __future__ import annotations

from pathlib import Path

import pytest

from promoter.errors import GitError
from promoter.gitcmd import Git
from promoter.gitremote import push_ref


def repos(tmp_path: Path) -> tuple[Git, str, str]:
    local = Git(tmp_path / "local")
    (tmp_path / "local").mkdir()
    local.run("init", "--quiet")
    env = {
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@b",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@b",
    }
    tree = local.out("mktree", input=b"")
    first = local.run("commit-tree", "-m", "one", operands=[tree], env=env).stdout.decode().strip()
    second = (
        local.run("commit-tree", "-m", "two", "-p", first, operands=[tree], env=env).stdout.decode().strip()
    )
    Git(tmp_path).run("init", "--quiet", "--bare", operands=[str(tmp_path / "origin.git")])
    return local, first, second


def test_a_lost_race_is_false_and_a_refusal_an_error(tmp_path: Path) -> None:
    local, first, second = repos(tmp_path)
    origin = str(tmp_path / "origin.git")
    assert push_ref(local, origin, first, "refs/promoter/x", None)
    assert not push_ref(local, origin, second, "refs/promoter/x", None)  # it exists now: the lease fails
    hook = tmp_path / "origin.git" / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'Permission to org/cp denied' >&2\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(
        GitError, match=r"(?s)push of refs/promoter/x to .* was refused: .*pre-receive hook declined"
    ):
        push_ref(local, origin, second, "refs/promoter/x", first)
