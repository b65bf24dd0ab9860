"""Commits GitHub signs, and GitHub's word on a commit's signature (docs/github.md, "Verified
commits").

GitHub signs a commit it creates through ``POST /repos/{o}/{r}/git/commits`` when the request
names no author and committer and comes from a GitHub App: the commit is then the App's, signed
with GitHub's own key, and shown "Verified". A personal access token's API commits are not
signed. The promoter writes its commit locally as before (``git fast-import``), pushes it to a
staging ref that is no branch (``refs/promoter/staging/<sha>``, so no workflow starts and no
branch shows), has GitHub create the same tree on the same parents with the same message,
deletes the staging ref, and goes on with GitHub's commit in place of its own. The commit
object is made again locally from the answer's ``verification.payload`` and ``signature``
(exactly the signed text, and the signature git keeps in its ``gpgsig`` header), so the cache
holds it without a fetch; when that does not give GitHub's sha, the staging ref is moved to
GitHub's commit and fetched.

Every request goes through ``GitHubHttp`` (retried, rate-limited, counted).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import github

from promoter.errors import ConfigError
from promoter.forges.github.api import GitHubHttp, GitHubRequestError
from promoter.forges.github.shapes import MalformedAnswer
from promoter.gitcmd import Git
from promoter.platform.signing import CommitObject

STAGING = "refs/promoter/staging"
#: GitHub's ``verification.reason`` values (REST "Create a commit", "Signature verification object").
REASONS = {
    "expired_key": "the key that made the signature has expired",
    "not_signing_key": "the GPG key is not a signing key",
    "gpgverify_error": "GitHub's signature verification service failed",
    "gpgverify_unavailable": "GitHub's signature verification service is unavailable",
    "unsigned": "the commit is not signed",
    "unknown_signature_type": "the signature is of a type GitHub does not know",
    "no_user": "no GitHub user has the committer's email",
    "unverified_email": "the committer's email is not verified on its GitHub account",
    "bad_email": "the committer's email is invalid",
    "unknown_key": "the key that made the signature is on no GitHub account",
    "malformed_signature": "the signature is malformed",
    "invalid": "the signature does not verify",
    "valid": "the signature is valid",
}


@dataclass(frozen=True)
class Verification:
    """GitHub's ``verification`` object of a commit."""

    verified: bool
    reason: str
    signature: str | None = None
    payload: str | None = None

    @classmethod
    def of(cls, data: Any, what: str) -> Verification:
        """The ``verification`` object of ``data`` (a git commit object); MalformedAnswer when
        GitHub's answer has none, or one of another shape."""
        found = data.get("verification") if isinstance(data, dict) else None
        if (
            not isinstance(found, dict)
            or not isinstance(found.get("verified"), bool)
            or not isinstance(found.get("reason"), str)
        ):
            raise MalformedAnswer(f"GitHub answered {what} with no verification object (verified, reason)")
        return cls(found["verified"], found["reason"], found.get("signature"), found.get("payload"))

    def explained(self) -> str:
        """``reason`` as GitHub names it, and what it means."""
        meaning = REASONS.get(self.reason)
        return f"{self.reason}: {meaning}" if meaning else self.reason


class GitDatabase:
    """The git database endpoints of one repository, and its commits' verification."""

    def __init__(self, http: GitHubHttp, gh: github.Github, repo: str) -> None:
        self.http = http
        self.gh = gh
        self.repo = repo
        self.url = f"{http.api_url}/repos/{repo}"

    def _send(self, name: str, verb: str, url: str, body: dict[str, Any] | None = None) -> Any:
        def request() -> Any:
            return self.gh.requester.requestJsonAndCheck(verb, url, input=body)[1]

        return self.http.call(name, request, write=None if verb == "GET" else "write")

    def create_commit(self, tree: str, parents: tuple[str, ...], message: str) -> dict[str, Any]:
        """``POST git/commits`` with no author or committer: GitHub's commit (a new one on each
        retry: an unreferenced commit left by a lost answer is harmless)."""
        body = {"message": message, "tree": tree, "parents": list(parents)}
        data = self._send("create commit", "POST", f"{self.url}/git/commits", body)
        if not isinstance(data, dict) or not isinstance(data.get("sha"), str):
            raise MalformedAnswer(f"GitHub answered POST {self.url}/git/commits with no commit sha")
        return data

    def move_ref(self, ref: str, sha: str) -> None:
        """``PATCH git/refs/<ref>`` to ``sha``, forced (the staging ref only)."""
        path = quote(ref.removeprefix("refs/"), safe="/")
        self._send("move ref", "PATCH", f"{self.url}/git/refs/{path}", {"sha": sha, "force": True})

    def delete_ref(self, ref: str) -> None:
        """``DELETE git/refs/<ref>``; a ref already gone (422) is fine."""
        path = quote(ref.removeprefix("refs/"), safe="/")
        try:
            self._send("delete ref", "DELETE", f"{self.url}/git/refs/{path}")
        except GitHubRequestError as err:
            if err.status != 422:
                raise

    def verification(self, sha: str) -> Verification:
        """GitHub's verification of commit ``sha`` (``GET commits/{sha}``, ``commit.verification``)."""
        url = f"{self.url}/commits/{sha}"
        data = self.http.get_json("get commit", self.gh, url, {}, poll=False)
        commit = data.get("commit") if isinstance(data, dict) else None
        return Verification.of(commit, f"GET {url}")


def signed_by_github(
    git: Git,
    database: GitDatabase,
    sha: str,
    push: Callable[[str, str], None],
    fetch: Callable[[str], None],
) -> str:
    """Commit ``sha`` (written locally) made again by GitHub, signed: GitHub's sha, its object in
    ``git``. ``push(ref, sha)`` force-pushes a ref, ``fetch(ref)`` fetches one."""
    commit = CommitObject.parse(git.run("cat-file", "commit", operands=[sha]).stdout)
    staging = f"{STAGING}/{sha}"
    push(staging, sha)  # GitHub's commit needs the tree (and parents) on GitHub
    try:
        made = database.create_commit(commit.tree, commit.parents, commit.message.decode("utf-8", "replace"))
        verification = Verification.of(made, f"POST {database.url}/git/commits")
        if not verification.verified:
            raise NotSigned(database.repo, verification)
        theirs = str(made["sha"])
        if rebuilt(git, verification) != theirs:
            database.move_ref(staging, theirs)
            fetch(staging)
    finally:
        database.delete_ref(staging)
    return theirs


def rebuilt(git: Git, verification: Verification) -> str | None:
    """The signed commit object written into ``git`` from GitHub's ``payload`` (the commit
    without its signature) and ``signature``: its sha (None without them)."""
    if not verification.payload or not verification.signature:
        return None
    head, _, message = verification.payload.encode().partition(b"\n\n")
    signature = verification.signature.strip("\n").encode().replace(b"\n", b"\n ")
    raw = head + b"\ngpgsig " + signature + b"\n\n" + message
    return git.out("hash-object", "-t", "commit", "-w", "--stdin", input=raw)


class NotSigned(ConfigError):
    """GitHub made the commit but did not sign it: the credentials are no App's. Exit 2."""

    def __init__(self, repo: str, verification: Verification) -> None:
        super().__init__(
            f"spec.signatures.commits: github: GitHub did not sign the promotion commit it made on {repo} "
            f"(verification: {verification.explained()}); GitHub signs the API commits of a GitHub App "
            "(PROMOTER_GITHUB_APP_ID), not a token's: use an App, or signatures.commits: git",
            file="promoter.yaml",
        )
