"""Every case of Kalypso's oracle (tests/kalypso/vectors) through ``promoter kalypso template``:
the output byte for byte on stdout (exit 0, nothing added), or Go's error text on stderr
(exit 2). The default generation is the scheduler's HEAD."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli

VECTORS = Path(__file__).parent / "vectors" / "kalypso-vectors.json"
CASES: list[dict[str, Any]] = json.loads(VECTORS.read_text(encoding="utf-8"))["cases"]


def template(tmp_path: Path, text: str, data: dict[str, Any], *args: str) -> Any:
    """``promoter kalypso template`` of ``text`` with ``data``, in process."""
    (tmp_path / "manifest.tmpl").write_text(text, encoding="utf-8")
    (tmp_path / "data.json").write_text(json.dumps(data), encoding="utf-8")
    return CliRunner().invoke(
        cli,
        [
            "kalypso",
            "template",
            str(tmp_path / "manifest.tmpl"),
            "--data",
            str(tmp_path / "data.json"),
            *args,
        ],
    )


def test_there_are_the_65_cases() -> None:
    assert len(CASES) == 65 and len({c["name"] for c in CASES}) == 65


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_kalypsos_oracle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: dict[str, Any]) -> None:
    monkeypatch.delenv("PROMOTER_KALYPSO_NAMING")  # the default: HEAD
    result = template(tmp_path, case["template"], case["data"])
    expected = case["expected"]
    if "error" in expected:
        assert result.exit_code == 2, result.stdout
        assert result.stdout == ""
        line = re.match(r"template: template:(\d+)", expected["error"])
        assert line is not None
        where = f"{tmp_path / 'manifest.tmpl'}:{line.group(1)}"
        assert result.stderr == f"error: {where}: {expected['error']}\n"
    else:
        assert result.exit_code == 0, result.stderr
        assert result.stdout == expected["output"]
        assert result.stderr == ""
