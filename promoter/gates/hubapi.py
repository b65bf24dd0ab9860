"""The hub's HTTP API as the promoter speaks it: record a merged platform commit, tell the
holds in force, read a rollout. The ``hub`` gate, promotion runs, ``promoter hold`` and the
``promoter hub`` commands use it; the hub's server lives in ``promoter.hub``, above the gates,
and this module never imports it.

``commit_record`` describes a platform commit from the platform repo (any object with the
``PlatformRepo`` methods ``listing``, ``provenance`` and ``git``): its first parent, its main
commit, and its assignments, read from the rendered layout
``<cluster-type>/<workload>-<target>/...`` under the environment's folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from promoter.gates.http import HttpProblem, json_body, send
from promoter.masking import register_secret

TOKEN_ENV = "PROMOTER_HUB_TOKEN"
URL_ENV = "PROMOTER_HUB_URL"
USER_AGENT = "promoter (hub client)"


def secret_from_env(name: str) -> str | None:
    """The secret in variable ``name``, else in the file variable ``<name>_FILE`` names (trimmed)."""
    value = os.environ.get(name)
    if not value and os.environ.get(f"{name}_FILE"):
        try:
            value = Path(os.environ[f"{name}_FILE"]).read_text().strip()
        except OSError:
            value = None
    register_secret(value)
    return value or None


class HubClient:
    """One hub, at ``url``; ``token`` (a promoter key) is needed only to record commits."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        register_secret(token)

    @classmethod
    def from_env(cls, url: str, token_env: str = TOKEN_ENV, timeout: float = 10.0) -> HubClient:
        """A client with the key in ``token_env``, or in the file ``<token_env>_FILE`` names (a
        mounted Kubernetes Secret, say)."""
        return cls(url, secret_from_env(token_env), timeout)

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        where = f"the hub at {self.url}"
        response = send(method, self.url + path, where, headers=headers, timeout=self.timeout, **kwargs)
        return json_body(response, "the hub")

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self._request("GET", path, params=params or {})

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self._request("POST", path, json=body)

    def rollout(
        self, environment: str, commit: str, stale_after: float, cluster_types: tuple[str, ...] = ()
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "environment": environment,
            "commit": commit,
            "staleAfter": f"{int(stale_after)}s",
            "times": "false",  # the gate needs counts, not the history behind timeToPercent
        }
        if cluster_types:
            params["clusterType"] = list(cluster_types)
        found: dict[str, Any] = self.get("/v1/rollout", params)
        return found

    def record(self, record: dict[str, Any]) -> bool:
        """POST /v1/commits; True when the hub recorded it now, False when it had it."""
        body = self.post("/v1/commits", record)
        return bool(body.get("recorded"))


def commit_record(
    platform: Any,
    sha: str,
    root: str,
    environment: str,
    branch: str,
    main_commit: str | None = None,
    order: tuple[str, ...] = (),
    follows: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The ``POST /v1/commits`` body for platform commit ``sha`` of ``environment``; ``order``
    the Pipeline's environments, ``follows`` the environments each follows (its graph)."""
    parents = platform.git.out("rev-list", "--parents", "-n", "1", operands=[sha]).split()[1:]
    provenance = platform.provenance(sha, root)
    assignments = _assignments(platform.listing(sha, root))
    committed = platform.git.out("show", "-s", "--format=%ct", operands=[sha]).strip()
    return {
        "environment": environment,
        "sha": sha,
        "branch": branch,
        "parent": parents[0] if parents else None,
        "mainCommit": main_commit or (provenance.main_commit if provenance else None),
        "committedAt": float(committed) if committed.isdigit() else None,
        "assignments": [{"clusterType": t, "deploymentTarget": d} for t, d in assignments],
        "environments": list(order),
        "platformRepo": repo_web_url(str(getattr(platform, "url", "") or "")),
        **_waves(provenance),
        **({"follows": {name: list(ups) for name, ups in follows.items()}} if follows else {}),
    }


def _assignments(paths: Iterable[str]) -> list[tuple[str, str]]:
    """(cluster type, deployment target) of each ``<type>/<target>/<file>`` of the platform
    folder's ``paths`` (hidden top-level folders left out), sorted."""
    found = set()
    for path in paths:
        parts = path.split("/")
        if len(parts) >= 3 and not parts[0].startswith("."):
            found.add((parts[0], parts[1]))
    return sorted(found)


def _waves(provenance: Any) -> dict[str, Any]:
    """A waved environment's wave that landed the commit, and each folder's wave (the hub's pages)."""
    if provenance is None or not (provenance.wave or provenance.folders):
        return {}
    folders = {t: {"wave": f.wave, "mainCommit": f.main_commit} for t, f in provenance.folders.items()}
    return {"wave": provenance.wave, "folders": folders}


def repo_web_url(url: str) -> str:
    """The web page of a git repo URL (``https://host/owner/repo``), for links to its commits,
    without any credentials it carried; empty for a local path or a ``file://`` URL."""
    url = url.strip()
    scp = re.fullmatch(r"[\w.-]+@([\w.-]+):(.+)", url)  # git@github.com:owner/repo.git
    if scp:
        host, path = scp.groups()
    else:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https", "ssh", "git") or not parts.hostname:
            return ""
        port = f":{parts.port}" if parts.port and parts.scheme in ("http", "https") else ""
        host, path = parts.hostname + port, parts.path
    path = path.strip("/").removesuffix(".git")
    return f"https://{host}/{path}" if path else ""


def record_merge(
    platform: Any,
    sha: str,
    root: str,
    environment: str,
    branch: str,
    main_commit: str | None,
    order: tuple[str, ...] = (),
    follows: Mapping[str, Sequence[str]] | None = None,
    promotion: Mapping[str, Any] | None = None,
) -> str | None:
    """What a promotion run calls once it landed ``sha`` on ``environment``'s branch: records it
    at the hub named by ``PROMOTER_HUB_URL`` with the promoter key in ``PROMOTER_HUB_TOKEN``.
    Does nothing without ``PROMOTER_HUB_URL``; never raises: returns what went wrong, for a
    warning (the hub gate, and ``promoter hub sync``, record it again later)."""
    client = _configured()
    if client is None:
        return None
    if not client.token:
        return f"{URL_ENV} is set but {TOKEN_ENV} is not: the hub did not record {sha[:12]}"
    try:
        body = commit_record(platform, sha, root, environment, branch, main_commit, order, follows)
        client.record({**body, **(promotion or {})})
    except HttpProblem as err:
        return f"the hub did not record {sha[:12]}: {err}"
    return None


def promotion_fields(pr: Any, on_failure: str, timeout: float) -> dict[str, Any]:
    """What the hub shows of the promotion beside the commit (docs/hub.md): its PR's web page
    (``pr``, a forge's PullRequest, or None), the GitHub Actions run and control-plane repo it runs
    in (``GITHUB_SERVER_URL``, ``GITHUB_REPOSITORY``, ``GITHUB_RUN_ID``), what it does when its
    gates fail and how long they wait. Only web addresses: a local forge's PR is a path, left out."""
    fields: dict[str, Any] = {"onFailure": on_failure, "timeout": timeout}
    url = str(getattr(pr, "url", "") or "")
    if url.startswith(("https://", "http://")):
        fields["pullRequest"] = url
    server, repo = os.environ.get("GITHUB_SERVER_URL", ""), os.environ.get("GITHUB_REPOSITORY", "")
    if server.startswith(("https://", "http://")) and repo:
        fields["controlPlaneRepo"] = f"{server.rstrip('/')}/{repo}"
        run = os.environ.get("GITHUB_RUN_ID", "")
        if run.isdigit():
            fields["run"] = f"{fields['controlPlaneRepo']}/actions/runs/{run}"
    return fields


def send_holds(environment: str, holds: list[dict[str, Any]]) -> str | None:
    """Tell the hub named by ``PROMOTER_HUB_URL`` the holds in force on ``environment`` (each as
    ``Hold.to_json`` gives it; none: it is not held), replacing what it had (docs/hub.md#holds).
    Does nothing without ``PROMOTER_HUB_URL``; never raises: returns what went wrong, for a
    warning (the next run that judges the environment sends them again)."""
    client = _configured()
    if client is None:
        return None
    if not client.token:
        return f"{URL_ENV} is set but {TOKEN_ENV} is not: the hub was not told {environment}'s holds"
    try:
        client.post("/v1/holds", {"environment": environment, "holds": holds})
    except HttpProblem as err:
        return f"the hub was not told {environment}'s holds: {err}"
    return None


def _configured() -> HubClient | None:
    url = os.environ.get(URL_ENV)
    return HubClient.from_env(url) if url else None
