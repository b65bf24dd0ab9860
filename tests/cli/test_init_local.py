"""``promoter init --local`` as docs/getting-started.md's first day (section 2) uses it, followed
word for word: every command it shows runs as written, in order, in one shell session (its
``cd``s kept), on this machine's promoter, under a temporary folder instead of /tmp; every
output line it shows appears in the run's output, in order (``...`` stands for lines left out),
shas, times and durations aside."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT

DOC = ROOT / "docs/getting-started.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)
VARIABLE = [
    (re.compile(r"\b[0-9a-f]{7,40}\b"), "<sha>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"), "<time>"),
    (re.compile(r"\d+(?:\.\d+)?(?:ms|s)\b"), "<d>"),
]


def first_day() -> str:
    text = DOC.read_text()
    start = text.index("## 2. A first day")
    return text[start : text.index("\n## 3.", start)]


def steps(section: str) -> list[tuple[str, list[str]]]:
    """(command, the output lines shown) in order: a ``sh`` block is one command, a ``text``
    block's ``$ `` lines are each one."""
    out: list[tuple[str, list[str]]] = []
    for kind, body in FENCE.findall(section):
        if kind == "sh":
            out.append((body, []))
            continue
        for line in body.splitlines():
            if line.startswith("$ "):
                out.append((line[2:], []))
            else:
                out[-1][1].append(line)
    return out


def normal(line: str, trial: str) -> str:
    line = line.replace(trial, "/tmp/promoter-trial").rstrip()
    for pattern, word in VARIABLE:
        line = pattern.sub(word, line)
    return line


def shown_in(expected: list[str], actual: list[str]) -> str | None:
    """None when ``expected``'s runs of lines (split at ``...``) appear in ``actual`` in order,
    each run consecutive and the first at the top unless the block starts with ``...``; else
    the first line that does not."""
    at, anchored = 0, True
    for line in expected:
        if line == "...":
            anchored = False
            continue
        found = next((i for i in range(at, len(actual)) if actual[i] == line), None)
        if found is None or (anchored and found != at):
            return line
        at, anchored = found + 1, True
    return None


def test_the_first_day_runs_as_the_page_says(tmp_path: Path) -> None:
    trial = str(tmp_path / "promoter-trial")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GIT_CEILING_DIRECTORIES": str(tmp_path),
        "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.com",
    }  # fmt: skip
    cwd, where = tmp_path, tmp_path / ".cwd"
    ran = steps(first_day())
    assert [c for c, _ in ran][:3] == [
        "promoter init --local /tmp/promoter-trial --environments dev,qa,prod-eu:qa,prod-us:qa",
        "cd /tmp/promoter-trial/control-plane",
        "promoter validate",
    ]
    for command, shown in ran:
        script = command.replace("/tmp/promoter-trial", trial)
        proc = subprocess.run(
            ["bash", "-ec", f'{script}\npwd > "$0"', str(where)],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        output = proc.stdout + proc.stderr
        assert proc.returncode == 0, f"$ {command}\n{output}"
        cwd = Path(where.read_text().strip())
        actual = [normal(line, trial) for line in output.splitlines()]
        missing = shown_in([normal(line, trial) for line in shown], actual)
        assert missing is None, f"$ {command}: the page shows {missing!r}; the run printed:\n{output}"
    assert Path(trial, "merge").is_dir() and cwd == Path(trial, "control-plane")


def test_a_folder_that_is_not_empty_is_refused_and_nothing_is_made(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from promoter.cli.main import cli

    (tmp_path / "kept.txt").write_text("mine\n")
    result = CliRunner().invoke(cli, ["init", "--local", str(tmp_path)])
    assert result.exit_code == 2
    assert (
        result.output.splitlines()[-1]
        == f"error: --local {tmp_path}: exists and is not an empty folder; nothing made"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt"]
    missing = CliRunner().invoke(cli, ["init", "--environments", "dev,prod"])
    assert missing.exit_code == 2 and "--promoter-repo is needed" in missing.output.splitlines()[-1]
