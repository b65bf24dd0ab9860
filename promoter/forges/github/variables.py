"""A repository's Actions variables (GitHub's REST API, "Variables"), through the one GitHub
HTTP layer: what arms the control plane's heartbeat (docs/github-actions.md#the-heartbeat).

- ``GET /repos/{owner}/{repo}/actions/variables/{name}``: 200 ``{name, value, created_at,
  updated_at}``, 404 when the variable does not exist;
- ``PATCH /repos/{owner}/{repo}/actions/variables/{name}`` with ``{name, value}``: 204;
- ``POST /repos/{owner}/{repo}/actions/variables`` with ``{name, value}``: 201, the first time.

A GitHub App needs the repository permission *Variables: read and write*; a fine-grained token
the same; a classic token ``repo``. A workflow's own ``GITHUB_TOKEN`` cannot write variables.
"""

from __future__ import annotations

from typing import Any

import github

from promoter.forges.github.api import GitHubHttp, GitHubRequestError
from promoter.forges.github.auth import Credentials


class RepoVariables:
    """The Actions variables of one repository."""

    def __init__(self, http: GitHubHttp, credentials: Credentials, repo: str) -> None:
        self._http = http
        self._credentials = credentials
        self.repo = repo
        self._base = f"{http.api_url}/repos/{repo}/actions/variables"
        self._client: github.Github | None = None

    def get(self, name: str) -> str | None:
        """The variable's value, None when it does not exist."""
        try:
            data = self._http.call(f"read variable {name}", lambda: self._send("GET", f"/{name}"))
        except GitHubRequestError as err:
            if err.status == 404:
                return None
            raise
        return str(data.get("value", "")) if isinstance(data, dict) else None

    def put(self, name: str, value: str) -> None:
        """Set the variable, creating it the first time (PATCH, then POST on 404)."""
        body = {"name": name, "value": value}
        try:
            self._http.call(
                f"set variable {name}",
                lambda: self._send("PATCH", f"/{name}", body),
                write="write",
                verify=lambda: True if self.get(name) == value else None,
            )
        except GitHubRequestError as err:
            if err.status != 404:
                raise
            self._http.call(
                f"create variable {name}",
                lambda: self._send("POST", "", body),
                write="write",
                verify=lambda: True if self.get(name) == value else None,
            )

    def _send(self, verb: str, path: str, body: dict[str, str] | None = None) -> Any:
        """One request (PyGithub's requester: the token, the headers, GitHub's errors as
        ``GithubException``, which ``GitHubHttp.call`` judges)."""
        if self._client is None:
            self._client = self._http.client(self._credentials.api_auth(self.repo))
        _, data = self._client.requester.requestJsonAndCheck(verb, self._base + path, input=body)
        return data
