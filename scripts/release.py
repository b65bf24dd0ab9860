#!/usr/bin/env python3
"""Releases of the promoter (docs/releasing.md).

  scripts/release.py prepare 1.2.0   on a clean main: writes the version into promoter/__init__.py,
                                     turns CHANGELOG.md's Unreleased section into
                                     "## [1.2.0] - <today>" under a new empty Unreleased, commits
                                     "Release v1.2.0" and makes the annotated tag v1.2.0 (nothing
                                     is pushed: git push origin main v1.2.0 starts the release)
  scripts/release.py notes v1.2.0    the release workflow's check and notes: exit 1 unless the tag
                                     names the checkout's version and CHANGELOG.md has its
                                     section; prints that section (the GitHub release's notes)

The version lives in a file, not only in the tag: the composite actions and a `uses:` of the
reusable workflow install from a checkout GitHub copies without .git, and must still know it.
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION_FILE = ROOT / "promoter" / "__init__.py"
CHANGELOG = ROOT / "CHANGELOG.md"
VERSION = re.compile(r"\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?")  # PEP 440, as PyPI and the tags take it
_ASSIGNMENT = re.compile(r'^__version__ = "([^"]*)"$', re.M)
_UNRELEASED = "## [Unreleased]"


class ReleaseError(Exception):
    pass


def current_version(text: str) -> str:
    match = _ASSIGNMENT.search(text)
    if match is None:
        raise ReleaseError(f"{VERSION_FILE.relative_to(ROOT)} has no __version__ line")
    return match.group(1)


def section(changelog: str, version: str) -> str:
    """The text of ``## [version]``'s section of a Keep a Changelog file, without its heading."""
    match = re.search(
        rf"^## \[{re.escape(version)}\][^\n]*\n(.*?)(?=^## \[|^\[[^\]]+\]: |\Z)", changelog, re.M | re.S
    )
    if match is None or not match.group(1).strip():
        raise ReleaseError(f"CHANGELOG.md has no section '## [{version}]' with notes in it")
    return match.group(1).strip() + "\n"


def notes(tag: str, version_text: str, changelog: str) -> str:
    """The checks of a tag against the checkout, then its notes."""
    if not tag.startswith("v") or not VERSION.fullmatch(tag[1:]):
        raise ReleaseError(f"tag {tag!r}: not a release tag (v1.2.3, v1.2.3rc1)")
    written = current_version(version_text)
    if written != tag[1:]:
        raise ReleaseError(
            f"tag {tag} is not the version of its commit ({written} in promoter/__init__.py): "
            "tag the commit scripts/release.py prepare made"
        )
    return section(changelog, tag[1:])


def prepared(version: str, version_text: str, changelog: str, today: datetime.date) -> tuple[str, str]:
    """The version file and the changelog of release ``version``."""
    if not VERSION.fullmatch(version):
        raise ReleaseError(f"{version!r}: not a release version (1.2.3, 1.2.3rc1)")
    if _UNRELEASED not in changelog:
        raise ReleaseError(f"CHANGELOG.md has no '{_UNRELEASED}' section")
    head, _, rest = changelog.partition(_UNRELEASED)
    body = re.split(r"^(?=## \[)", rest, maxsplit=1, flags=re.M)
    if not body[0].strip():
        raise ReleaseError("CHANGELOG.md's Unreleased section is empty: say what changed first")
    released = f"{_UNRELEASED}\n\n## [{version}] - {today.isoformat()}{body[0].rstrip()}\n\n"
    text = head + released + (body[1] if len(body) > 1 else "")
    return _ASSIGNMENT.sub(f'__version__ = "{version}"', version_text, count=1), text


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout


def prepare(version: str) -> None:
    if _git("status", "--porcelain").strip():
        raise ReleaseError("the working tree has changes: release from a clean checkout of main")
    version_text, changelog = prepared(
        version, VERSION_FILE.read_text(), CHANGELOG.read_text(), datetime.date.today()
    )
    VERSION_FILE.write_text(version_text)
    CHANGELOG.write_text(changelog)
    _git("commit", "--quiet", "-m", f"Release v{version}", "--", str(VERSION_FILE), str(CHANGELOG))
    _git("tag", "--annotate", f"v{version}", "-m", f"promoter v{version}\n\n{section(changelog, version)}")
    print(f"tagged v{version}; to release it: git push origin HEAD v{version}")


def main(argv: list[str]) -> int:
    try:
        if len(argv) == 2 and argv[0] == "prepare":
            prepare(argv[1])
        elif len(argv) == 2 and argv[0] == "notes":
            print(notes(argv[1], VERSION_FILE.read_text(), CHANGELOG.read_text()), end="")
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except ReleaseError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
