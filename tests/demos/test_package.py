"""``promoter demo`` from a plain ``pip install``: the sample control plane ships in the wheel
(``promoter/examples``, a link to ``examples/`` in the source tree), and the demo finds it there."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.support.paths import ROOT, building_the_checkout


def test_the_wheel_carries_the_sample_and_the_demo_finds_it_there(tmp_path: Path) -> None:
    with building_the_checkout():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-deps",
                "--no-build-isolation",
                str(ROOT),
                "-w",
                str(tmp_path),
            ],
            check=True,
            capture_output=True,
        )
    (wheel,) = tmp_path.glob("promoter-*.whl")
    shipped = {
        n.removeprefix("promoter/examples/")
        for n in zipfile.ZipFile(wheel).namelist()
        if n.startswith("promoter/examples/")
    }
    source = {str(p.relative_to(ROOT / "examples")) for p in (ROOT / "examples").rglob("*") if p.is_file()}
    assert shipped == source
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site)}
    script = (
        "import sys; from pathlib import Path; import promoter; from promoter.demos.promotion import build_repos, examples_dir;"
        "print(Path(promoter.__file__).parent); print(examples_dir()); Path(sys.argv[1]).mkdir(); build_repos(Path(sys.argv[1]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "demo")],
        env=env,
        cwd=tmp_path,  # not the source checkout, whose promoter/ would come first
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    assert out == [str(site / "promoter"), str(site / "promoter" / "examples")]
    validated = subprocess.run(
        [
            sys.executable,
            "-m",
            "promoter",
            "validate",
            "--control-plane",
            str(tmp_path / "demo" / "control-plane"),
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert validated.returncode == 0, validated.stderr
    assert validated.stdout.splitlines()[-1].startswith("valid: main ")
