"""GitHub repositories by URL: any form git accepts, which server hosts them, its API base,
and which repository is the control plane (DESIGN section 7)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from promoter.controlplane.repo import ControlPlane
from promoter.errors import UsageError

REMOTE = re.compile(r"^(https?|ssh|git)://|^[\w.-]+@[\w.-]+:")

_SCP = re.compile(r"^(?:[\w.-]+@)?(?P<host>[\w.-]+):(?P<path>[^/].*)$")

GITHUB_COM = "github.com"

DEFAULT_API = "https://api.github.com"


@dataclass(frozen=True)
class RepoUrl:
    """A repository on a GitHub server, from any URL form git accepts."""

    scheme: str  # https, http or ssh
    host: str  # with the port, if any
    owner: str
    name: str
    url: str  # as written

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def git_url(self) -> str:
        """Where git fetches and pushes: ``<url>.git`` over smart HTTP; an ssh URL as written."""
        if self.scheme == "ssh":
            return self.url
        return f"{self.scheme}://{self.host}/{self.full_name}.git"


def parse_repo_url(url: str) -> RepoUrl | None:
    """``https://github.com/o/r(.git)``, ``git@github.com:o/r.git``, ``ssh://git@host/o/r``."""
    match = _SCP.match(url) if "://" not in url else None
    if match:
        scheme, host, path = "ssh", match["host"], match["path"]
    else:
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http", "ssh", "git") or not parts.hostname:
            return None
        scheme = "ssh" if parts.scheme in ("ssh", "git") else parts.scheme
        host = parts.hostname + (f":{parts.port}" if parts.port else "")
        path = parts.path
    pieces = [p for p in path.strip("/").removesuffix(".git").split("/") if p]
    if len(pieces) != 2:
        return None
    return RepoUrl(scheme, host, pieces[0], pieces[1], url)


def is_github_host(host: str, environ: Mapping[str, str]) -> bool:
    """github.com, GHE.com data residency, a host named for GitHub, or this Actions server's host."""
    bare = host.split(":")[0].lower()
    server = urlsplit(environ.get("GITHUB_SERVER_URL", "")).hostname or ""
    return (
        bare in (GITHUB_COM, "www.github.com")
        or bare.endswith(".ghe.com")
        or "github" in bare.split(".")[0]
        or (bool(server) and bare == server.lower())
    )


def github_api_url(flag: str | None, environ: Mapping[str, str], platform: RepoUrl) -> str:
    """``--github-api-url``, else ``GITHUB_API_URL``, else github.com's API; for a platform
    repo on another server (GitHub Enterprise Server), that server's ``/api/v3``."""
    chosen = flag or environ.get("GITHUB_API_URL")
    if chosen:
        return chosen.rstrip("/")
    host = platform.host.split(":")[0].lower()
    if host in (GITHUB_COM, "www.github.com"):
        return DEFAULT_API
    if host.endswith(".ghe.com"):
        return f"https://api.{host}"
    scheme = "http" if platform.scheme == "http" else "https"
    return f"{scheme}://{platform.host}/api/v3"


def control_plane_repo(flag: str | None, environ: Mapping[str, str], control_plane: ControlPlane) -> str:
    """``--control-plane-repo``, else ``GITHUB_REPOSITORY``, else the clone's ``origin`` remote."""
    for value, where in (
        (flag, "--control-plane-repo"),
        (environ.get("GITHUB_REPOSITORY"), "GITHUB_REPOSITORY"),
    ):
        if value:
            if not re.fullmatch(r"[\w.-]+/[\w.-]+", value):
                raise UsageError(f"{where} {value}: expected owner/name")
            return value
    origin = control_plane.git.run("remote", "get-url", operands=["origin"], check=False)
    repo = parse_repo_url(origin.stdout.decode().strip()) if origin.returncode == 0 else None
    if repo is None:
        raise UsageError(
            "the github forge posts statuses on the control-plane repo, but which one is it? "
            "Pass --control-plane-repo owner/name, or set GITHUB_REPOSITORY, "
            "or give the control-plane clone an origin remote on GitHub"
        )
    return repo.full_name


def github_repo_of(
    control_plane: ControlPlane, flag: str | None, environ: Mapping[str, str], api_flag: str | None = None
) -> tuple[str, str] | None:
    """The control plane's repository on GitHub and that GitHub's API, when it is on one (where its
    workflows run): ``--control-plane-repo`` or ``GITHUB_REPOSITORY`` with ``--github-api-url`` or
    ``GITHUB_API_URL`` (else github.com's), else an ``origin`` remote on a GitHub server (its API);
    None otherwise."""
    given = flag or environ.get("GITHUB_REPOSITORY")
    if given:
        name = control_plane_repo(given, {}, control_plane)
        return name, (api_flag or environ.get("GITHUB_API_URL") or DEFAULT_API).rstrip("/")
    origin = control_plane.git.run("remote", "get-url", operands=["origin"], check=False)
    repo = parse_repo_url(origin.stdout.decode().strip()) if origin.returncode == 0 else None
    if repo is None or not is_github_host(repo.host, environ):
        return None
    return repo.full_name, github_api_url(api_flag, environ, repo)
