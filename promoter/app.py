"""The runtime context: from validated input, the control plane, platform repo and forge."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from promoter.console import Console
from promoter.controlplane import ControlPlane
from promoter.errors import ConfigError
from promoter.forges.base import Forge
from promoter.forges.local import LocalForge
from promoter.loading import PIPELINE_FILE
from promoter.model import Pipeline
from promoter.platform import PlatformRepo

_REMOTE = re.compile(r"^(https?|ssh|git)://|^[\w.-]+@[\w.-]+:")


def forge_kind(pipeline: Pipeline) -> str:
    """``platformRepo.forge``, else github for a GitHub URL and local for a path or file:// URL."""
    if pipeline.forge:
        return pipeline.forge
    url = pipeline.platform_url
    if url.startswith("file://") or not _REMOTE.match(url):
        return "local"
    return "github" if "github" in url.split("/")[2 if "://" in url else 0] else "remote"


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


@dataclass
class Runtime:
    control_plane: ControlPlane
    platform: PlatformRepo
    forge: Forge
    console: Console


def build_runtime(control_plane: ControlPlane, pipeline: Pipeline, console: Console) -> Runtime:
    kind = forge_kind(pipeline)
    if kind != "local":
        raise ConfigError(
            f"spec.platformRepo: the {kind} forge is not available in this version; use a local path or file:// URL",
            file=PIPELINE_FILE,
            line=pipeline.source.line,
        )
    platform = PlatformRepo(local_platform_url(pipeline, control_plane))
    forge = LocalForge(control_plane.git, platform)
    return Runtime(control_plane, platform, forge, console)
