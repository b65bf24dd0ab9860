"""The actions' install is reproducible: actions/requirements.lock pins, with hashes, every
dependency pyproject.toml declares (at a version it allows), the build backend and
setuptools-scm; the installer itself (uv) is pinned the same way; the project metadata is the
SPDX form that setuptools 77 and later read without a warning. A checkout that is no release
installs itself (tests/actions/test_install_release.py has the releases)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.actions.releases import scm_version
from tests.support.paths import ROOT, building_the_checkout
from tests.support.wheelhouse import offline_env

PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^ ;\\]+)( ;[^\\]*)? \\$")


def pins(path: Path) -> dict[str, tuple[str, int]]:
    """name -> (version, number of hashes)."""
    found: dict[str, tuple[str, int]] = {}
    name = ""
    for line in path.read_text().splitlines():
        match = PIN.match(line)
        if match:
            name = canonicalize_name(match.group(1))
            found[name] = (match.group(2), 0)
        elif line.strip().startswith("--hash=sha256:") and name:
            version, hashes = found[name]
            found[name] = (version, hashes + 1)
    return found


def test_every_dependency_is_pinned_with_hashes_at_an_allowed_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    locked = pins(ROOT / "actions" / "requirements.lock")
    assert locked and all(hashes >= 1 for _, hashes in locked.values()), locked
    for text in project["dependencies"]:
        wanted = Requirement(text)
        version, _ = locked[canonicalize_name(wanted.name)]
        assert wanted.specifier.contains(version), (text, version)
    backend = Requirement(tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"][0])
    assert backend.specifier.contains(locked["setuptools"][0])
    scm = Requirement(tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"][1])
    assert scm.name == "setuptools-scm" and scm.specifier.contains(locked["setuptools-scm"][0])


def test_the_installer_is_pinned_too() -> None:
    locked = pins(ROOT / "actions" / "uv.lock")
    assert list(locked) == ["uv"] and locked["uv"][1] >= 10  # a wheel per platform


def test_the_license_is_an_spdx_expression() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"


def install(tmp_path: Path, installer: str, *, without_uv: bool = False) -> subprocess.CompletedProcess[str]:
    """actions/install.sh offline, as the harness runs it: no uv on PATH, the locked files in
    the wheelhouse and no index; ``without_uv`` leaves the uv wheel out, as when PyPI cannot be
    reached for it."""
    temp = tmp_path / "runner-temp"
    temp.mkdir(exist_ok=True)
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "uv").exists())
    offline = offline_env(tmp_path)
    if without_uv:
        house = tmp_path / "wheelhouse"
        house.mkdir()
        for wheel in Path(offline["PIP_FIND_LINKS"]).iterdir():
            if not wheel.name.startswith("uv-"):
                (house / wheel.name).symlink_to(wheel)
        offline["PIP_FIND_LINKS"] = str(house)
    env = {
        **os.environ,
        "PATH": path,
        "RUNNER_TEMP": str(temp),
        "PROMOTER_INSTALLER": installer,
        "PROMOTER_PYTHON": sys.executable,
        **offline,
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }
    with building_the_checkout():
        return subprocess.run(
            ["bash", str(ROOT / "actions" / "install.sh")],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )


def installed(tmp_path: Path, done: subprocess.CompletedProcess[str], how: str) -> None:
    """This checkout installed (it is no release), at the version setuptools-scm gives it now."""
    assert done.returncode == 0, done.stderr
    version = scm_version(ROOT)
    at = subprocess.run(
        ["git", "-C", str(ROOT), "describe", "--tags", "--always", "--match", "v[0-9]*.[0-9]*.[0-9]*"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert (
        f"installed promoter {version} from the action's checkout (not a release: a git checkout at {at}); "
        f"its locked dependencies with {how}, in "
    ) in done.stdout
    promoter = (tmp_path / "output").read_text().strip().removeprefix("promoter=")
    assert Path(promoter).is_file() and done.stdout.strip().endswith(f"version {version}")


def test_without_uv_on_path_the_locked_uv_installs(tmp_path: Path) -> None:
    installed(tmp_path, install(tmp_path, "auto"), "uv")


def test_without_uv_the_install_falls_back_to_pip(tmp_path: Path) -> None:
    installed(tmp_path, install(tmp_path, "auto", without_uv=True), "pip")  # the locked uv cannot be had


def test_an_unknown_installer_is_refused(tmp_path: Path) -> None:
    done = install(tmp_path, "conda")
    assert done.returncode == 2
    assert (
        done.stderr.strip() == "::error title=promoter::PROMOTER_INSTALLER must be auto, uv or pip, not conda"
    )
