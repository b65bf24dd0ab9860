"""Waiting shows elapsed and remaining time: on a terminal as one live line, in a log as a line
per interval; colour only on a terminal and never with NO_COLOR."""

from __future__ import annotations

import io

import pytest

from promoter.console import Console, colour_enabled, colourise


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_in_a_log_each_progress_line_is_a_plain_line() -> None:
    log = io.StringIO()
    console = Console(stream=log)
    console.progress("prod: waiting 10s (9m50s left), merge (manual): waiting for a human")
    console.progress("prod: waiting 20s (9m40s left), merge (manual): waiting for a human")
    console.say("prod: success in 25s")
    assert log.getvalue() == (
        "prod: waiting 10s (9m50s left), merge (manual): waiting for a human\n"
        "prod: waiting 20s (9m40s left), merge (manual): waiting for a human\n"
        "prod: success in 25s\n"
    )


def test_on_a_terminal_progress_is_one_live_line_and_outcomes_are_coloured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    tty = Terminal()
    console = Console(stream=tty)
    console.progress("prod: waiting 10s (9m50s left)")
    console.progress("prod: waiting 20s (9m40s left)")
    console.say("prod: success in 25s")
    assert tty.getvalue() == (
        "\r\x1b[2Kprod: waiting 10s (9m50s left)"
        "\r\x1b[2Kprod: waiting 20s (9m40s left)"
        "\r\x1b[2Kprod: \x1b[32msuccess\x1b[0m in 25s\n"
    )
    assert console.lines[-1] == "prod: success in 25s"  # what is recorded carries no colour


@pytest.mark.parametrize(
    ("environ", "expected"), [({}, True), ({"NO_COLOR": "1"}, False), ({"TERM": "dumb"}, False)]
)
def test_colour_needs_a_terminal_and_no_no_color(environ: dict[str, str], expected: bool) -> None:
    assert colour_enabled(Terminal(), environ) is expected
    assert colour_enabled(io.StringIO(), {}) is False


def test_failures_are_red_and_warnings_yellow() -> None:
    assert colourise("qa: FAILED: gate x") == "qa: \x1b[1;31mFAILED\x1b[0m: gate x"
    assert colourise("warning: edits not read") == "\x1b[33mwarning\x1b[0m: edits not read"
    assert colourise("dev: rendered 12 files") == "dev: rendered 12 files"


def test_progress_is_masked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GH_TOKEN", "gho_secret0123456789abc")
    tty = Terminal()
    Console(stream=tty).progress("waiting with gho_secret0123456789abc")
    assert "gho_secret" not in tty.getvalue()
