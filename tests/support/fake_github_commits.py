"""GitHub's git database and commit endpoints, added to a ``FakeGitHub``: what verified commits
use (docs.github.com/rest/git/commits, /rest/git/refs, /rest/commits/commits):

- ``POST /repos/{o}/{r}/git/commits``: a commit of a tree that must be in the repository, on
  parents that must be commits there (422 otherwise, with GitHub's messages). Without author and
  committer it is the caller's: a GitHub App's installation token makes it the App's bot's and
  GitHub signs it with its own key (here a real SSH key of the fake's, "web-flow"); a personal
  token's commit is the user's, unsigned. The answer carries ``verification`` with the
  ``signature`` and ``payload`` as GitHub gives them;
- ``PATCH`` and ``DELETE /repos/{o}/{r}/git/refs/{ref}``: any ref, forced or fast-forward only;
- ``GET /repos/{o}/{r}/commits/{ref}``: the commit with ``commit.verification``, judged by git
  against the keys the fake knows (its own and the users' registered signing keys): ``valid``,
  ``unknown_key``, ``invalid`` or ``unsigned``.
"""

from __future__ import annotations

import datetime
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from tests.support.fake_github import FakeGitHub, FakeRepo, Reply
from tests.support.fake_github_objects import user
from tests.support.signing_keys import SshKey, ssh_key

APP_BOT = ("promoter-app[bot]", "4242+promoter-app[bot]@users.noreply.github.com")
TOKEN_USER = ("promoter-bot", "41898282+promoter-bot@users.noreply.github.com")


class GitDatabase:
    """The endpoints above, served for ``fake`` (installed with ``serve``)."""

    def __init__(self, fake: FakeGitHub, keys: Path) -> None:
        self.fake = fake
        self.web_flow = ssh_key(keys, "web-flow", "noreply@github.com")
        self.user_keys: list[SshKey] = []  # signing keys users registered on their accounts
        self.allowed = keys / "allowed_signers"
        self.break_payload = False  # answer a payload that is not the commit's (a test's knob)
        self._write_allowed()

    def serve(self) -> GitDatabase:
        original = self.fake._route

        def route(method: str, path: str) -> Any:
            return self._route(method, path) or original(method, path)

        self.fake._route = route  # type: ignore[method-assign]
        return self

    def register(self, key: SshKey) -> None:
        """A user adds ``key`` as a signing key of their GitHub account."""
        self.user_keys.append(key)
        self._write_allowed()

    def _write_allowed(self) -> None:
        keys = [self.web_flow, *self.user_keys]
        self.allowed.write_text("".join(f"{k.email} {k.public}\n" for k in keys))

    def _route(self, method: str, path: str) -> Any:
        repo = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"
        table = [
            ("POST", rf"{repo}/git/commits", self._create_commit, "git_commit"),
            ("PATCH", rf"{repo}/git/refs/(?P<ref>.+)", self._update_ref, "git_ref"),
            ("DELETE", rf"{repo}/git/refs/(?P<ref>.+)", self._delete_ref, "git_ref"),
            ("GET", rf"{repo}/commits/(?P<ref>[^/]+)", self._get_commit, "get_commit"),
        ]
        for verb, regex, handler, call in table:
            match = re.fullmatch(regex, path)
            if verb == method and match:
                return handler, match.groupdict(), call
        return None

    # -------------------------------------------------------------- handlers

    def _create_commit(self, params: dict[str, str], query: Any, body: dict[str, Any], headers: Any) -> Any:
        repo = self.fake._repo(params)
        tree, parents = body.get("tree", ""), body.get("parents", [])
        if repo.git("cat-file", "-t", tree, check=False).stdout.strip() != "tree":
            raise Reply(422, "Tree SHA does not exist")
        for parent in parents:
            if not repo.has_commit(parent):
                raise Reply(422, "Parent SHA does not exist or is not a commit object")
        app = headers.get("Authorization", "").partition(" ")[2] in self.fake.installation_tokens
        name, email = APP_BOT if app else TOKEN_USER
        stamp = f"{int(self.fake.wall())} +0000"
        env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": stamp}
        env |= {
            "GIT_COMMITTER_NAME": "GitHub" if app else name,
            "GIT_COMMITTER_EMAIL": "noreply@github.com" if app else email,
            "GIT_COMMITTER_DATE": stamp,
        }
        sign = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={self.web_flow.private}"] if app else []
        args = [
            *sign,
            "commit-tree",
            *(a for p in parents for a in ("-p", p)),
            *(["-S"] if app else []),
            "-F",
            "-",
            tree,
        ]
        sha = (
            subprocess.run(
                ["git", "-C", str(repo.path), *args],
                input=body.get("message", "").encode(),
                env={**os.environ, **env},
                capture_output=True,
                check=True,
            )
            .stdout.decode()
            .strip()
        )
        return 201, self._git_commit(repo, sha), {}

    def _update_ref(self, params: dict[str, str], query: Any, body: dict[str, Any], headers: Any) -> Any:
        repo = self.fake._repo(params)
        ref = f"refs/{params['ref']}"
        old = repo.git("rev-parse", "--verify", "--quiet", ref, check=False).stdout.strip()
        if not old:
            raise Reply(422, "Reference does not exist")
        new = body["sha"]
        if (
            not body.get("force")
            and repo.git("merge-base", "--is-ancestor", old, new, check=False).returncode
        ):
            raise Reply(422, "Update is not a fast forward")
        repo.git("update-ref", ref, new, old)
        return 200, self._ref(repo, ref, new), {}

    def _delete_ref(self, params: dict[str, str], query: Any, body: Any, headers: Any) -> Any:
        repo = self.fake._repo(params)
        ref = f"refs/{params['ref']}"
        if not repo.git("rev-parse", "--verify", "--quiet", ref, check=False).stdout.strip():
            raise Reply(422, "Reference does not exist")
        repo.git("update-ref", "-d", ref)
        return 204, None, {}

    def _get_commit(self, params: dict[str, str], query: Any, body: Any, headers: Any) -> Any:
        repo = self.fake._repo(params)
        sha = repo.git(
            "rev-parse", "--verify", "--quiet", f"{params['ref']}^{{commit}}", check=False
        ).stdout.strip()
        if not sha:
            raise Reply(422, f"No commit found for SHA: {params['ref']}")
        return 200, self._commit(repo, sha), {}

    # -------------------------------------------------------------- GitHub's shapes

    def _git_commit(self, repo: FakeRepo, sha: str) -> dict[str, Any]:
        """A git commit object as ``POST git/commits`` answers it."""
        api, web = self.fake.api_url, self.fake.web_url
        raw = repo.git("cat-file", "commit", sha).stdout
        fields, message = _headers(raw)
        author, committer = _person(fields["author"]), _person(fields["committer"])
        base = f"{api}/repos/{repo.full_name}"
        return {
            "sha": sha,
            "node_id": f"C_kwDOAA{sha[:20]}",
            "url": f"{base}/git/commits/{sha}",
            "html_url": f"{web}/{repo.full_name}/commit/{sha}",
            "author": author,
            "committer": committer,
            "tree": {"sha": fields["tree"], "url": f"{base}/git/trees/{fields['tree']}"},
            "message": message,
            "parents": [
                {"sha": p, "url": f"{base}/git/commits/{p}", "html_url": f"{web}/{repo.full_name}/commit/{p}"}
                for p in fields.get("parents", [])
            ],
            "verification": self._verification(repo, sha, raw),
        }

    def _ref(self, repo: FakeRepo, ref: str, sha: str) -> dict[str, Any]:
        """A git reference as ``git/refs`` answers it."""
        base = f"{self.fake.api_url}/repos/{repo.full_name}/git"
        return {
            "ref": ref,
            "node_id": f"REF_kwDOAA{sha[:12]}",
            "url": f"{base}/{ref}",
            "object": {"type": "commit", "sha": sha, "url": f"{base}/commits/{sha}"},
        }

    def _commit(self, repo: FakeRepo, sha: str) -> dict[str, Any]:
        """A commit as ``GET /repos/{o}/{r}/commits/{ref}`` answers it."""
        api, web = self.fake.api_url, self.fake.web_url
        git_commit = self._git_commit(repo, sha)
        inner = {k: git_commit[k] for k in ("author", "committer", "message", "tree", "url", "verification")}
        login = user(api, web, "octocat", 583231)
        return {
            "sha": sha,
            "node_id": git_commit["node_id"],
            "commit": {**inner, "comment_count": 0},
            "url": f"{api}/repos/{repo.full_name}/commits/{sha}",
            "html_url": git_commit["html_url"],
            "comments_url": f"{api}/repos/{repo.full_name}/commits/{sha}/comments",
            "author": login,
            "committer": login,
            "parents": git_commit["parents"],
            "stats": {"total": 0, "additions": 0, "deletions": 0},
            "files": [],
        }

    def _verification(self, repo: FakeRepo, sha: str, raw: str) -> dict[str, Any]:
        signature, payload = _split_signature(raw)
        if signature is None:
            return {
                "verified": False,
                "reason": "unsigned",
                "signature": None,
                "payload": None,
                "verified_at": None,
            }
        proc = repo.git("-c", f"gpg.ssh.allowedSignersFile={self.allowed}", "log", "-1", "--format=%G?", sha)
        reason = {"G": "valid", "B": "invalid"}.get(proc.stdout.strip(), "unknown_key")
        if self.break_payload:
            payload = payload.replace("\n\n", "\n\nchanged: ", 1)
        return {
            "verified": reason == "valid",
            "reason": reason,
            "signature": signature,
            "payload": payload,
            "verified_at": self.fake._iso() if reason == "valid" else None,
        }


def _headers(raw: str) -> tuple[dict[str, Any], str]:
    head, _, message = raw.partition("\n\n")
    fields: dict[str, Any] = {"parents": []}
    for line in head.split("\n"):
        if line.startswith(" "):
            continue
        key, _, value = line.partition(" ")
        if key == "parent":
            fields["parents"].append(value)
        else:
            fields[key] = value
    return fields, message


def _person(value: str) -> dict[str, str]:
    name, _, rest = value.partition(" <")
    email, _, date = rest.partition("> ")
    seconds = int(date.split()[0])
    when = datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"name": name, "email": email, "date": when}


def _split_signature(raw: str) -> tuple[str | None, str]:
    """(the signature in the ``gpgsig`` header, the commit without it), as GitHub's
    ``verification`` gives them: the payload is what was signed."""
    head, _, message = raw.partition("\n\n")
    kept: list[str] = []
    signature: list[str] = []
    inside = False  # within the gpgsig header (its continuation lines start with a space)
    for line in head.split("\n"):
        if line.startswith("gpgsig "):
            inside = True
            signature.append(line.removeprefix("gpgsig "))
        elif inside and line.startswith(" "):
            signature.append(line[1:])
        else:
            inside = False
            kept.append(line)
    if not signature:
        return None, raw
    return "\n".join(signature) + "\n", "\n".join(kept) + "\n\n" + message
