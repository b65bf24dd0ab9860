"""Time, injectable so that tests of waiting code never sleep."""

from __future__ import annotations

import re
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class RealClock:
    """Monotonic time and real sleeps."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class FakeClock:
    """A clock that advances only when something sleeps on it."""

    def __init__(self, start: float = 1000.0) -> None:
        self.t = start
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += max(seconds, 0.0)


_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$")


def parse_duration(value: object) -> float:
    """Seconds from ``90``, ``"90s"``, ``"30m"``, ``"1h30m"``, ``"500ms"``; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"expected a duration like 30s, 5m or 1h, got {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError(f"a duration cannot be negative: {value!r}")
        return float(value)
    if isinstance(value, str):
        if re.fullmatch(r"\d+(\.\d+)?", value.strip()):
            return float(value)
        match = _DURATION.match(value.strip())
        if match and any(match.groups()):
            h, m, s, ms = (float(g) if g else 0.0 for g in match.groups())
            return h * 3600 + m * 60 + s + ms / 1000
    raise ValueError(f"expected a duration like 30s, 5m or 1h, got {value!r}")


def format_duration(seconds: float) -> str:
    """``75.2`` -> ``"1m15s"``; short and stable for progress lines."""
    total = int(seconds)
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h{m:02d}m{s:02d}s"
    if m:
        return f"{m}m{s:02d}s"
    return f"{seconds:.1f}s" if seconds < 10 else f"{s}s"
