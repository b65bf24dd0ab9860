"""The run's trace (``-v``): each git command and GitHub request as it ends, with its outcome and
time, on stderr, for a user who wants to see what a run did to the repos and the API. Callers pass
text already masked (``promoter.masking.mask``): this module sits below it."""

from __future__ import annotations

from collections.abc import Callable

_say: Callable[[str], None] | None = None
#: A traced line's longest length: a git command with a long list of operands is cut.
WIDTH = 240


def enable(say: Callable[[str], None] | None) -> None:
    """Trace to ``say`` from now on (None: stop)."""
    global _say
    _say = say


def enabled() -> bool:
    return _say is not None


def note(what: str, outcome: str, seconds: float) -> None:
    """``trace: git push ... (exit 0, 35 ms)``, when tracing; ``what`` masked by the caller."""
    if _say is None:
        return
    text = what if len(what) <= WIDTH else what[: WIDTH - 3] + "..."
    _say(f"trace: {text} ({outcome}, {seconds * 1000:.0f} ms)")
