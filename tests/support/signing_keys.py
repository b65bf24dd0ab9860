"""Real signing keys for the tests of signed and verified commits: SSH keys from ``ssh-keygen``
and GPG keys from ``gpg``, made in the test's own temporary folders (never committed), and the
git config that signs with them (the test's own global config, see tests/conftest.py)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class SshKey:
    private: Path
    public: str  # "ssh-ed25519 AAAA... comment", as an allowed signers file names it
    email: str


def ssh_key(directory: Path, name: str = "signer", email: str = "signer@example.com") -> SshKey:
    """A new ed25519 key without a passphrase, in ``directory``."""
    if shutil.which("ssh-keygen") is None:
        pytest.skip("ssh-keygen is not installed: SSH signatures cannot be made here")
    directory.mkdir(parents=True, exist_ok=True)
    private = directory / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", email, "-f", str(private)], check=True
    )
    return SshKey(private, (directory / f"{name}.pub").read_text().strip(), email)


def git_config(*pairs: tuple[str, str]) -> None:
    """Set ``pairs`` in the test's global git config (``GIT_CONFIG_GLOBAL``)."""
    for key, value in pairs:
        subprocess.run(["git", "config", "--global", key, value], check=True)


def sign_with_ssh(key: SshKey) -> None:
    """git config that signs every commit with ``key``, as a user's would."""
    git_config(("commit.gpgsign", "true"), ("gpg.format", "ssh"), ("user.signingkey", str(key.private)))


def allowed_signers(path: Path, *keys: SshKey) -> Path:
    """An allowed signers file (``ssh-keygen`` ALLOWED SIGNERS format) naming ``keys``, set as
    git's ``gpg.ssh.allowedSignersFile``."""
    path.write_text("".join(f'{k.email} namespaces="git" {k.public}\n' for k in keys))
    git_config(("gpg.ssh.allowedSignersFile", str(path)))
    return path


def gpg_key(home: Path, monkeypatch: pytest.MonkeyPatch, email: str = "signer@example.com") -> str:
    """A new GPG signing key without a passphrase in its own ``GNUPGHOME`` (set for the test's
    process): its fingerprint. Skips when gpg is not installed."""
    if shutil.which("gpg") is None:
        pytest.skip("gpg is not installed: GPG signatures cannot be made or checked here")
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    monkeypatch.setenv("GNUPGHOME", str(home))
    subprocess.run(
        [
            "gpg",
            "--batch",
            "--quiet",
            "--passphrase",
            "",
            "--quick-gen-key",
            f"Signer <{email}>",
            "ed25519",
            "sign",
            "never",
        ],
        check=True,
        capture_output=True,
    )
    listed = subprocess.run(
        ["gpg", "--batch", "--with-colons", "--list-secret-keys", email],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return next(line.split(":")[9] for line in listed.splitlines() if line.startswith("fpr:"))


def signature_of(repo: Path, commit: str) -> tuple[str, str]:
    """git's verdict on ``commit``'s signature in ``repo``: (``%G?``, ``%GS``)."""
    out = subprocess.run(
        ["git", "-C", str(repo), "log", "-1", "--format=%G?%n%GS", commit],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\n")
    return out[0], out[1]
