"""Releases (docs/releasing.md): the git tag is the version (setuptools-scm, from git or from
.git_archival.txt in a `git archive`), the changelog's section is the release's notes, the sdist
and the wheel carry complete metadata (scripts/dist.py check, what `twine check` checks and
more), and the release workflow publishes by trusted publishing with its actions pinned by SHA.
The builds run in repositories of their own (tests/actions/releases.py), with no index and no
build isolation: the backend and setuptools-scm of the test environment, as the locks pin them."""

from __future__ import annotations

import datetime
import importlib.util
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from tests.actions.releases import (
    GIT_ENV,
    archive,
    commit,
    copy_sources,
    git,
    promoter_repo,
    scm_version,
    wheel_version,
)
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
TODAY = datetime.date(2026, 11, 25)


def run_script(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """One of scripts/ as the maintainer runs it, in ``repo``."""
    return subprocess.run(
        [sys.executable, str(repo / "scripts" / args[0]), *args[1:]],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
        check=False,
    )


def test_the_version_is_the_installed_packages_and_the_changelog_has_an_unreleased_section() -> None:
    # isolated (-I): a build in the checkout leaves promoter.egg-info beside it, and the working
    # folder on sys.path would find that one
    same = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            "import promoter, importlib.metadata as m; print(promoter.__version__, m.version('promoter'))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT.parent,
    ).stdout.split()
    assert same[0] == same[1] and same[0] != "0+unknown", same
    assert not re.search(r"\d+\.\d+\.\d+", (ROOT / "promoter" / "__init__.py").read_text())  # the tag's alone
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in text and "keepachangelog.com" in text


def test_a_tag_must_be_a_release_and_have_notes() -> None:
    assert release.notes("v0.1.0", CHANGELOG) == "### Added\n\n- Everything.\n"
    with pytest.raises(release.ReleaseError, match="not a release tag"):
        release.notes("latest", CHANGELOG)
    with pytest.raises(release.ReleaseError, match="not a release tag"):
        release.notes("v1", CHANGELOG)  # the major tag the `uses:` follow
    with pytest.raises(release.ReleaseError, match=r"no section '## \[0.2.0\]'"):
        release.notes("v0.2.0", CHANGELOG)


def test_prepare_turns_unreleased_into_the_release() -> None:
    changelog = release.prepared("0.2.0", CHANGELOG, TODAY, "0.1.0")
    assert changelog.index("## [Unreleased]") < changelog.index("## [0.2.0] - 2026-11-25")
    assert release.section(changelog, "0.2.0") == "### Fixed\n\n- The brach: typo.\n"
    assert release.notes("v0.2.0", changelog) == "### Fixed\n\n- The brach: typo.\n"
    assert release.section(changelog, "0.1.0") == "### Added\n\n- Everything.\n"  # kept as it was
    empty = CHANGELOG.replace("### Fixed\n\n- The brach: typo.\n\n", "")
    with pytest.raises(release.ReleaseError, match="Unreleased section is empty"):
        release.prepared("0.2.0", empty, TODAY, "0.1.0")
    for older in ("0.1.0", "0.1.0rc1", "0.0.9"):
        with pytest.raises(release.ReleaseError, match=f"{re.escape(older)} does not come after"):
            release.prepared(older, CHANGELOG, TODAY, "0.1.0")
    assert "## [0.1.1rc1]" in release.prepared("0.1.1rc1", CHANGELOG, TODAY, "0.1.0")
    assert "## [1.0.0]" in release.prepared("1.0.0", CHANGELOG, TODAY, "1.0.0rc2")
    with pytest.raises(release.ReleaseError, match="not a release version"):
        release.prepared("1.0", CHANGELOG, TODAY, None)


def test_a_prepared_release_builds_the_tags_version_with_complete_metadata(tmp_path: Path) -> None:
    repo = promoter_repo(tmp_path / "repo")
    done = run_script(repo, "release.py", "prepare", "9.8.7")
    assert done.returncode == 0, done.stderr
    assert git(repo, "describe", "--exact-match") == "v9.8.7"  # annotated, on the release commit
    assert git(repo, "show", "--stat", "--format=%s", "HEAD").splitlines()[:2] == ["Release v9.8.7", ""]
    assert "## [9.8.7] - " in (repo / "CHANGELOG.md").read_text()
    git(repo, "tag", "v9")  # the major tag, lightweight, as the release workflow moves it

    built = dist.build(tmp_path / "dist", repo)
    assert sorted(p.name for p in built) == ["promoter-9.8.7-py3-none-any.whl", "promoter-9.8.7.tar.gz"]
    assert [p for b in built for p in dist.problems(b, "9.8.7")] == []
    assert dist.main(["check", str(tmp_path / "dist"), "9.8.7"]) == 0
    assert dist.check(tmp_path / "dist", "9.8.8") == [
        f"{p.name}: Version 9.8.7 is not 9.8.8, the tag's"
        for p in sorted(built, key=lambda p: p.suffix == ".gz")
    ]
    assert run_script(repo, "release.py", "notes", "v9.8.7").stdout == release.section(
        (repo / "CHANGELOG.md").read_text(), "9.8.7"
    )
    again = run_script(repo, "release.py", "prepare", "9.8.7")
    assert (again.returncode, again.stderr) == (
        1,
        "error: 9.8.7 does not come after the last release, 9.8.7\n",
    )


def test_a_broken_wheel_is_found_out(tmp_path: Path) -> None:
    repo = promoter_repo(tmp_path / "repo")
    git(repo, "tag", "--annotate", "v9.8.7", "--message", "9.8.7")
    wheel = next(p for p in dist.build(tmp_path / "dist", repo) if p.suffix == ".whl")
    broken = tmp_path / "broken" / wheel.name
    broken.parent.mkdir()
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(broken, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename.endswith("METADATA"):
                data = data.replace(
                    b"Description-Content-Type: text/markdown", b"Description-Content-Type: text/x-rst"
                ).replace(b"Version: 9.8.7", b"Version: 9.8.7-not-pep-440")
            if item.filename.endswith("__init__.py") and item.filename.count("/") == 1:
                data += b"# changed after the build\n"
            target.writestr(item, data)
    found = dist.problems(broken)
    assert any("not Markdown" in p for p in found), found
    assert any("promoter/__init__.py does not match" in p for p in found), found
    assert any("'9.8.7-not-pep-440' is not a PEP 440 version" in p for p in found), found


def test_a_commit_after_a_release_builds_the_next_dev_version(tmp_path: Path) -> None:
    repo = promoter_repo(tmp_path / "repo")
    git(repo, "tag", "--annotate", "v9.8.7", "--message", "9.8.7")
    sha = commit(repo, "After the release")
    git(repo, "tag", "v9")  # a major tag on it is no version
    (wheel,) = [p for p in dist.build(tmp_path / "dist", repo) if p.suffix == ".whl"]
    assert wheel_version(wheel) == f"9.8.8.dev1+g{sha[:9]}"


def test_before_any_tag_and_without_git_the_version_says_so(tmp_path: Path) -> None:
    repo = promoter_repo(tmp_path / "repo")
    assert scm_version(repo) == f"0.1.dev1+g{git(repo, 'rev-parse', 'HEAD')[:9]}"
    assert scm_version(copy_sources(tmp_path / "copy")) == "0.0"  # no .git, .git_archival.txt unsubstituted


def test_a_git_archive_knows_its_version(tmp_path: Path) -> None:
    """GitHub's tarballs are `git archive` with export-subst: what a `uses:` downloads."""
    repo = promoter_repo(tmp_path / "repo")
    git(repo, "tag", "--annotate", "v9.8.7", "--message", "9.8.7")
    sha = commit(repo, "After the release")
    tagged = archive(repo, "v9.8.7", tmp_path / "tagged")
    assert "describe-name: v9.8.7\n" in (tagged / ".git_archival.txt").read_text()
    built = dist.build(tmp_path / "dist", tagged)
    assert sorted(p.name for p in built) == ["promoter-9.8.7-py3-none-any.whl", "promoter-9.8.7.tar.gz"]
    later = archive(repo, "HEAD", tmp_path / "later")
    assert scm_version(later) == f"9.8.8.dev1+g{sha[:7]}"


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
