"""``promoter demo``'s output fits a screen: one line per environment or wave step (``-v`` for
every step), no line wider than the terminal, and next steps that run as printed."""

from __future__ import annotations

import io
import shlex
import sys
from pathlib import Path

import pytest

from promoter.demos import promotion as demo
from promoter.demos.promotion import DemoConsole, next_steps
from promoter.errors import shorten

RUN = [
    "demo: building the sample control plane and platform repo in /tmp/x",
    'promoting main 8006c4ecc9b7 "Gate every environment on the hub" to dev, qa, prod',
    "dev: rendered 12 files for 4 assignments on 3 cluster types (+12 ~0 -0) from main 8006c4e, dev@f89576e",
    "dev: pushed promoter/dev at 41c446be49c4",
    "dev: gate hub 6/6 clusters (east-large 2/2, edge 2/2, west-small 2/2): success (" + "x " * 100 + ")",
    "dev: success in 2.2s",
    "prod: 2 waves: canary (edge), fleet (east-large, west-small)",
    "prod: wave canary (1/2): merged e6acd2ed0216 into prod",
    "prod: wave canary (1/2): passed; baking 2.0s before the next wave",
    "prod: wave fleet (2/2): FAILED: gate soak 3.0s: failure",
    "prod: FAILED: gate soak 3.0s: failure",
]
KEPT = [RUN[0], RUN[1], RUN[5], RUN[6], RUN[8], RUN[9], RUN[10]]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_one_line_per_environment_or_wave_step() -> None:
    out = io.StringIO()
    console = DemoConsole(verbose=False)
    console.stream = out
    for line in RUN:
        console.say(line)
    console.progress("dev: waiting 1.0s (1m58s left), gate hub 0/6 clusters: pending")
    assert out.getvalue().splitlines() == KEPT
    assert console.lines[:3] == RUN[:3]  # what was left out of the screen is still known


def test_verbose_prints_every_step() -> None:
    out = io.StringIO()
    console = DemoConsole(verbose=True)
    console.stream = out
    for line in RUN:
        console.say(line)
    assert out.getvalue().splitlines() == RUN


def test_on_a_terminal_no_line_is_wider_than_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.setenv("NO_COLOR", "1")
    out = Terminal()
    console = DemoConsole(verbose=False)
    console.stream = out
    for line in RUN:
        console.say(line)
    screen = [row.rsplit("\r\x1b[2K", 1)[-1] for row in out.getvalue().split("\n")]
    assert max(len(row) for row in screen) < 60
    assert "dev: success in 2.2s" in screen
    assert any(row.endswith("...") for row in screen)


def test_shorten_cuts_at_a_word() -> None:
    text = "hub 6/6 clusters: success; command promoter check-platform: success; soak 2.0s: success"
    assert shorten(text, 40) == "hub 6/6 clusters: success; command..."
    assert shorten(text, len(text)) == text
    assert len(shorten("x" * 50, 10)) == 10


def test_next_steps_run_as_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    script = tmp_path / ".venv" / "bin" / "promoter"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [".venv/bin/promoter", "demo"])
    monkeypatch.setenv("PATH", "/nonexistent")  # the virtualenv is not on PATH
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "hub.sqlite3").write_bytes(b"")
    steps = next_steps(
        tmp_path / "demo", tmp_path / "demo" / "control-plane", tmp_path / "demo" / "platform.git"
    )
    commands = [shlex.split(s) for s in steps if s.strip() and not s.strip().startswith(("#", "demo:"))]
    assert commands == [
        [".venv/bin/promoter", "status", "--control-plane", "demo/control-plane"],
        ["git", "-C", "demo/platform.git", "log", "--oneline", "--graph", "--all"],
        [".venv/bin/promoter", "hub", "serve", "--database", "demo/hub.sqlite3", "--demo-clusters"],
    ]
    monkeypatch.setenv("PATH", str(script.parent))
    assert demo.promoter_command() == "promoter"  # on PATH, the short name works
