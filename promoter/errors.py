"""One error boundary: every failure the user should understand is a PromoterError.

The CLI maps `exit_code` to the process exit status (DESIGN section 9). Each layer
translates its library's exceptions at its edge with ``raise ... from err``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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


class Superseded(PromotionFailed):
    """A newer main commit took over this environment's promotion."""


class GitError(PromoterError):
    """A git command failed (push rejected, ref missing, remote unreachable). Exit 1."""

    exit_code = 1


class ForgeError(PromoterError):
    """The forge (GitHub, local) failed or refused a request. Exit 1."""

    exit_code = 1
