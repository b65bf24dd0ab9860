"""Credentials for GitHub: a token, or a GitHub App's installation tokens; for the API and for git.

A token comes from ``PROMOTER_GITHUB_TOKEN``, else ``GITHUB_TOKEN``, else ``GH_TOKEN``. A GitHub App is
``PROMOTER_GITHUB_APP_ID`` plus ``PROMOTER_GITHUB_APP_PRIVATE_KEY`` (the PEM text, or the path of
a PEM file); its installation tokens are minted per repository owner through the retry layer and
renewed before they expire (they last an hour; a promotion with long soaks may last longer).

Git gets the token as an ``Authorization`` header through git's own configuration in the
environment (``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``,
``http.<url>.extraHeader``), scoped to the platform repo's URL: never in a URL, in
``.git/config``, in a command line, a log or an error. Every token is registered for masking.
"""

from __future__ import annotations

import base64
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import github

from promoter.errors import UsageError
from promoter.forges.github.api import GitHubHttp
from promoter.forges.github.policy import server_time
from promoter.masking import register_secret

TOKEN_VARIABLES = ("PROMOTER_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN")  # GH_TOKEN: as gh reads it
APP_ID = "PROMOTER_GITHUB_APP_ID"
APP_KEY = "PROMOTER_GITHUB_APP_PRIVATE_KEY"
RENEW_BEFORE = 300.0  # seconds before expiry at which an installation token is replaced


class Credentials(ABC):
    """Tokens for the API and for git, per repository (``owner/name``)."""

    def api_auth(self, repo: str) -> github.Auth.Auth:
        return _LiveToken(self, repo)

    @abstractmethod
    def token(self, repo: str) -> str:
        """The token to use on ``repo`` now."""


class StaticToken(Credentials):
    """A personal access token, fine-grained token, or any token given as such."""

    def __init__(self, value: str) -> None:
        self.value = value.strip()
        register_secret(self.value)

    def token(self, repo: str) -> str:
        return self.value


class AppInstallationTokens(Credentials):
    """A GitHub App: one installation token per repository owner, renewed before expiry.

    With ``repositories`` (``owner/name``), each token is limited to those of its owner (the
    platform repo and the control-plane repo), whatever else the App is installed on."""

    def __init__(
        self, http: GitHubHttp, app_id: str, private_key: str, repositories: Sequence[str] = ()
    ) -> None:
        self.http = http
        auth = github.Auth.AppAuth(app_id, private_key)
        self.integration = github.GithubIntegration(auth=auth, **http.client_options())
        http.prepare(self.integration.requester)
        self.repositories = tuple(dict.fromkeys(repositories))
        self._installations: dict[str, int] = {}  # owner -> installation id
        self._tokens: dict[int, tuple[str, float]] = {}  # installation id -> (token, expiry)

    def token(self, repo: str) -> str:
        installation = self._installation(repo)
        cached = self._tokens.get(installation)
        if cached and cached[1] - self.http.wall() > RENEW_BEFORE:
            return cached[0]
        owner = repo.partition("/")[0]
        names = [r.partition("/")[2] for r in (*self.repositories, repo) if r.partition("/")[0] == owner]
        body: dict[str, Any] = {"repositories": list(dict.fromkeys(names))} if self.repositories else {}
        url = f"/app/installations/{installation}/access_tokens"
        headers, grant = self.http.call(
            "create an App installation token",
            lambda: self.integration.requester.requestJsonAndCheck("POST", url, input=body),
            write="write",
        )
        token = str(grant["token"])
        register_secret(token)
        # the expiry is GitHub's time: how long the token lives is measured against the answer's
        # own Date, so that a runner whose clock is off still renews in time
        lifetime = _expiry(grant.get("expires_at"), 0.0) - server_time(headers, self.http.wall)
        self._tokens[installation] = (token, self.http.wall() + max(lifetime, 0.0))
        return token

    def _installation(self, repo: str) -> int:
        owner, _, name = repo.partition("/")
        if owner not in self._installations:
            found = self.http.call(
                f"find the App's installation on {repo}",
                lambda: self.integration.get_repo_installation(owner, name),
            )
            self._installations[owner] = found.id
        return self._installations[owner]


class _LiveToken(github.Auth.Auth):
    """PyGithub auth that asks the credentials for the current token on every request."""

    def __init__(self, credentials: Credentials, repo: str) -> None:
        self.credentials = credentials
        self.repo = repo

    @property
    def token_type(self) -> str:
        return "token"

    @property
    def token(self) -> str:
        return self.credentials.token(self.repo)

    @property
    def _masked_token(self) -> str:
        return "token (removed)"


def _expiry(value: Any, default: float) -> float:
    """``expires_at`` (ISO 8601) as a timestamp, else ``default``."""
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return default


def credentials_in(environ: Mapping[str, str]) -> bool:
    """Whether ``environ`` gives a token or a whole GitHub App, as ``credentials_from_env`` reads them."""
    if any(environ.get(name, "").strip() for name in TOKEN_VARIABLES):
        return True
    return bool(environ.get(APP_ID, "").strip() and environ.get(APP_KEY, "").strip())


def credentials_from_env(
    http: GitHubHttp, environ: Mapping[str, str] | None = None, repositories: Sequence[str] = ()
) -> Credentials:
    """The token, else the GitHub App (its tokens limited to ``repositories``), from the
    environment; UsageError naming both when neither."""
    env = os.environ if environ is None else environ
    for name in TOKEN_VARIABLES:
        if env.get(name, "").strip():
            return StaticToken(env[name])
    app_id, key = env.get(APP_ID, "").strip(), env.get(APP_KEY, "").strip()
    if app_id and key:
        return AppInstallationTokens(http, app_id, _private_key(key), repositories)
    if app_id or key:
        missing = APP_KEY if app_id else APP_ID
        raise UsageError(f"GitHub App: {missing} is not set (both {APP_ID} and {APP_KEY} are needed)")
    raise UsageError(
        "the github forge needs a token: set PROMOTER_GITHUB_TOKEN (or GITHUB_TOKEN, or GH_TOKEN), "
        f"or a GitHub App with {APP_ID} and {APP_KEY}; see docs/github.md"
    )


def _private_key(value: str) -> str:
    if value.startswith("-----BEGIN"):
        return value
    path = Path(value).expanduser()
    if not path.is_file():
        raise UsageError(f"{APP_KEY}: neither a PEM private key nor the path of one")
    key = path.read_text()
    register_secret(key)
    return key


def git_auth_env(git_url: str, token: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment that makes git send ``token`` to ``git_url`` (and below it) as a header.

    The entries are appended to any ``GIT_CONFIG_COUNT`` entries already in the environment,
    so that a caller's own settings (a proxy, an ``insteadOf``) still apply.
    """
    env = os.environ if environ is None else environ
    if not git_url.startswith(("https://", "http://")):
        return {}  # ssh: git authenticates with the user's key
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    register_secret(token)
    register_secret(basic)  # what git would show if it ever printed the header
    try:
        count = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    except ValueError:
        count = 0
    return {
        "GIT_CONFIG_COUNT": str(count + 1),
        f"GIT_CONFIG_KEY_{count}": f"http.{git_url}.extraHeader",
        f"GIT_CONFIG_VALUE_{count}": f"Authorization: Basic {basic}",
        # a stalled transfer (under 1 kB/s for 2 minutes) is a timeout, retried like any other;
        # git's default waits forever
        "GIT_HTTP_LOW_SPEED_LIMIT": env.get("GIT_HTTP_LOW_SPEED_LIMIT", "1000"),
        "GIT_HTTP_LOW_SPEED_TIME": env.get("GIT_HTTP_LOW_SPEED_TIME", "120"),
    }
