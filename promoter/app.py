"""The runtime context: from validated input, the control plane, platform repo and forge.

Which forge (DESIGN section 7): ``platformRepo.forge`` when the Pipeline says; otherwise a
GitHub URL means ``github`` and a path or ``file://`` URL means ``local``. For GitHub, the API
base, the control-plane repository and the credentials are resolved here, once, so that the
orchestrator never learns where it runs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from promoter.clock import Clock, RealClock
from promoter.console import Console
from promoter.controlplane.documents import PIPELINE_FILE
from promoter.controlplane.repo import ControlPlane
from promoter.errors import ConfigError, UsageError
from promoter.forges.base import Forge
from promoter.forges.local import LocalForge
from promoter.model import Pipeline
from promoter.platform.repo import PlatformRepo

_REMOTE = re.compile(r"^(https?|ssh|git)://|^[\w.-]+@[\w.-]+:")
_SCP = re.compile(r"^(?:[\w.-]+@)?(?P<host>[\w.-]+):(?P<path>[^/].*)$")
GITHUB_COM = "github.com"
DEFAULT_API = "https://api.github.com"


@dataclass(frozen=True)
class GitHubOptions:
    """What the command line may say about GitHub; the environment fills in the rest."""

    api_url: str | None = None
    control_plane_repo: str | None = None
    auto_merge: bool = False
    rate_limit_wait: float = 900.0


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


def forge_kind(pipeline: Pipeline, environ: Mapping[str, str] | None = None) -> str:
    """``platformRepo.forge``, else github for a GitHub URL and local for a path or file:// URL."""
    env = os.environ if environ is None else environ
    if pipeline.forge:
        return pipeline.forge
    url = pipeline.platform_url
    if url.startswith("file://") or not _REMOTE.match(url):
        return "local"
    repo = parse_repo_url(url)
    return "github" if repo and is_github_host(repo.host, env) else "remote"


def local_platform_url(pipeline: Pipeline, control_plane: ControlPlane) -> str:
    """A local platform repo's location; relative paths are relative to the control plane."""
    url = pipeline.platform_url
    path = Path(url.removeprefix("file://")) if url.startswith("file://") else Path(url)
    if not path.is_absolute():
        path = (control_plane.path / path).resolve()
    if not (path / "HEAD").exists() and not (path / ".git").exists():
        raise ConfigError(
            f"spec.platformRepo.url: no git repository at {path}",
            file=PIPELINE_FILE,
            line=pipeline.source.line,
        )
    return str(path)


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


@dataclass
class Runtime:
    control_plane: ControlPlane
    platform: PlatformRepo
    forge: Forge
    console: Console


def build_runtime(
    control_plane: ControlPlane,
    pipeline: Pipeline,
    console: Console,
    *,
    clock: Clock | None = None,
    github: GitHubOptions | None = None,
    environ: Mapping[str, str] | None = None,
) -> Runtime:
    env = os.environ if environ is None else environ
    kind = forge_kind(pipeline, env)
    if kind == "local":
        platform = PlatformRepo(local_platform_url(pipeline, control_plane))
        return Runtime(control_plane, platform, LocalForge(control_plane.git, platform), console)
    if kind == "github":
        return _github_runtime(control_plane, pipeline, console, clock or RealClock(), github, env)
    raise ConfigError(
        f"spec.platformRepo.url: {pipeline.platform_url} is not on GitHub; use a local path or file:// URL, "
        "or set platformRepo.forge: github for GitHub Enterprise Server",
        file=PIPELINE_FILE,
        line=pipeline.source.line,
    )


def _github_runtime(
    control_plane: ControlPlane,
    pipeline: Pipeline,
    console: Console,
    clock: Clock,
    options: GitHubOptions | None,
    environ: Mapping[str, str],
) -> Runtime:
    from promoter.forges.github import connect  # PyGithub loads only when GitHub is used
    from promoter.forges.github_http import RetryPolicy

    options = options or GitHubOptions()
    repo = parse_repo_url(pipeline.platform_url)
    problem = None
    if repo is None:
        problem = f"{pipeline.platform_url} is not a GitHub repository URL (https://<server>/<owner>/<repo>)"
    elif repo.scheme != "ssh" and "@" in urlsplit(pipeline.platform_url).netloc:
        problem = "remove the credentials from the URL; the token comes from PROMOTER_GITHUB_TOKEN"
    if problem or repo is None:
        raise ConfigError(f"spec.platformRepo.url: {problem}", file=PIPELINE_FILE, line=pipeline.source.line)
    platform, forge = connect(
        api_url=github_api_url(options.api_url, environ, repo),
        git_url=repo.git_url,
        platform_repo=repo.full_name,
        control_plane_repo=control_plane_repo(options.control_plane_repo, environ, control_plane),
        clock=clock,
        policy=RetryPolicy(rate_limit_wait=options.rate_limit_wait),
        auto_merge=options.auto_merge,
        environ=environ,
    )
    return Runtime(control_plane, platform, forge, console)
