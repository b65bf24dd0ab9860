#!/usr/bin/env python3
"""Releases of the promoter (docs/releasing.md).

  scripts/release.py prepare 1.2.0   on a clean main: turns CHANGELOG.md's Unreleased section
                                     into "## [1.2.0] - <today>" under a new empty Unreleased,
                                     commits "Release v1.2.0" and makes the annotated tag v1.2.0
                                     (nothing is pushed: git push origin main v1.2.0 starts the
                                     release)
  scripts/release.py notes v1.2.0    the release workflow's check and notes: exit 1 unless the tag
                                     is a release tag and CHANGELOG.md has its section; prints
                                     that section (the GitHub release's notes)

The tag is the version: no file holds it. setuptools-scm reads it from git at build time (from
.git_archival.txt in a GitHub tarball, which is how a `uses:` gets the actions), so the release
commit changes only the changelog.
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHANGELOG = ROOT / "CHANGELOG.md"
VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)(?:(a|b|rc)(\d+))?")  # PEP 440, as PyPI and the tags take it
TAGS = "v[0-9]*.[0-9]*.[0-9]*"  # the release tags, not the major tags (v1) that `uses:` follows
_UNRELEASED = "## [Unreleased]"
_STAGES = {"a": 0, "b": 1, "rc": 2, None: 3}  # a final release sorts after its pre-releases


class ReleaseError(Exception):
    pass


def order(version: str) -> tuple[int, ...]:
    """A key that sorts release versions as PEP 440 does (they are all of VERSION's form)."""
    match = VERSION.fullmatch(version)
    if match is None:
        raise ReleaseError(f"{version!r}: not a release version (1.2.3, 1.2.3rc1)")
    major, minor, patch, stage, number = match.groups()
    return (int(major), int(minor), int(patch), _STAGES[stage], int(number or 0))


def section(changelog: str, version: str) -> str:
    """The text of ``## [version]``'s section of a Keep a Changelog file, without its heading."""
    match = re.search(
        rf"^## \[{re.escape(version)}\][^\n]*\n(.*?)(?=^## \[|^\[[^\]]+\]: |\Z)", changelog, re.M | re.S
    )
    if match is None or not match.group(1).strip():
        raise ReleaseError(f"CHANGELOG.md has no section '## [{version}]' with notes in it")
    return match.group(1).strip() + "\n"


def notes(tag: str, changelog: str) -> str:
    """The checks of a tag, then its notes."""
    if not tag.startswith("v") or not VERSION.fullmatch(tag[1:]):
        raise ReleaseError(f"tag {tag!r}: not a release tag (v1.2.3, v1.2.3rc1)")
    return section(changelog, tag[1:])


def prepared(version: str, changelog: str, today: datetime.date, last: str | None) -> str:
    """The changelog of release ``version``; ``last`` is the newest release tag's version."""
    if last is not None and order(version) <= order(last):  # order() refuses a non-release version
        raise ReleaseError(f"{version} does not come after the last release, {last}")
    order(version)  # the first release too
    if _UNRELEASED not in changelog:
        raise ReleaseError(f"CHANGELOG.md has no '{_UNRELEASED}' section")
    head, _, rest = changelog.partition(_UNRELEASED)
    body = re.split(r"^(?=## \[)", rest, maxsplit=1, flags=re.M)
    if not body[0].strip():
        raise ReleaseError("CHANGELOG.md's Unreleased section is empty: say what changed first")
    released = f"{_UNRELEASED}\n\n## [{version}] - {today.isoformat()}{body[0].rstrip()}\n\n"
    return head + released + (body[1] if len(body) > 1 else "")


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout


def last_release() -> str | None:
    """The newest release tag's version, None before the first."""
    tags = [t.removeprefix("v") for t in _git("tag", "--list", TAGS).split()]
    released = [t for t in tags if VERSION.fullmatch(t)]
    return max(released, key=order) if released else None


def prepare(version: str) -> None:
    if _git("status", "--porcelain").strip():
        raise ReleaseError("the working tree has changes: release from a clean checkout of main")
    changelog = prepared(version, CHANGELOG.read_text(), datetime.date.today(), last_release())
    CHANGELOG.write_text(changelog)
    _git("commit", "--quiet", "-m", f"Release v{version}", "--", str(CHANGELOG))
    _git("tag", "--annotate", f"v{version}", "-m", f"promoter v{version}\n\n{section(changelog, version)}")
    print(f"tagged v{version}; to release it: git push origin HEAD v{version}")


def main(argv: list[str]) -> int:
    try:
        if len(argv) == 2 and argv[0] == "prepare":
            prepare(argv[1])
        elif len(argv) == 2 and argv[0] == "notes":
            print(notes(argv[1], CHANGELOG.read_text()), end="")
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except ReleaseError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
