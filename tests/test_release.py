"""Releases (docs/releasing.md): the version lives in the package and the tag must name it, the
changelog's section is the release's notes, the sdist and the wheel carry complete metadata
(scripts/dist.py check, what `twine check` checks and more), and the release workflow publishes
by trusted publishing with its actions pinned by SHA."""

from __future__ import annotations

import datetime
import importlib.util
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
import yaml

import promoter
from tests.support.paths import ROOT


def script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


release = script("release")
dist = script("dist")
CHANGELOG = """\
# Changelog

## [Unreleased]

### Fixed

- The brach: typo.

## [0.1.0] - 2026-01-02

### Added

- Everything.

[Unreleased]: https://example.com/compare/v0.1.0...HEAD
"""
VERSION_FILE = '"""promoter."""\n\n__version__ = "0.1.0"\n'


def test_the_version_is_in_the_package_and_the_changelog_has_an_unreleased_section() -> None:
    assert release.VERSION.fullmatch(promoter.__version__) or promoter.__version__.endswith(".dev0")
    assert release.current_version((ROOT / "promoter" / "__init__.py").read_text()) == promoter.__version__
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in text and "keepachangelog.com" in text


def test_a_tag_must_name_its_commits_version_and_have_notes() -> None:
    assert release.notes("v0.1.0", VERSION_FILE, CHANGELOG) == "### Added\n\n- Everything.\n"
    with pytest.raises(release.ReleaseError, match=r"tag v0\.2\.0 is not the version of its commit"):
        release.notes("v0.2.0", VERSION_FILE, CHANGELOG)
    with pytest.raises(release.ReleaseError, match="not a release tag"):
        release.notes("latest", VERSION_FILE, CHANGELOG)
    with pytest.raises(release.ReleaseError, match=r"no section '## \[0.1.0\]'"):
        release.notes("v0.1.0", VERSION_FILE, CHANGELOG.replace("## [0.1.0] - 2026-01-02", "## Old"))


def test_prepare_turns_unreleased_into_the_release() -> None:
    version, changelog = release.prepared("0.2.0", VERSION_FILE, CHANGELOG, datetime.date(2026, 11, 25))
    assert release.current_version(version) == "0.2.0"
    assert changelog.index("## [Unreleased]") < changelog.index("## [0.2.0] - 2026-11-25")
    assert release.section(changelog, "0.2.0") == "### Fixed\n\n- The brach: typo.\n"
    assert release.notes("v0.2.0", version, changelog) == "### Fixed\n\n- The brach: typo.\n"
    assert release.section(changelog, "0.1.0") == "### Added\n\n- Everything.\n"  # kept as it was
    empty = CHANGELOG.replace("### Fixed\n\n- The brach: typo.\n\n", "")
    with pytest.raises(release.ReleaseError, match="Unreleased section is empty"):
        release.prepared("0.2.0", VERSION_FILE, empty, datetime.date(2026, 11, 25))


def test_the_sdist_and_the_wheel_carry_complete_metadata(tmp_path: Path) -> None:
    built = dist.build(tmp_path)
    assert sorted(p.name for p in built) == [
        f"promoter-{promoter.__version__}-py3-none-any.whl",
        f"promoter-{promoter.__version__}.tar.gz",
    ]
    assert [p for b in built for p in dist.problems(b)] == []
    wheel = next(p for p in built if p.suffix == ".whl")
    broken = tmp_path / "broken" / wheel.name
    broken.parent.mkdir()
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(broken, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename.endswith("METADATA"):
                data = data.replace(
                    b"Description-Content-Type: text/markdown", b"Description-Content-Type: text/x-rst"
                )
            if item.filename.endswith("__init__.py") and item.filename.count("/") == 1:
                data += b"# changed after the build\n"
            target.writestr(item, data)
    found = dist.problems(broken)
    assert any("not Markdown" in p for p in found) and any(
        "promoter/__init__.py does not match" in p for p in found
    )


def test_the_release_workflow_publishes_by_trusted_publishing() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    assert workflow[True] == {"push": {"tags": ["v*"]}}  # YAML 1.1 reads the key `on` as True
    assert workflow["permissions"] == {}
    jobs = workflow["jobs"]
    writers = {name for name, job in jobs.items() if job["permissions"].get("id-token") == "write"}
    assert writers == {"build", "pypi"}  # the attestation's signature, and PyPI's OIDC token
    uses = [step["uses"] for job in jobs.values() for step in job["steps"] if "uses" in step]
    assert all(u.split("@")[1].isalnum() and len(u.split("@")[1]) == 40 for u in uses)
    assert any(u.startswith("actions/attest-build-provenance@") for u in uses)
    publish = next(
        s for s in jobs["pypi"]["steps"] if s.get("uses", "").startswith("pypa/gh-action-pypi-publish@")
    )
    assert "password" not in publish.get("with", {})  # no token: trusted publishing
    assert jobs["build"]["needs"] == "test" and jobs["github-release"]["needs"] == "pypi"
