"""Everything the promoter prints goes through one Console, which masks secrets.

On a terminal, progress lines ("waiting 2m10s (7m50s left) ...") replace each other as one live
line, and outcomes are coloured; in a log (not a TTY), each progress line is a line of its own
and nothing is coloured. ``NO_COLOR`` (https://no-color.org) and ``TERM=dumb`` turn colour off.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Mapping
from typing import TextIO

from promoter.errors import one_line, shorten
from promoter.masking import mask

RESET = "\x1b[0m"
COLOURS = {"red": "\x1b[31m", "green": "\x1b[32m", "yellow": "\x1b[33m", "bold-red": "\x1b[1;31m"}
# What a line says about an outcome, and its colour.
_OUTCOMES = (
    (re.compile(r": (FAILED|failure|error)\b"), "bold-red"),
    (re.compile(r": (success)\b"), "green"),
    (re.compile(r": (superseded|held|HELD|dry-run|noop|pending)\b"), "yellow"),
    (re.compile(r"^(warning|error):"), "yellow"),
)


def terminal_width(stream: TextIO) -> int | None:
    """The terminal's width when ``stream`` is one, else None (a log has no width)."""
    return shutil.get_terminal_size().columns if is_terminal(stream) else None


def is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def colour_enabled(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Colour only on a terminal, never with NO_COLOR set (to anything) or TERM=dumb."""
    env = os.environ if environ is None else environ
    return is_terminal(stream) and not env.get("NO_COLOR") and env.get("TERM") != "dumb"


def paint(text: str, colour: str) -> str:
    return f"{COLOURS[colour]}{text}{RESET}"


def colourise(line: str) -> str:
    """The first outcome word of ``line`` in its colour."""
    for pattern, colour in _OUTCOMES:
        match = pattern.search(line)
        if match:
            start, end = match.span(1)
            return line[:start] + paint(line[start:end], colour) + line[end:]
    return line


class Console:
    def __init__(self, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.stream = stream
        self.quiet = quiet
        self.lines: list[str] = []
        self._live = False  # a progress line is on screen, to be replaced

    def _out(self) -> TextIO:
        return self.stream or sys.stdout

    def say(self, line: str) -> None:
        line = one_line(mask(line))
        self.lines.append(line)
        if self.quiet:
            return
        stream = self._out()
        self._clear(stream)
        print(colourise(line) if colour_enabled(stream) else line, file=stream, flush=True)

    def progress(self, line: str) -> None:
        """A line about a wait: on a terminal it replaces the previous progress line; in a log
        it is a line of its own."""
        stream = self._out()
        if self.quiet or not is_terminal(stream):
            self.say(line)
            return
        line = one_line(mask(line))
        self.lines.append(line)
        # Wider than the terminal, the line would wrap and "\r" would clear only its last row.
        width = terminal_width(stream) or len(line) + 1
        stream.write(f"\r\x1b[2K{shorten(line, width - 1)}")
        stream.flush()
        self._live = True

    def _clear(self, stream: TextIO) -> None:
        if self._live:
            stream.write("\r\x1b[2K")
            self._live = False
