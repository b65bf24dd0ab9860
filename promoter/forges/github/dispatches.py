"""``POST /repos/{owner}/{repo}/dispatches`` (a ``repository_dispatch`` event, GitHub answers
204), through the one GitHub HTTP layer: how the hub wakes a control plane's promotion. The App
or token needs *Contents: read and write* on that repository."""

from __future__ import annotations

from typing import Any

from promoter.forges.github.api import GitHubHttp
from promoter.forges.github.auth import Credentials


def dispatch(
    http: GitHubHttp, credentials: Credentials, repo: str, event_type: str, payload: dict[str, Any]
) -> None:
    """Send one ``repository_dispatch``; GitHubRequestError when it fails for good."""
    gh = http.client(credentials.api_auth(repo))
    body = {"event_type": event_type, "client_payload": payload}
    url = f"{http.api_url}/repos/{repo}/dispatches"
    # not verified before a retry: a second wake costs one short run, a lost one a heartbeat
    http.call(
        f"dispatch {event_type} to {repo}",
        lambda: gh.requester.requestJsonAndCheck("POST", url, input=body),
        write="write",
    )
