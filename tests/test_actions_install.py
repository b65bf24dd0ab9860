"""The actions' install is reproducible: actions/requirements.lock pins, with hashes, every
dependency pyproject.toml declares (at a version it allows) and the build backend; the
installer itself (uv) is pinned the same way; the project metadata is the SPDX form that
setuptools 77 and later read without a warning."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
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


def test_the_installer_is_pinned_too() -> None:
    locked = pins(ROOT / "actions" / "uv.lock")
    assert list(locked) == ["uv"] and locked["uv"][1] >= 10  # a wheel per platform


def test_the_license_is_an_spdx_expression() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
