"""The main commit a promotion takes must carry a valid signature, when the Pipeline says so
(``spec.signatures.verifyMain``, docs/security.md "Signed and verified commits"):

- ``git``: git's own verification in the control-plane clone (``git log --format=%G?``, as
  ``git verify-commit`` judges it): SSH signatures against ``gpg.ssh.allowedSignersFile``, GPG
  ones against the keyring, X.509 through ``gpgsm``, all from git config;
- ``github``: GitHub's (``GET /repos/{o}/{r}/commits/{sha}``, ``commit.verification``), when the
  control plane is on GitHub.

A commit that fails is refused before anything is rendered or pushed: a SignatureRefused
(exit 2) with the reason: unsigned, a bad signature, a signer not allowed, or GitHub's
``reason``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from promoter.errors import InputError, one_line
from promoter.forges.base import Forge
from promoter.gitcmd import Git
from promoter.model import MainObjects
from promoter.platform.signing import CommitObject, why

#: ``git log --format=%G?``: what each letter says of a signature that is not good.
GIT_VERDICTS = {
    "B": "bad signature",
    "U": "signer not allowed",
    "X": "the signature has expired",
    "Y": "the key that made it has expired",
    "R": "the key that made it was revoked",
    "E": "git cannot check the signature",
}


class SignatureRefused(InputError):
    """The main commit has no valid signature of an allowed signer. Exit 2: nothing pushed."""


@runtime_checkable
class VerifiesCommits(Protocol):
    """A forge that can say whether the control plane's forge verified a commit's signature."""

    def commit_verification(self, sha: str) -> tuple[bool, str]:
        """(verified, GitHub's reason) of control-plane commit ``sha``."""


#: Where a check asked from outside the control plane is named in a refusal.
OUTSIDE = "--verify-main"


def verify_main(git: Git, main: MainObjects, forge: Forge, required: str | None = None) -> str | None:
    """Who signed main commit ``main.commit`` (None when nothing asks for a check);
    SignatureRefused when its signature is missing or not good. ``required`` is the check asked
    from outside (``--verify-main``): it holds even when the commit's own Pipeline drops its
    ``verifyMain``, and both run when they name different verifiers."""
    asked: list[tuple[str, str]] = [(required, OUTSIDE)] if required else []
    own = main.pipeline.verify_main
    if own and own != required:
        asked.append((own, "spec.signatures.verifyMain"))
    signers = [
        _by_github(forge, main, field) if by == "github" else _by_git(git, main, field) for by, field in asked
    ]
    return ", ".join(signers) or None


def _refused(main: MainObjects, by: str, reason: str, field: str) -> SignatureRefused:
    message = f"{field}: {by}: main commit {main.commit[:12]} is not promoted: {one_line(reason)}"
    if field == OUTSIDE:
        return SignatureRefused(message)
    source = main.pipeline.source
    return SignatureRefused(message, file=source.file, line=source.line)


def _by_git(git: Git, main: MainObjects, field: str) -> str:
    """Git's verdict on the commit's signature; the signer (or key) when good."""
    sha = main.commit
    commit = CommitObject.parse(git.run("cat-file", "commit", operands=[sha]).stdout)
    if not commit.signed:
        raise _refused(main, "git", "unsigned", field)
    listed = git.run("log", "-1", "--format=%G?%n%GS%n%GK", operands=[sha]).stdout.decode("utf-8", "replace")
    verdict, signer, key = [*listed.split("\n"), "", ""][:3]
    if verdict == "G":
        return signer or key
    detail = git.run("verify-commit", operands=[sha], check=False).stderr
    if verdict == "N":  # signed, yet git saw no signature it could read: its config is missing
        raise _refused(main, "git", f"git cannot check the signature: {why(detail)}", field)
    reason = GIT_VERDICTS.get(verdict, f"git says {verdict!r}")
    if verdict in ("U", "E"):
        reason += f" ({_key_words(signer, key, _last_line(detail))})"
    raise _refused(main, "git", reason, field)


def _last_line(stderr: bytes) -> str:
    """What git says last about a signature it judged: why it is not good (``No principal
    matched.``), after the line that says which key made it."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return one_line(lines[-1]) if lines else ""


def _key_words(signer: str, key: str, detail: str) -> str:
    who = f"signed by {signer}" if signer else f"key {key}" if key else "no key"
    return f"{who}; {detail}" if detail else who


def _by_github(forge: Forge, main: MainObjects, field: str) -> str:
    if not isinstance(forge, VerifiesCommits):
        raise _refused(
            main, "github", f"the control plane's forge is {forge.name}, not GitHub; use git", field
        )
    verified, reason = forge.commit_verification(main.commit)
    if not verified:
        raise _refused(main, "github", reason, field)
    return f"GitHub ({reason})"
