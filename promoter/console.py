"""Everything the promoter prints goes through one Console, which masks secrets."""

from __future__ import annotations

import sys
from typing import TextIO

from promoter.errors import one_line
from promoter.masking import mask


class Console:
    def __init__(self, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.stream = stream
        self.quiet = quiet
        self.lines: list[str] = []

    def say(self, line: str) -> None:
        line = one_line(mask(line))
        self.lines.append(line)
        if not self.quiet:
            stream = self.stream or sys.stdout
            print(line, file=stream, flush=True)
