"""Kalypso control planes in git for tests: Kalypso's own sample (tests/kalypso/sample, see its
SOURCES file: MIT, Copyright (c) Microsoft Corporation), and small ones built from dicts.

Kalypso's github.com URLs are pointed at local repos with git's ``url.<base>.insteadOf`` in the
test's throwaway global git config (conftest's ``isolated_git``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from promoter.demos.promotion import commit_folder
from promoter.gitcmd import Git
from tests.support.paths import TESTS

SAMPLE = TESTS / "kalypso" / "sample"
SAMPLE_MAIN_SHA = "42f2c201b96055faead8da72a126ec3e8fe30296"  # what expected/dev was rendered from
CONTROL_PLANE_URL = "https://github.com/microsoft/kalypso-control-plane"


def point_url(url: str, repo: Path) -> None:
    """Make git fetch ``url`` from the local ``repo`` (global config of this test only)."""
    subprocess.run(
        ["git", "config", "--global", "--add", f"url.file://{repo}.insteadOf", url],
        check=True,
        env=os.environ,
    )


def repo_from_folder(path: Path, branches: dict[str, Path]) -> Path:
    """A repo whose branches are the given folders, each the whole tree of one commit."""
    path.parent.mkdir(parents=True, exist_ok=True)
    Git(path.parent).run("init", "--quiet", "--initial-branch=main", str(path))
    git = Git(path)
    for branch, folder in branches.items():
        commit_folder(git, folder, branch, f"{branch} as in Kalypso's sample")
    return path


def write_tree(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def base_repo(template: str, main_sha: str) -> str:
    """dev:base-repo.yaml as Kalypso's cd.yaml makes it (envsubst of the BaseRepo template)."""
    values = {"$branch": "main", "$repo": "microsoft/kalypso-control-plane", "$promoted_commit": main_sha}
    for key, value in values.items():
        template = template.replace(key, value)
    return template


def build_sample(root: Path) -> tuple[Path, str]:
    """Kalypso's sample as repos: the control plane (main, dev, stage with their BaseRepos
    pinning the rebuilt main), the two workload repos (URLs redirected). Returns the control
    plane's path and its main commit."""
    cp_path = repo_from_folder(root / "control-plane", {"main": SAMPLE / "control-plane" / "main"})
    main_sha = Git(cp_path).commit_of("refs/heads/main")
    assert main_sha is not None
    template = (
        SAMPLE / "control-plane" / "main" / ".github/workflows/utils/baserepo-template.yaml"
    ).read_text()
    for env in ("dev", "stage"):
        folder = root / f"src-{env}"
        shutil.copytree(SAMPLE / "control-plane" / env, folder)
        (folder / "base-repo.yaml").write_text(base_repo(template, main_sha))
        commit_folder(Git(cp_path), folder, env, f"Promoting {main_sha} to {env}")
    Git(cp_path).run("checkout", "--quiet", "main")
    for name in ("kalypso-app-src", "kalypso-svc-src"):
        repo = repo_from_folder(root / name, {"main": SAMPLE / name})
        point_url(f"https://github.com/microsoft/{name}", repo)
    return cp_path, main_sha


def expected_tree(environment: str, main_sha: str) -> dict[str, bytes]:
    """The committed tree of ``environment``, the rebuilt main sha standing for the one pinned."""
    folder = SAMPLE / "expected" / environment
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    tracking = ".github/tracking/Promoted_Commit_Id"
    files[tracking] = files[tracking].replace(SAMPLE_MAIN_SHA.encode(), main_sha.encode())
    return files


def tree_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def build_world(
    root: Path,
    main: dict[str, str],
    branches: dict[str, dict[str, str]],
    workload_repos: dict[str, dict[str, str]],
) -> Path:
    """A Kalypso control plane (main and environment branches) and workload repos, each
    ``https://example.com/<name>`` redirected to a local repo; ``$MAIN`` in a branch's files
    stands for main's commit. Returns the control plane."""
    cp_path = repo_from_folder(root / "control-plane", {"main": write_tree(root / "src-main", main)})
    sha = Git(cp_path).commit_of("refs/heads/main") or ""
    for branch, files in branches.items():
        files = {k: v.replace("$MAIN", sha) for k, v in files.items()}
        commit_folder(Git(cp_path), write_tree(root / f"src-{branch}", files), branch, f"{branch} values")
    for name, files in workload_repos.items():
        repo = repo_from_folder(
            root / "workloads" / name, {"main": write_tree(root / f"src-w-{name}", files)}
        )
        point_url(f"https://example.com/{name}", repo)
    return cp_path


CURRENT = TESTS / "kalypso" / "current"  # a control plane of Kalypso's current scheduler (its README)


def build_current(root: Path, source: Path = CURRENT) -> tuple[Path, str]:
    """tests/kalypso/current (or a copy at ``source``) as repos: the control plane (main; dev
    and prod, their BaseRepos pinning main) and the two workload repos at their github.com/contoso
    URLs. Returns the control plane's path and its main commit."""
    cp_path = repo_from_folder(root / "control-plane", {"main": source / "control-plane" / "main"})
    main_sha = Git(cp_path).commit_of("refs/heads/main")
    assert main_sha is not None
    for env in ("dev", "prod"):
        folder = root / f"src-{env}"
        shutil.copytree(source / "control-plane" / env, folder)
        base = folder / "base-repo.yaml"
        base.write_text(base.read_text().replace("$MAIN", main_sha))
        commit_folder(Git(cp_path), folder, env, f"Promoting {main_sha} to {env}")
    Git(cp_path).run("checkout", "--quiet", "main")
    for name in ("app-src", "svc-src"):
        repo = repo_from_folder(root / name, {"main": source / name})
        point_url(f"https://github.com/contoso/{name}", repo)
    return cp_path, main_sha


def expected_current(environment: str, main_sha: str) -> dict[str, bytes]:
    """What the current scheduler commits for ``environment`` of tests/kalypso/current."""
    folder = CURRENT / "expected" / environment
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    tracking = ".github/tracking/Promoted_Commit_Id"
    files[tracking] = main_sha.encode()
    return files
