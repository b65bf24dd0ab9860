"""The composite actions' checkout and its installed promoter, made once per test session.

A runner downloads the action's repository for a `uses:` and actions/install.sh installs the
promoter into ``$RUNNER_TEMP/promoter-<hash of the action's path>``. The harness tests run many
jobs of the same checkout: building and installing it for each would repeat the same work
(``tests/actions/test_harness.py`` installs one for real and checks what the install says).
So the first worker to need it archives this checkout and runs actions/install.sh once, under a
lock, in a folder that every xdist worker of the session shares; each test then gets a fresh
RUNNER_TEMP of its own in which ``promoter-<hash>`` links to that install, which install.sh
finds and uses as a job's second action finds the first one's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from promoter.platform.lock import cache_lock
from tests.actions.releases import archive, promoter_repo
from tests.support import forkserver
from tests.support.wheelhouse import offline_env

WAIT = 600.0  # seconds another worker may take to archive or install before this one gives up


def _shared(factory: pytest.TempPathFactory) -> Path:
    """A folder every worker of this session sees (xdist gives each worker a basetemp below it)."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    path = base / "shared-action"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(scope="session")
def action_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the runner downloads for a `uses:` of a commit: GitHub's tarball of the action's
    repository, which is `git archive` (.git_archival.txt substituted), here of this checkout's
    files committed into a repository of their own, with no release tag."""
    shared = _shared(tmp_path_factory)
    with cache_lock(shared / "archive.lock", "the shared action checkout", WAIT):
        if not (shared / "archive.done").exists():
            archive(promoter_repo(shared / "repo"), "HEAD", shared / "sha")
            (shared / "archive.done").touch()
    return shared / "sha" / "promoter"


@pytest.fixture(scope="session")
def python_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose python3 is this interpreter: the runner's python3 (no setup-python)."""
    bin_dir = tmp_path_factory.mktemp("bin")
    (bin_dir / "python3").symlink_to(sys.executable)
    return bin_dir


@pytest.fixture(scope="session")
def installed_action(action_root: Path, python_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The virtualenv actions/install.sh made for ``action_root``, once for the session."""
    shared = _shared(tmp_path_factory)
    temp = shared / "runner-temp"
    with cache_lock(shared / "install.lock", "the shared action install", WAIT):
        if not (shared / "install.done").exists():
            temp.mkdir(exist_ok=True)
            env = {
                **os.environ,
                **offline_env(shared),
                "RUNNER_TEMP": str(temp),
                "PATH": os.pathsep.join([str(python_bin), os.environ["PATH"]]),
            }
            env.pop("GITHUB_OUTPUT", None)
            done = subprocess.run(
                ["bash", str(action_root / "actions" / "install.sh")],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            assert done.returncode == 0, done.stderr
            (shared / "install.done").touch()
    (venv,) = temp.glob("promoter-*")
    return venv


@pytest.fixture
def toolchain(
    installed_action: Path, python_bin: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path, dict[str, str]]:
    """RUNNER_TEMP (this test's own, with the session's install in it), a python3, and how pip
    and uv find the locked dependencies offline."""
    temp = tmp_path_factory.mktemp("runner-temp")
    (temp / installed_action.name).symlink_to(installed_action)
    return temp, python_bin, offline_env(tmp_path_factory.mktemp("uv-config"))


@pytest.fixture
def forked_toolchain(toolchain: tuple[Path, Path, dict[str, str]]) -> tuple[Path, Path, dict[str, str]]:
    """``toolchain``, whose installed ``promoter`` command forks each run from this worker's
    fork server (tests/support/forkserver.py), which has imported this checkout's promoter, the
    code the session installed: a workflow's jobs start dozens of promoter processes, and
    importing the promoter and PyGithub was most of each one's CPU. install.sh finds the
    command and uses it as a job's second action uses the first one's install; the install
    itself is tested on the session's virtualenv (``toolchain``)."""
    temp = toolchain[0]
    (link,) = temp.glob("promoter-*")
    link.unlink()
    (link / "bin").mkdir(parents=True)
    forkserver.command(link / "bin" / "promoter")
    return toolchain
