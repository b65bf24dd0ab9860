"""The platform repo on GitHub: git over HTTPS with the token as a header (never in a URL or on
disk), every network call under the GitHub retry policy."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal, TypeVar

from promoter.errors import GitError
from promoter.forges.github.api import GitHubHttp
from promoter.forges.github.auth import Credentials, git_auth_env
from promoter.forges.github.commits import GitDatabase, signed_by_github
from promoter.platform.repo import PlatformRepo

T = TypeVar("T")


class GitHubPlatformRepo(PlatformRepo):
    """The platform repo over HTTPS: the token as a header, network calls retried."""

    def __init__(self, url: str, http: GitHubHttp, credentials: Credentials, repo: str) -> None:
        self._http = http
        self._credentials = credentials
        self._repo_name = repo
        self._busy = False
        self.signed_by: Literal["git", "github"] = "git"  # spec.signatures.commits
        super().__init__(url)

    def sign_with(self, signer: Literal["git", "github"]) -> None:
        self.signed_by = signer

    def finish(self, sha: str) -> str:
        """With ``signatures.commits: github``, the commit made again by GitHub, signed
        (``commits.signed_by_github``); otherwise as git config asks."""
        if self.signed_by != "github":
            return super().finish(sha)
        database = GitDatabase(
            self._http, self._http.client(self._credentials.api_auth(self._repo_name)), self._repo_name
        )
        return signed_by_github(self.git, database, sha, self._push_ref, self._fetch_ref)

    def remote_call(self, name: str, fn: Callable[[], T]) -> T:
        return self._net(name, fn)

    def _push_ref(self, ref: str, sha: str) -> None:
        spec = f"+{sha}:{ref}"
        self._net(
            f"push of {ref} to {self.url}", lambda: self.git.run("push", "--quiet", operands=[self.url, spec])
        )

    def _fetch_ref(self, ref: str) -> None:
        self._make_partial()
        self._net(
            f"fetch of {ref} from {self.url}",
            lambda: self.git.run(
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                "--filter=blob:none",
                operands=["origin", ref],
            ),
        )

    def remote_heads(self, branches: list[str]) -> dict[str, str | None]:
        return self._net(f"read branches of {self.url}", lambda: PlatformRepo.remote_heads(self, branches))

    def fetch(self, branches: list[str]) -> dict[str, str | None]:
        return self._net(f"fetch from {self.url}", lambda: PlatformRepo.fetch(self, branches))

    def push(self, updates: Mapping[str, tuple[str | None, str | None]]) -> None:
        def landed() -> bool | None:
            """After a broken connection: did the push get through anyway?"""
            heads = PlatformRepo.remote_heads(self, list(updates))
            if any(heads.get(branch) != new for branch, (_, new) in updates.items()):
                return None
            for branch, (_, new) in updates.items():
                self.remember(branch, new)
            return True

        def push() -> bool:
            PlatformRepo.push(self, updates)
            return True

        self._net(f"push of {', '.join(updates)} to {self.url}", push, landed)

    def _net(self, name: str, fn: Callable[[], T], verify: Callable[[], T | None] | None = None) -> T:
        if self._busy:  # fetch reads the branches first: one retry loop, not two nested
            return fn()
        self._busy = True

        def authenticated() -> T:
            self.git.env.update(git_auth_env(self.url, self._credentials.token(self._repo_name)))
            return fn()

        try:
            return self._http.git_call(name, authenticated, verify)
        except GitError as err:
            if not any(sign in str(err) for sign in ("Authentication failed", "error: 403", "HTTP 403")):
                raise
            raise GitError(
                f"{err} (the token, or the GitHub App, needs contents: write on {self._repo_name}; see docs/github.md)"
            ) from err
        finally:
            self._busy = False
