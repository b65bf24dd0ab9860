"""Which forge, which API, which control-plane repository (DESIGN section 7)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.errors import ConfigError, UsageError
from promoter.forges.github.urls import control_plane_repo, github_api_url, parse_repo_url
from promoter.model import Pipeline, Source
from promoter.runtime import build_runtime, forge_kind


def pipeline(url: str, forge: str | None = None) -> Pipeline:
    return Pipeline("platform", url, forge, (), Source("promoter.yaml", 4))


@pytest.mark.parametrize(
    ("url", "forge", "env", "kind"),
    [
        ("https://github.com/org/platform", None, {}, "github"),
        ("https://github.com/org/platform.git", None, {}, "github"),
        ("git@github.com:org/platform.git", None, {}, "github"),
        ("https://octo.ghe.com/org/platform", None, {}, "github"),
        ("https://github.example.com/org/platform", None, {}, "github"),
        (
            "https://ghe.example.com/org/platform",
            None,
            {"GITHUB_SERVER_URL": "https://ghe.example.com"},
            "github",
        ),
        ("https://ghe.example.com/org/platform", None, {}, "remote"),
        ("https://ghe.example.com/org/platform", "github", {}, "github"),
        ("https://gitlab.com/org/platform", None, {}, "remote"),
        ("../platform.git", None, {}, "local"),
        ("file:///srv/platform.git", None, {}, "local"),
    ],
)
def test_forge_kind(url: str, forge: str | None, env: dict[str, str], kind: str) -> None:
    assert forge_kind(pipeline(url, forge), env) == kind


@pytest.mark.parametrize(
    ("url", "parsed"),
    [
        (
            "https://github.com/org/platform",
            ("https", "github.com", "org/platform", "https://github.com/org/platform.git"),
        ),
        (
            "https://github.com/org/platform.git/",
            ("https", "github.com", "org/platform", "https://github.com/org/platform.git"),
        ),
        (
            "http://10.0.0.5:8080/org/platform",
            ("http", "10.0.0.5:8080", "org/platform", "http://10.0.0.5:8080/org/platform.git"),
        ),
        (
            "git@github.com:org/platform.git",
            ("ssh", "github.com", "org/platform", "git@github.com:org/platform.git"),
        ),
        (
            "ssh://git@ghe.example.com:2222/org/platform.git",
            (
                "ssh",
                "ghe.example.com:2222",
                "org/platform",
                "ssh://git@ghe.example.com:2222/org/platform.git",
            ),
        ),
    ],
)
def test_parse_repo_url(url: str, parsed: tuple[str, str, str, str]) -> None:
    repo = parse_repo_url(url)
    assert repo is not None and (repo.scheme, repo.host, repo.full_name, repo.git_url) == parsed


@pytest.mark.parametrize("url", ["https://github.com/org", "https://github.com/a/b/c", "../platform.git"])
def test_not_a_repository_url(url: str) -> None:
    assert parse_repo_url(url) is None


@pytest.mark.parametrize(
    ("flag", "env", "url", "api"),
    [
        (
            "https://ghe.example.com/api/v3/",
            {"GITHUB_API_URL": "https://elsewhere/api/v3"},
            "https://github.com/o/r",
            "https://ghe.example.com/api/v3",
        ),
        (
            None,
            {"GITHUB_API_URL": "https://ghe.example.com/api/v3"},
            "https://github.com/o/r",
            "https://ghe.example.com/api/v3",
        ),
        (None, {}, "https://github.com/o/r", "https://api.github.com"),
        (None, {}, "git@github.com:o/r.git", "https://api.github.com"),
        (None, {}, "https://octo.ghe.com/o/r", "https://api.octo.ghe.com"),
        (None, {}, "https://ghe.example.com/o/r", "https://ghe.example.com/api/v3"),
        (None, {}, "http://10.0.0.5:8080/o/r", "http://10.0.0.5:8080/api/v3"),
    ],
)
def test_api_url(flag: str | None, env: dict[str, str], url: str, api: str) -> None:
    repo = parse_repo_url(url)
    assert repo is not None and github_api_url(flag, env, repo) == api


def _clone(tmp_path: Path, origin: str | None) -> ControlPlane:
    path = tmp_path / "cp"
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    if origin:
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", origin], check=True)
    return ControlPlane(path)


def test_control_plane_repo_order(tmp_path: Path) -> None:
    cp = _clone(tmp_path, "https://x-access-token:ghs_secret@github.com/org/from-origin.git")
    assert control_plane_repo("org/from-flag", {"GITHUB_REPOSITORY": "org/from-env"}, cp) == "org/from-flag"
    assert control_plane_repo(None, {"GITHUB_REPOSITORY": "org/from-env"}, cp) == "org/from-env"
    assert control_plane_repo(None, {}, cp) == "org/from-origin"


def test_control_plane_repo_from_an_ssh_origin(tmp_path: Path) -> None:
    assert control_plane_repo(None, {}, _clone(tmp_path, "git@github.com:org/cp.git")) == "org/cp"


def test_control_plane_repo_unknown(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        control_plane_repo(None, {}, _clone(tmp_path, None))
    assert str(caught.value) == (
        "the github forge posts statuses on the control-plane repo, but which one is it? Pass "
        "--control-plane-repo owner/name, or set GITHUB_REPOSITORY, or give the control-plane clone an "
        "origin remote on GitHub"
    )
    with pytest.raises(UsageError, match=r"^--control-plane-repo org: expected owner/name$"):
        control_plane_repo("org", {}, _clone(tmp_path / "other", None))


@pytest.mark.parametrize(
    ("url", "forge", "message"),
    [
        (
            "https://gitlab.com/org/platform",
            None,
            "promoter.yaml:4: spec.platformRepo.url: https://gitlab.com/org/platform is not on GitHub; use a "
            "local path or file:// URL, or set platformRepo.forge: github for GitHub Enterprise Server",
        ),
        (
            "https://user:ghp_secret123@github.com/org/platform",
            None,
            "promoter.yaml:4: spec.platformRepo.url: remove the credentials from the URL; the token comes "
            "from PROMOTER_GITHUB_TOKEN",
        ),
        (
            "file:///srv/platform.git",
            "github",
            "promoter.yaml:4: spec.platformRepo.url: file:///srv/platform.git is not a GitHub repository URL "
            "(https://<server>/<owner>/<repo>)",
        ),
    ],
)
def test_bad_platform_urls(tmp_path: Path, url: str, forge: str | None, message: str) -> None:
    cp = _clone(tmp_path, "git@github.com:org/cp.git")
    with pytest.raises(ConfigError) as caught:
        build_runtime(cp, pipeline(url, forge), Console(quiet=True), environ={"GITHUB_TOKEN": "t0ken-t0ken"})
    assert str(caught.value) == message
