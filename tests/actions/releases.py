"""A promoter repository of its own in a temporary folder, to tag, archive and build as a release
is: the files a build, scripts/release.py and actions/install.sh read, copied from this checkout
as they are (uncommitted changes included), committed into a new repository."""

from __future__ import annotations

import importlib.util
import io
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

from tests.support.paths import ROOT

# What a build, a release and the actions' install need; the tests, docs and the rest stay out.
PARTS = (
    ".github/workflows/",  # the reusable workflow, for a `uses:` of it (tests/actions/test_act.py)
    ".gitattributes",
    ".git_archival.txt",
    ".gitignore",
    "CHANGELOG.md",
    "README.md",
    "pyproject.toml",
    "actions/",
    "examples/",
    "promoter/",
    "scripts/",
)
# No global or system configuration (a signing key, a hook path) reaches these repositories.
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    )
    return done.stdout.strip()


def copy_sources(target: Path) -> Path:
    """The files of PARTS as this checkout has them (symbolic links kept as links), without git."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\0")
    for name in sorted(set(listed)):
        source = ROOT / name
        if not name.startswith(PARTS) or not (source.exists() or source.is_symlink()):
            continue
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), target / name)
        else:
            shutil.copy2(source, target / name)
    return target


def promoter_repo(target: Path) -> Path:
    """A new repository on main holding the sources in one commit, and no tag."""
    copy_sources(target)
    git(target, "init", "--quiet", "--initial-branch=main")
    git(target, "config", "user.name", "Release Test")
    git(target, "config", "user.email", "release@example.com")
    git(target, "add", "--all")
    git(target, "commit", "--quiet", "--message", "The promoter")
    return target


def commit(repo: Path, message: str) -> str:
    """An empty commit on top; its full SHA."""
    git(repo, "commit", "--quiet", "--allow-empty", "--message", message)
    return git(repo, "rev-parse", "HEAD")


def archive(repo: Path, ref: str, target: Path) -> Path:
    """What GitHub hands a `uses:` of ``ref``: ``git archive`` (export-subst applied), unpacked."""
    data = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", "--prefix=promoter/", ref],
        check=True,
        capture_output=True,
        env={**os.environ, **GIT_ENV},
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(target, filter="tar")
    return target / "promoter"


def build_wheel(source: Path, out: Path) -> Path:
    """The wheel of ``source`` as the release workflow builds it (scripts/dist.py build)."""
    spec = importlib.util.spec_from_file_location("dist", ROOT / "scripts" / "dist.py")
    assert spec is not None and spec.loader is not None
    dist = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dist)
    (wheel,) = [p for p in dist.build(out, source) if p.suffix == ".whl"]
    assert isinstance(wheel, Path)
    return wheel


def scm_version(source: Path) -> str:
    """The version setuptools-scm gives a build of ``source`` (as `python -m setuptools_scm`)."""
    done = subprocess.run(
        [sys.executable, "-m", "setuptools_scm"], cwd=source, check=True, capture_output=True, text=True
    )
    return done.stdout.strip().splitlines()[-1]


def wheel_version(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        version = Parser().parsestr(archive.read(metadata).decode())["Version"]
    assert isinstance(version, str)
    return version


def simple_index(root: Path, *wheels: Path) -> str:
    """A package index (PEP 503) in a folder holding ``wheels`` under their project; its URL."""
    project = root / "promoter"
    project.mkdir(parents=True)
    links = []
    for wheel in wheels:
        shutil.copy2(wheel, project / wheel.name)
        links.append(f'<a href="{wheel.name}">{wheel.name}</a>')
    (project / "index.html").write_text(f"<!DOCTYPE html><html><body>{''.join(links)}</body></html>\n")
    (root / "index.html").write_text(
        '<!DOCTYPE html><html><body><a href="promoter/">promoter</a></body></html>\n'
    )
    return root.as_uri()
