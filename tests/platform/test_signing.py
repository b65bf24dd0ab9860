"""Signing what the promoter writes as git config asks: real SSH and GPG keys, real git."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from promoter.gitcmd import Git
from promoter.platform.signing import CommitObject, Signer, SigningFailed
from tests.support.signing_keys import (
    allowed_signers,
    git_config,
    gpg_key,
    sign_with_ssh,
    signature_of,
    ssh_key,
)


def _repo(tmp_path: Path) -> Git:
    path = tmp_path / "repo.git"
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return Git(path)


def _commit(git: Git, message: str = "Promote abc to dev\n\nbody line\n", parent: str | None = None) -> str:
    """An unsigned commit as fast-import writes them: the promoter's identity, a fixed date."""
    tree = git.out("mktree", input=b"")
    env = {
        "GIT_AUTHOR_NAME": "promoter",
        "GIT_AUTHOR_EMAIL": "promoter@localhost",
        "GIT_AUTHOR_DATE": "1700000000 +0000",
        "GIT_COMMITTER_NAME": "promoter",
        "GIT_COMMITTER_EMAIL": "promoter@localhost",
        "GIT_COMMITTER_DATE": "1700000100 +0200",
    }
    parents = ["-p", parent] if parent else []
    proc = git.run("commit-tree", *parents, "-F", "-", operands=[tree], input=message.encode(), env=env)
    return proc.stdout.decode().strip()


def _object(git: Git, sha: str) -> CommitObject:
    return CommitObject.parse(git.run("cat-file", "commit", operands=[sha]).stdout)


def test_nothing_is_signed_when_git_config_does_not_ask(tmp_path: Path) -> None:
    git = _repo(tmp_path)
    sha = _commit(git)
    assert Signer(git).sign(sha) == sha
    assert not _object(git, sha).signed


def test_an_ssh_signature_keeps_tree_parents_message_people_and_dates(tmp_path: Path) -> None:
    key = ssh_key(tmp_path / "keys")
    sign_with_ssh(key)
    allowed_signers(tmp_path / "allowed_signers", key)
    git = _repo(tmp_path)
    first = _commit(git, "first\n")
    sha = _commit(git, parent=first)

    signed = Signer(git).sign(sha)

    assert signed != sha
    before, after = _object(git, sha), _object(git, signed)
    assert after.signed and not before.signed
    assert (after.tree, after.parents, after.message) == (before.tree, (first,), before.message)
    assert after.author == ("promoter", "promoter@localhost", "1700000000 +0000")
    assert after.committer == ("promoter", "promoter@localhost", "1700000100 +0200")
    assert signature_of(git.path, signed) == ("G", key.email)
    assert git.run("verify-commit", operands=[signed], check=False).returncode == 0
    # a commit signed already is left as it is
    assert Signer(git).sign(signed) == signed


def test_a_signature_by_a_key_not_in_the_allowed_signers_does_not_verify(tmp_path: Path) -> None:
    mine, other = ssh_key(tmp_path / "keys", "mine", "me@example.com"), ssh_key(tmp_path / "keys", "other")
    sign_with_ssh(mine)
    allowed_signers(tmp_path / "allowed_signers", other)
    git = _repo(tmp_path)
    signed = Signer(git).sign(_commit(git))
    assert signature_of(git.path, signed) == ("U", "")


def test_a_missing_key_is_one_line_naming_the_settings(tmp_path: Path) -> None:
    git_config(("commit.gpgsign", "true"), ("gpg.format", "ssh"), ("user.signingkey", str(tmp_path / "gone")))
    git = _repo(tmp_path)
    with pytest.raises(SigningFailed) as caught:
        Signer(git).sign(_commit(git))
    message = str(caught.value)
    assert caught.value.exit_code == 2
    assert "\n" not in message
    assert message.startswith("cannot sign the commit: ")
    assert message.endswith(
        f"(git config commit.gpgsign is true, gpg.format ssh, user.signingkey {tmp_path / 'gone'})"
    )


def test_a_literal_key_is_never_printed(tmp_path: Path) -> None:
    key = ssh_key(tmp_path / "keys")
    git_config(("commit.gpgsign", "true"), ("gpg.format", "ssh"), ("user.signingkey", f"key::{key.public}"))
    git = _repo(tmp_path)
    with pytest.raises(SigningFailed) as caught:  # a public key alone cannot sign without an agent
        Signer(git).sign(_commit(git))
    assert key.public.split()[1] not in str(caught.value)
    assert "user.signingkey a literal key" in str(caught.value)


@pytest.fixture
def gnupg(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A GPG key in a short-lived GNUPGHOME (short: gpg-agent's socket path has a length limit)."""
    home = Path(tempfile.mkdtemp(prefix="gpg", dir="/tmp"))
    try:
        yield gpg_key(home / "g", monkeypatch)
    finally:
        subprocess.run(["gpgconf", "--kill", "all"], capture_output=True, check=False)
        shutil.rmtree(home, ignore_errors=True)


def test_a_gpg_signature_as_git_config_asks(tmp_path: Path, gnupg: str) -> None:
    git_config(("commit.gpgsign", "true"), ("user.signingkey", gnupg))
    git = _repo(tmp_path)
    signed = Signer(git).sign(_commit(git))
    assert _object(git, signed).signed
    assert signature_of(git.path, signed) == ("G", "Signer <signer@example.com>")  # its own key: trusted
    assert "BEGIN PGP SIGNATURE" in git.out("cat-file", "commit", operands=[signed])
