#!/usr/bin/env python3
"""The release's sdist and wheel, and their check (what `twine check` checks, and more).

scripts/dist.py build DIR   builds the sdist and the wheel of this checkout into DIR with the
                            build backend of the environment (setuptools, hash-locked in
                            requirements/dev.lock), through its PEP 517 hooks: no index, no
                            build isolation, as actions/install.sh installs
scripts/dist.py check DIR   exit 1 unless every distribution in DIR has complete metadata: the
                            name, the version of promoter/__init__.py, a summary, the license
                            expression, Requires-Python, the README as a Markdown long
                            description, the console script; a wheel whose RECORD hashes match
                            its files; an sdist that carries PKG-INFO and pyproject.toml
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import re
import subprocess
import sys
import tarfile
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REQUIRED = ("Metadata-Version", "Name", "Version", "Summary", "License-Expression", "Requires-Python")
_HOOKS = """
import sys
from setuptools import build_meta
out = sys.argv[1]
print("built:", build_meta.build_sdist(out))
print("built:", build_meta.build_wheel(out))
"""


def build(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", _HOOKS, str(out.resolve())],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return [out / line.split()[1] for line in done.stdout.splitlines() if line.startswith("built: ")]


def version() -> str:
    match = re.search(r'^__version__ = "([^"]*)"$', (ROOT / "promoter" / "__init__.py").read_text(), re.M)
    assert match, "promoter/__init__.py has no __version__"
    return match.group(1)


def problems(path: Path) -> list[str]:
    if path.name.endswith(".whl"):
        meta, found = _wheel(path)
    elif path.name.endswith(".tar.gz"):
        meta, found = _sdist(path)
    else:
        return [f"{path.name}: not a wheel or an sdist"]
    found += [f"{field} is missing" for field in REQUIRED if not meta.get(field)]
    if meta.get("Version") != version():
        found.append(f"Version {meta.get('Version')} is not promoter/__init__.py's {version()}")
    if meta.get("Description-Content-Type", "").split(";")[0] != "text/markdown":
        found.append("the long description is not Markdown (Description-Content-Type)")
    payload = meta.get_payload()
    if not isinstance(payload, str) or not payload.strip().startswith("# promoter"):
        found.append("the long description is not the README")
    return [f"{path.name}: {p}" for p in found]


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


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("build", "check"):
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1])
    if argv[0] == "build":
        for path in build(out):
            print(path)
        return 0
    dists = sorted(out.glob("*.whl")) + sorted(out.glob("*.tar.gz"))
    found = [p for d in dists for p in problems(d)] or ([] if dists else [f"{out}: no distributions"])
    for problem in found:
        print(f"error: {problem}", file=sys.stderr)
    if not found:
        print(f"ok: {', '.join(d.name for d in dists)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
