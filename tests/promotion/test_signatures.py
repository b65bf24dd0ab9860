"""Signed and verified commits on the local forge, through the CLI: promotion and merge commits
signed as git config asks, and the main commit refused unless a valid signature of an allowed
signer is on it (real ssh-keygen keys, real git verification)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from promoter.cli.main import cli
from promoter.clock import FakeClock
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, stage
from tests.support.helpers import pipeline as build_pipeline
from tests.support.signing_keys import (
    SshKey,
    allowed_signers,
    gpg_key,
    sign_with_ssh,
    signature_of,
    ssh_key,
)


def _pipeline(signatures: str | None) -> str:
    text = build_pipeline("dev", stage("qa", merge="direct"), "prod")
    return text + (f"  signatures: {signatures}\n" if signatures else "")


def _control_plane(factory: ControlPlaneFactory, signatures: str | None) -> Path:
    return factory.create(
        main={"promoter.yaml": _pipeline(signatures), "workloads/app.yaml": WORKLOAD},
        platform_branches=("dev", "qa", "prod"),
    )


def _promote(path: Path) -> Result:
    return CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--poll-interval", "0.1s"])


def _signed_main(path: Path, key: SshKey, message: str = "a signed change") -> str:
    """An empty commit on main signed with ``key``, as its author's git would make it."""
    git = ["git", "-C", str(path), "-c", "gpg.format=ssh", "-c", f"user.signingkey={key.private}"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-S", "-m", message], check=True)
    return _head(path)


def _gpg_signed_main(path: Path, key: str) -> str:
    """An empty commit on main signed with GPG key ``key`` (git's default gpg.format)."""
    git = ["git", "-C", str(path), "-c", f"user.signingkey={key}"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-S", "-m", "gpg"], check=True)
    return _head(path)


def _head(path: Path, ref: str = "main") -> str:
    return subprocess.run(
        ["git", "-C", str(path), "rev-parse", ref], capture_output=True, text=True, check=True
    ).stdout.strip()


def _error_line(result: Result) -> str:
    return next(line for line in result.output.splitlines() if line.startswith("error: "))


def test_promotion_and_merge_commits_are_signed_as_git_config_asks(
    factory: ControlPlaneFactory, tmp_path: Path, fake_time: FakeClock
) -> None:
    key = ssh_key(tmp_path / "keys", email="promoter@example.com")
    path = _control_plane(factory, None)
    sign_with_ssh(key)
    allowed_signers(tmp_path / "allowed_signers", key)

    result = _promote(path)

    assert result.exit_code == 0, result.output
    platform = factory.platform
    merge = _head(platform, "dev")
    promotion = _head(platform, "promoter/dev")
    assert _head(platform, "dev^2") == promotion  # the local forge's merge of the promotion branch
    assert signature_of(platform, merge) == ("G", key.email)
    assert signature_of(platform, promotion) == ("G", key.email)
    assert signature_of(platform, _head(platform, "qa")) == ("G", key.email)  # merge: direct
    assert signature_of(platform, "dev^1") == ("N", "")  # the seed, written before


def test_a_signing_failure_is_exit_2_and_pushes_nothing(
    factory: ControlPlaneFactory, tmp_path: Path, fake_time: FakeClock
) -> None:
    path = _control_plane(factory, None)
    sign_with_ssh(SshKey(tmp_path / "no-such-key", "", "nobody@example.com"))
    before = factory.refs()

    result = _promote(path)

    assert result.exit_code == 2, result.output
    assert _error_line(result).startswith("error: cannot sign the commit: ")
    assert _error_line(result).endswith(
        f"(git config commit.gpgsign is true, gpg.format ssh, user.signingkey {tmp_path / 'no-such-key'})"
    )
    assert factory.refs() == before


def test_an_unsigned_main_commit_is_refused_before_anything_is_pushed(
    factory: ControlPlaneFactory, tmp_path: Path, fake_time: FakeClock
) -> None:
    path = _control_plane(factory, "{verifyMain: git}")
    allowed_signers(tmp_path / "allowed_signers", ssh_key(tmp_path / "keys"))
    x = _head(path)
    before = factory.refs()

    result = _promote(path)

    assert result.exit_code == 2, result.output
    assert _error_line(result) == (
        f"error: promoter.yaml:1: spec.signatures.verifyMain: git: main commit {x[:12]} is not promoted: unsigned"
    )
    assert factory.refs() == before


def test_a_main_commit_signed_by_an_allowed_signer_is_promoted(
    factory: ControlPlaneFactory, tmp_path: Path, fake_time: FakeClock
) -> None:
    key = ssh_key(tmp_path / "keys", email="alice@example.com")
    path = _control_plane(factory, "{verifyMain: git}")
    allowed_signers(tmp_path / "allowed_signers", key)
    x = _signed_main(path, key)

    result = _promote(path)

    assert result.exit_code == 0, result.output
    assert f"main {x[:12]}: signature verified (alice@example.com)" in result.output
    assert "dev: merged" in result.output


def test_a_signer_not_allowed_is_refused(
    factory: ControlPlaneFactory, tmp_path: Path, fake_time: FakeClock
) -> None:
    alice, mallory = ssh_key(tmp_path / "keys", "alice", "alice@example.com"), ssh_key(tmp_path / "keys", "m")
    path = _control_plane(factory, "{verifyMain: git}")
    allowed_signers(tmp_path / "allowed_signers", alice)
    x = _signed_main(path, mallory)
    before = factory.refs()

    result = _promote(path)

    assert result.exit_code == 2, result.output
    fingerprint = subprocess.run(
        ["ssh-keygen", "-l", "-f", f"{mallory.private}.pub"], capture_output=True, text=True, check=True
    ).stdout.split()[1]
    assert _error_line(result) == (
        f"error: promoter.yaml:1: spec.signatures.verifyMain: git: main commit {x[:12]} is not promoted: "
        f"signer not allowed (key {fingerprint}; No principal matched.)"
    )
    assert factory.refs() == before


def test_a_bad_signature_is_refused(
    factory: ControlPlaneFactory, tmp_path: Path, fake_time: FakeClock
) -> None:
    key = ssh_key(tmp_path / "keys", email="alice@example.com")
    path = _control_plane(factory, "{verifyMain: git}")
    allowed_signers(tmp_path / "allowed_signers", key)
    signed = _signed_main(path, key, "the reviewed change")
    raw = subprocess.run(
        ["git", "-C", str(path), "cat-file", "commit", signed], capture_output=True, check=True
    )
    forged = raw.stdout.replace(b"the reviewed change", b"another change!!!!!")  # the signature stays
    x = (
        subprocess.run(
            ["git", "-C", str(path), "hash-object", "-t", "commit", "-w", "--stdin"],
            input=forged,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    subprocess.run(["git", "-C", str(path), "update-ref", "refs/heads/main", x], check=True)

    result = _promote(path)

    assert result.exit_code == 2, result.output
    assert _error_line(result) == (
        f"error: promoter.yaml:1: spec.signatures.verifyMain: git: main commit {x[:12]} is not promoted: bad signature"
    )


def test_a_signature_git_is_not_configured_to_check_names_the_setting(
    factory: ControlPlaneFactory, tmp_path: Path, fake_time: FakeClock
) -> None:
    key = ssh_key(tmp_path / "keys")
    path = _control_plane(factory, "{verifyMain: git}")
    x = _signed_main(path, key)  # and no gpg.ssh.allowedSignersFile anywhere

    result = _promote(path)

    assert result.exit_code == 2, result.output
    assert _error_line(result) == (
        f"error: promoter.yaml:1: spec.signatures.verifyMain: git: main commit {x[:12]} is not promoted: "
        "git cannot check the signature: gpg.ssh.allowedSignersFile needs to be configured and exist "
        "for ssh signature verification"
    )


def test_github_verification_needs_the_control_plane_on_github(
    factory: ControlPlaneFactory, fake_time: FakeClock
) -> None:
    path = _control_plane(factory, "{verifyMain: github}")
    result = _promote(path)
    assert result.exit_code == 2, result.output
    assert _error_line(result) == (
        f"error: promoter.yaml:1: spec.signatures.verifyMain: github: main commit {_head(path)[:12]} is not "
        "promoted: the control plane's forge is local, not GitHub; use git"
    )


def test_verify_main_from_outside_holds_when_the_commit_drops_the_pipelines_check(
    factory: ControlPlaneFactory, tmp_path: Path, fake_time: FakeClock
) -> None:
    """A commit that removes ``verifyMain`` from its own Pipeline cannot switch the check off
    when the run asks for it (``--verify-main``, or ``PROMOTER_VERIFY_MAIN`` in a workflow)."""
    path = _control_plane(factory, None)
    allowed_signers(tmp_path / "allowed_signers", ssh_key(tmp_path / "keys"))
    x = _head(path)
    before = factory.refs()

    flag = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--verify-main", "git"])
    env = CliRunner().invoke(
        cli, ["promote", "--control-plane", str(path)], env={"PROMOTER_VERIFY_MAIN": "git"}
    )

    for result in (flag, env):
        assert result.exit_code == 2, result.output
        assert (
            _error_line(result)
            == f"error: --verify-main: git: main commit {x[:12]} is not promoted: unsigned"
        )
    assert factory.refs() == before


def test_verify_main_from_outside_and_the_pipelines_both_run(
    factory: ControlPlaneFactory, tmp_path: Path, fake_time: FakeClock
) -> None:
    key = ssh_key(tmp_path / "keys", email="alice@example.com")
    path = _control_plane(factory, "{verifyMain: github}")
    allowed_signers(tmp_path / "allowed_signers", key)
    x = _signed_main(path, key)

    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--verify-main", "git"])

    assert result.exit_code == 2, (
        result.output
    )  # git's check passed; the Pipeline's github one cannot run here
    assert _error_line(result).startswith(
        f"error: promoter.yaml:1: spec.signatures.verifyMain: github: main commit {x[:12]} is not promoted"
    )


def test_verify_main_from_outside_promotes_a_signed_commit(
    factory: ControlPlaneFactory, tmp_path: Path, fake_time: FakeClock
) -> None:
    key = ssh_key(tmp_path / "keys", email="alice@example.com")
    path = _control_plane(factory, None)
    allowed_signers(tmp_path / "allowed_signers", key)
    x = _signed_main(path, key)

    result = CliRunner().invoke(
        cli, ["promote", "--control-plane", str(path), "--poll-interval", "0.1s", "--verify-main", "git"]
    )

    assert result.exit_code == 0, result.output
    assert f"main {x[:12]}: signature verified (alice@example.com)" in result.output


@pytest.fixture
def gnupg(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A GPG key in a short-lived GNUPGHOME (short: gpg-agent's socket path has a length limit)."""
    home = Path(tempfile.mkdtemp(prefix="gpg", dir="/tmp"))
    try:
        yield gpg_key(home / "g", monkeypatch, "alice@example.com")
    finally:
        subprocess.run(["gpgconf", "--kill", "all"], capture_output=True, check=False)
        shutil.rmtree(home, ignore_errors=True)


def test_a_gpg_signed_main_commit_is_verified_against_the_keyring(
    factory: ControlPlaneFactory, gnupg: str, fake_time: FakeClock
) -> None:
    path = _control_plane(factory, "{verifyMain: git}")
    x = _gpg_signed_main(path, gnupg)

    result = _promote(path)

    assert result.exit_code == 0, result.output
    assert f"main {x[:12]}: signature verified (Signer <alice@example.com>)" in result.output


def test_a_gpg_signature_of_a_key_not_in_the_keyring_is_refused(
    factory: ControlPlaneFactory, gnupg: str, fake_time: FakeClock
) -> None:
    path = _control_plane(factory, "{verifyMain: git}")
    x = _gpg_signed_main(path, gnupg)
    subprocess.run(
        ["gpg", "--batch", "--yes", "--delete-secret-and-public-key", gnupg], check=True, capture_output=True
    )
    before = factory.refs()

    result = _promote(path)

    assert result.exit_code == 2, result.output
    assert _error_line(result).startswith(
        f"error: promoter.yaml:1: spec.signatures.verifyMain: git: main commit {x[:12]} is not promoted: "
        f"git cannot check the signature (key {gnupg[-16:]}; "
    )
    assert factory.refs() == before


def test_a_scheduling_run_of_a_named_commit_verifies_it(
    factory: ControlPlaneFactory, tmp_path: Path, fake_time: FakeClock
) -> None:
    path = _control_plane(factory, "{verifyMain: git}")
    allowed_signers(tmp_path / "allowed_signers", ssh_key(tmp_path / "keys"))
    x = _head(path)
    before = factory.refs()

    result = CliRunner().invoke(
        cli, ["promote", "--control-plane", str(path), "--schedule", "dev", "--commit", x]
    )

    assert result.exit_code == 2, result.output
    assert _error_line(result).endswith(f"main commit {x[:12]} is not promoted: unsigned")
    assert factory.refs() == before
