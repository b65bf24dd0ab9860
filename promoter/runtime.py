"""The runtime context: from validated input, the control plane, platform repo and forge.

Which forge (DESIGN section 7): ``platformRepo.forge`` when the Pipeline says; otherwise a
GitHub URL means ``github`` and a path or ``file://`` URL means ``local``. For GitHub, the API
base, the control-plane repository and the credentials are resolved here, once, so that the
orchestrator never learns where it runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from promoter.clock import Clock, RealClock
from promoter.console import Console
from promoter.controlplane.documents import PIPELINE_FILE
from promoter.controlplane.repo import ControlPlane
from promoter.errors import ConfigError
from promoter.forges.base import Forge
from promoter.forges.github.urls import (
    REMOTE,
    control_plane_repo,
    github_api_url,
    is_github_host,
    parse_repo_url,
)
from promoter.forges.local import LocalForge
from promoter.model import Environment, Pipeline
from promoter.platform.repo import PlatformRepo

# Where PRs and statuses live: the embedded local forge, GitHub, or a remote no forge serves.
ForgeKind = Literal["local", "github", "remote"]


@dataclass(frozen=True)
class GitHubOptions:
    """What the command line may say about GitHub; the environment fills in the rest."""

    api_url: str | None = None
    control_plane_repo: str | None = None
    auto_merge: bool = False
    rate_limit_wait: float = 900.0


def forge_kind(pipeline: Pipeline, environ: Mapping[str, str] | None = None) -> ForgeKind:
    """``platformRepo.forge``, else github for a GitHub URL and local for a path or file:// URL."""
    env = os.environ if environ is None else environ
    if pipeline.forge:
        return pipeline.forge
    url = pipeline.platform_url
    if url.startswith("file://") or not REMOTE.match(url):
        return "local"
    repo = parse_repo_url(url)
    return "github" if repo and is_github_host(repo.host, env) else "remote"


def local_platform_url(pipeline: Pipeline, control_plane: ControlPlane, url: str | None = None) -> str:
    """A local platform repo's location (``url``, by default ``platformRepo.url``); relative paths
    are relative to the control plane."""
    url = url or pipeline.platform_url
    path = Path(url.removeprefix("file://")) if url.startswith("file://") else Path(url)
    if not path.is_absolute():
        path = (control_plane.path / path).resolve()
    if not (path / "HEAD").exists() and not (path / ".git").exists():
        raise ConfigError(
            f"{_field(pipeline, url)}: no git repository at {path}",
            file=PIPELINE_FILE,
            line=_line(pipeline, url),
        )
    return str(path)


@dataclass
class Runtime:
    control_plane: ControlPlane
    platform: PlatformRepo
    forge: Forge
    console: Console
    #: environments with a platform repo of their own (``gitops.repo``): name -> (repo, forge)
    routes: dict[str, tuple[PlatformRepo, Forge]] = field(default_factory=dict)

    def platform_for(self, env: Environment) -> PlatformRepo:
        return self.routes[env.name][0] if env.name in self.routes else self.platform

    def forge_for(self, env: Environment) -> Forge:
        return self.routes[env.name][1] if env.name in self.routes else self.forge

    def heads(self, envs: Sequence[Environment]) -> dict[str, str | None]:
        """Each environment's platform branch head (None for a branch not there yet), with one
        fetch per platform repo."""
        wanted: dict[int, tuple[PlatformRepo, list[str]]] = {}
        for env in envs:
            platform = self.platform_for(env)
            wanted.setdefault(id(platform), (platform, []))[1].append(env.gitops_branch)
        fetched = {
            key: platform.fetch(list(dict.fromkeys(branches))) for key, (platform, branches) in wanted.items()
        }
        return {env.name: fetched[id(self.platform_for(env))].get(env.gitops_branch) for env in envs}

    @contextmanager
    def locked(self, say: Callable[[str], None] | None = None) -> Iterator[None]:
        """Every platform repo's cache locked, each once, in one order."""
        platforms = {p.path: p for p in [self.platform, *(r[0] for r in self.routes.values())]}
        with ExitStack() as stack:
            for path in sorted(platforms):
                stack.enter_context(platforms[path].locked(say))
            yield


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
    if kind == "remote":
        _not_github(pipeline)
    connected: dict[str, tuple[PlatformRepo, Forge]] = {}

    def connect(url: str) -> tuple[PlatformRepo, Forge]:
        if url not in connected:
            if kind == "local":
                platform = PlatformRepo(local_platform_url(pipeline, control_plane, url))
                origin = "origin" if control_plane.has_origin else None
                connected[url] = (platform, LocalForge(control_plane.git, platform, clock, origin=origin))
            else:
                connected[url] = _github_runtime(
                    control_plane, pipeline, url, clock or RealClock(), github, env
                )
        return connected[url]

    platform, forge = connect(pipeline.platform_url)
    routes = {
        e.name: connect(e.platform_url)
        for e in pipeline.environments
        if e.platform_url and e.platform_url != pipeline.platform_url
    }
    return Runtime(control_plane, platform, forge, console, routes)


def _not_github(pipeline: Pipeline) -> None:
    raise ConfigError(
        f"spec.platformRepo.url: {pipeline.platform_url} is not on GitHub; use a local path or file:// URL, "
        "or set platformRepo.forge: github for GitHub Enterprise Server",
        file=PIPELINE_FILE,
        line=pipeline.source.line,
    )


def _github_runtime(
    control_plane: ControlPlane,
    pipeline: Pipeline,
    url: str,
    clock: Clock,
    options: GitHubOptions | None,
    environ: Mapping[str, str],
) -> tuple[PlatformRepo, Forge]:
    from promoter.forges.github.forge import connect  # heavy (440 ms with PyGithub): only when GitHub is used
    from promoter.forges.github.policy import RetryPolicy  # heavy: imports PyGithub too

    options = options or GitHubOptions()
    repo = parse_repo_url(url)
    problem = None
    if repo is None:
        problem = f"{url} is not a GitHub repository URL (https://<server>/<owner>/<repo>)"
    elif repo.scheme != "ssh" and "@" in urlsplit(url).netloc:
        problem = "remove the credentials from the URL; the token comes from PROMOTER_GITHUB_TOKEN"
    if problem or repo is None:
        raise ConfigError(
            f"{_field(pipeline, url)}: {problem}", file=PIPELINE_FILE, line=_line(pipeline, url)
        )
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
    return platform, forge


def _field(pipeline: Pipeline, url: str) -> str:
    """The Pipeline field that names ``url``: ``platformRepo.url`` or an environment's ``gitops.repo``."""
    for i, env in enumerate(pipeline.environments):
        if env.platform_url == url and url != pipeline.platform_url:
            return f"spec.environments[{i}].gitops.repo"
    return "spec.platformRepo.url"


def _line(pipeline: Pipeline, url: str) -> int | None:
    env = next((e for e in pipeline.environments if e.platform_url == url), None)
    return env.source.line if env and url != pipeline.platform_url else pipeline.source.line
