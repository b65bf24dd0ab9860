#!/usr/bin/env python3
"""The release's sdist and wheel, and their check (what `twine check` checks, and more).

scripts/dist.py build DIR   builds the sdist of this checkout into DIR, then the wheel from
                            that sdist (as pip builds one from PyPI), with the build backend of
                            the environment (setuptools and setuptools-scm, hash-locked in
                            actions/requirements.lock and requirements/dev.lock), through its
                            PEP 517 hooks: no index, no build isolation, as actions/install.sh
                            installs. The version is the git tag's (setuptools-scm).
scripts/dist.py check DIR [VERSION]
                            exit 1 unless every distribution in DIR has complete metadata: the
                            name, one PEP 440 version for all (VERSION when given: the release
                            workflow gives its tag's), a summary, the license expression,
                            Requires-Python, the README as a Markdown long description, the
                            console script; a wheel whose RECORD hashes match its files; an sdist
                            that carries PKG-INFO and pyproject.toml
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parents[1]
REQUIRED = ("Metadata-Version", "Name", "Version", "Summary", "License-Expression", "Requires-Python")
_HOOK = """
import sys
from setuptools import build_meta
print("built:", getattr(build_meta, sys.argv[1])(sys.argv[2]))
"""


def _hook(hook: str, source: Path, out: Path) -> Path:
    done = subprocess.run(
        [sys.executable, "-c", _HOOK, hook, str(out.resolve())],
        cwd=source,
        check=True,
        capture_output=True,
        text=True,
    )
    (name,) = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("built: ")]
    return out / name


def build(out: Path, source: Path = ROOT) -> list[Path]:
    """The sdist of ``source``, then the wheel of that sdist: what PyPI serves, built the way pip
    builds from it, so a file the sdist misses fails here and not at a user's install."""
    out.mkdir(parents=True, exist_ok=True)
    sdist = _hook("build_sdist", source, out)
    with tempfile.TemporaryDirectory() as unpacked, tarfile.open(sdist) as archive:
        archive.extractall(unpacked, filter="tar")
        (top,) = Path(unpacked).iterdir()
        return [sdist, _hook("build_wheel", top, out)]


def problems(path: Path, version: str | None = None) -> list[str]:
    """What is wrong with one distribution; ``version`` is the one it must have."""
    if path.name.endswith(".whl"):
        meta, found = _wheel(path)
    elif path.name.endswith(".tar.gz"):
        meta, found = _sdist(path)
    else:
        return [f"{path.name}: not a wheel or an sdist"]
    found += [f"{field} is missing" for field in REQUIRED if not meta.get(field)]
    found += _version_problems(meta.get("Version"), version)
    if meta.get("Description-Content-Type", "").split(";")[0] != "text/markdown":
        found.append("the long description is not Markdown (Description-Content-Type)")
    payload = meta.get_payload()
    if not isinstance(payload, str) or not payload.strip().startswith("# promoter"):
        found.append("the long description is not the README")
    return [f"{path.name}: {p}" for p in found]


def _version_problems(found: str | None, wanted: str | None) -> list[str]:
    try:
        Version(found or "")
    except InvalidVersion:
        return [f"Version {found!r} is not a PEP 440 version"]
    if wanted is not None and found != wanted:
        return [f"Version {found} is not {wanted}, the tag's"]
    return []


def _wheel(path: Path) -> tuple[Message, list[str]]:
    found: list[str] = []
    with zipfile.ZipFile(path) as wheel:
        names = wheel.namelist()
        info = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        if info is None:
            return Message(), ["no .dist-info/METADATA"]
        dist_info = info.rsplit("/", 1)[0]
        points = (
            wheel.read(f"{dist_info}/entry_points.txt").decode()
            if f"{dist_info}/entry_points.txt" in names
            else ""
        )
        if "promoter = promoter.cli.main:main" not in points:
            found.append("no console script promoter = promoter.cli.main:main")
        for row in csv.reader(io.StringIO(wheel.read(f"{dist_info}/RECORD").decode())):
            name, digest = row[0], row[1]
            if digest:
                algorithm, _, expected = digest.partition("=")
                actual = base64.urlsafe_b64encode(hashlib.new(algorithm, wheel.read(name)).digest()).rstrip(
                    b"="
                )
                if actual.decode() != expected:
                    found.append(f"RECORD: {name} does not match its hash")
        return Parser().parsestr(wheel.read(info).decode()), found


def _sdist(path: Path) -> tuple[Message, list[str]]:
    with tarfile.open(path) as sdist:
        names = sdist.getnames()
        top = names[0].split("/", 1)[0]
        found = [
            f"no {top}/{n}" for n in ("PKG-INFO", "pyproject.toml", "README.md") if f"{top}/{n}" not in names
        ]
        if f"{top}/PKG-INFO" not in names:
            return Message(), found
        member = sdist.extractfile(f"{top}/PKG-INFO")
        assert member is not None
        return Parser().parsestr(member.read().decode()), found


def check(out: Path, version: str | None) -> list[str]:
    dists = sorted(out.glob("*.whl")) + sorted(out.glob("*.tar.gz"))
    if not dists:
        return [f"{out}: no distributions"]
    found = [p for d in dists for p in problems(d, version)]
    versions = {d.name.removesuffix(".tar.gz").split("-")[1] for d in dists}
    if len(versions) > 1:
        found.append(f"{out}: distributions of several versions: {', '.join(sorted(versions))}")
    return found


def main(argv: list[str]) -> int:
    if not (len(argv) == 2 and argv[0] == "build") and not (len(argv) in (2, 3) and argv[0] == "check"):
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1])
    if argv[0] == "build":
        for path in build(out):
            print(path)
        return 0
    found = check(out, argv[2] if len(argv) == 3 else None)
    dists = sorted(out.glob("*.whl")) + sorted(out.glob("*.tar.gz"))
    for problem in found:
        print(f"error: {problem}", file=sys.stderr)
    if not found:
        print(f"ok: {', '.join(d.name for d in dists)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
