"""One error boundary: every failure the user should understand is a PromoterError.

The CLI maps `exit_code` to the process exit status (DESIGN section 9). Each layer
translates its library's exceptions at its edge with ``raise ... from err``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

# C0 and C1 controls, DEL, and the characters Unicode or terminals treat as line breaks: a file
# name or a rendered value holding one could forge a second "error:" line or drive a terminal.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text: str) -> str:
    """``text`` as one printable line: every control character escaped (``\\n``, ``\\x1b``).
    The one formatter for every line the promoter prints about its input."""
    return _CONTROL.sub(_escape, text)


def shorten(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters: cut after the last whole word that fits, with
    "..." saying so (a word longer than the room is cut inside)."""
    if len(text) <= width or width < 4:
        return text[: max(width, 0)]
    room = max(width - 3, 0)
    cut = text[: room + 1].rsplit(" ", 1)[0] if " " in text[: room + 1] else text[:room]
    return cut[:room].rstrip(" ,;:") + "..."


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


class PromoterError(Exception):
    """Base of every error the promoter reports to its user."""

    exit_code = 3


class InputError(PromoterError, ValueError):
    """Bad input: a control-plane file, a template, a flag. Exit 2."""

    exit_code = 2

    def __init__(
        self, message: str, *, file: str | None = None, line: int | None = None, column: int | None = None
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.column = column if line else None
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.file:
            spot = f":{self.line}" + (f":{self.column}" if self.column else "") if self.line else ""
            where = f"{self.file}{spot}: "
        return f"{where}{self.message}"


class ConfigError(InputError):
    """A control-plane object is invalid."""


class TemplateError(InputError):
    """A template does not compile, render, or produce valid YAML."""


class SchemaError(InputError):
    """Merged config violates a ConfigSchema."""


class UsageError(InputError):
    """A command-line flag or argument is wrong."""


class PromotionFailed(PromoterError):
    """The promotion did not go through: gate failed or timed out, merge refused. Exit 1."""

    exit_code = 1


class GateFailed(PromotionFailed):
    """A health gate reported failure; ``outcomes`` holds every gate's last observation."""

    def __init__(self, message: str, outcomes: Sequence[object] = ()) -> None:
        super().__init__(message)
        self.outcomes = list(outcomes)


class GateTimedOut(GateFailed):
    """A health gate did not pass before the environment's timeout."""


class MergeRefused(PromotionFailed):
    """The forge refused the merge, or a human closed the promotion unmerged."""


class ChecksFailed(MergeRefused):
    """A check on the promotion PR (``prChecks``) failed, or did not pass before the timeout; the
    PR is left unmerged. ``checks`` holds the checks that counted."""

    def __init__(self, message: str, checks: Sequence[object] = ()) -> None:
        super().__init__(message)
        self.checks = list(checks)


class Superseded(PromotionFailed):
    """A newer main commit took over this environment's promotion."""


class GitError(PromoterError):
    """A git command failed (push rejected, ref missing, remote unreachable). Exit 1."""

    exit_code = 1


class ForgeError(PromoterError):
    """The forge (GitHub, local) failed or refused a request. Exit 1."""

    exit_code = 1


class InputErrors(InputError):
    """Several independent problems of the input, found in one run (issue 48: every problem at
    once): each is an InputError with its file and line; ``str`` is the first, ``lines()`` all of
    them, at most ``LIMIT`` and then how many more. Exit 2."""

    LIMIT = 20
    problems: tuple[InputError, ...]

    def __init__(self, problems: Sequence[InputError]) -> None:
        flat: list[InputError] = []
        for problem in problems:
            flat.extend(problem.problems if isinstance(problem, InputErrors) else [problem])
        self.problems = tuple(flat)
        first = self.problems[0]
        super().__init__(first.message, file=first.file, line=first.line, column=first.column)

    def lines(self) -> list[str]:
        shown = [str(p) for p in self.problems[: self.LIMIT]]
        more = len(self.problems) - self.LIMIT
        return shown + ([f"... and {more} more problem{'s' if more > 1 else ''}"] if more > 0 else [])


class Problems:
    """Collects the independent problems of a load: ``with problems.each():`` around one file,
    object or branch swallows its InputError and goes on to the next; ``done()`` raises them
    all (one alone as itself)."""

    def __init__(self) -> None:
        self.found: list[InputError] = []

    @contextmanager
    def each(self) -> Iterator[None]:
        try:
            yield
        except InputError as err:
            self.found.append(err)

    def add(self, err: InputError) -> None:
        self.found.append(err)

    def done(self) -> None:
        if len(self.found) == 1:
            raise self.found[0]
        if self.found:
            raise InputErrors(self.found)
