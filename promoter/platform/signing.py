"""Signing the commits the promoter writes, as git config asks (``commit.gpgsign``, with
``gpg.format`` and ``user.signingkey``): SSH, GPG or X.509, whatever git itself would sign with.

``git fast-import`` cannot sign, so a commit it wrote is made again with ``git commit-tree -S``:
the same tree, parents, message, author and committer with their dates; only the signature is
new. The config is read where git reads it for the platform cache (the global and system
files, ``GIT_CONFIG_*`` in the environment), once per cache. A signature git cannot make (no key,
no agent) is a SigningFailed naming the setting, before anything is pushed.
"""

from __future__ import annotations

from dataclasses import dataclass

from promoter.errors import InputError, one_line
from promoter.gitcmd import Git
from promoter.masking import mask

SIGNATURE_HEADERS = (b"gpgsig", b"gpgsig-sha256")


class SigningFailed(InputError):
    """git config asks for signed commits and git could not sign one. Exit 2: nothing pushed."""


@dataclass(frozen=True)
class CommitObject:
    """A commit as git stores it: what ``commit-tree`` needs to make it again."""

    tree: str
    parents: tuple[str, ...]
    author: tuple[str, str, str]  # name, email, date as git stores it ("<seconds> <zone>")
    committer: tuple[str, str, str]
    message: bytes
    signed: bool

    @classmethod
    def parse(cls, raw: bytes) -> CommitObject:
        head, _, message = raw.partition(b"\n\n")
        fields: dict[bytes, list[bytes]] = {}
        for line in head.split(b"\n"):
            if line.startswith(b" "):  # a continuation line of a multi-line header (a signature)
                continue
            key, _, value = line.partition(b" ")
            fields.setdefault(key, []).append(value)
        return cls(
            fields[b"tree"][0].decode(),
            tuple(p.decode() for p in fields.get(b"parent", [])),
            _person(fields[b"author"][0]),
            _person(fields[b"committer"][0]),
            message,
            any(key in fields for key in SIGNATURE_HEADERS),
        )


def _person(value: bytes) -> tuple[str, str, str]:
    """``Name <email> 1700000000 +0000`` as (name, email, date)."""
    text = value.decode("utf-8", "replace")
    name, _, rest = text.partition(" <")
    email, _, date = rest.partition("> ")
    return name, email, date


class Signer:
    """Signs the commits written in one repository when git config asks for it."""

    def __init__(self, git: Git) -> None:
        self.git = git
        self._wanted: bool | None = None

    def wanted(self) -> bool:
        """Whether git config says ``commit.gpgsign = true`` (asked once)."""
        if self._wanted is None:
            proc = self.git.run("config", "--bool", "--get", "commit.gpgsign", check=False)
            self._wanted = proc.stdout.decode().strip() == "true"
        return self._wanted

    def sign(self, sha: str) -> str:
        """``sha`` itself when git config asks for no signature (or it is signed already), else
        the same commit made again with a signature: its sha."""
        if not self.wanted():
            return sha
        commit = CommitObject.parse(self.git.run("cat-file", "commit", operands=[sha]).stdout)
        if commit.signed:
            return sha
        return self.make(commit)

    def make(self, commit: CommitObject) -> str:
        """``commit`` made with ``git commit-tree -S``; SigningFailed when git cannot sign."""
        env = {
            "GIT_AUTHOR_NAME": commit.author[0],
            "GIT_AUTHOR_EMAIL": commit.author[1],
            "GIT_AUTHOR_DATE": commit.author[2],
            "GIT_COMMITTER_NAME": commit.committer[0],
            "GIT_COMMITTER_EMAIL": commit.committer[1],
            "GIT_COMMITTER_DATE": commit.committer[2],
        }
        parents = [arg for parent in commit.parents for arg in ("-p", parent)]
        proc = self.git.run(
            "commit-tree",
            "-S",
            *parents,
            "-F",
            "-",
            operands=[commit.tree],
            input=commit.message,
            check=False,
            env=env,
        )
        if proc.returncode != 0:
            raise SigningFailed(f"cannot sign the commit: {why(proc.stderr)} ({self.describe()})")
        return proc.stdout.decode().strip()

    def describe(self) -> str:
        """The settings git signs with, for an error: format and key (never a key's content)."""
        found = {}
        for key in ("gpg.format", "user.signingkey"):
            proc = self.git.run("config", "--get", key, check=False)
            found[key] = proc.stdout.decode().strip()
        key = found["user.signingkey"]
        if key.startswith(("ssh-", "key::", "ecdsa-", "sk-")):
            key = "a literal key"
        shown = key or "unset: the committer's identity"
        return f"git config commit.gpgsign is true, gpg.format {found['gpg.format'] or 'openpgp'}, user.signingkey {shown}"


def why(stderr: bytes) -> str:
    """git's reason, in one line: its first ``error:`` or ``fatal:`` line, else its first line."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    reason = next(
        (line for line in lines if line.startswith(("error:", "fatal:"))), lines[0] if lines else ""
    )
    return one_line(mask(reason.removeprefix("error: ").removeprefix("fatal: "))) or "git gave no reason"
