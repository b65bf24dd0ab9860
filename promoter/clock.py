"""Time, injectable so that tests of waiting code never sleep."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float: ...

    def wall(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class RealClock:
    """Monotonic time and real sleeps; ``wall`` is the time of day (seconds since the epoch),
    for the clocks recorded in the repos that span runs (DESIGN section 12)."""

    def now(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


#: Where a FakeClock's time of day starts (2026-01-01T00:00:00Z): fixed, so tests are repeatable.
FAKE_EPOCH = 1_767_225_600.0


class FakeClock:
    """A clock that advances only when something sleeps on it."""

    def __init__(self, start: float = 1000.0) -> None:
        self.t = start
        self.start = start
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    def wall(self) -> float:
        return FAKE_EPOCH + self.t - self.start

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += max(seconds, 0.0)


# Go's time.ParseDuration grammar, as Flux and Argo CD read durations: one or more
# "<decimal><unit>" parts ("1h30m", "1.5h", "2m30.5s", "300ms"); a bare number means seconds.
_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_GO_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_GO_DURATION = re.compile(r"(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def parse_duration(value: object) -> float:
    """Seconds from ``90``, ``"90s"``, ``"1.5m"``, ``"1h30m"``, ``"500ms"`` (Go's duration
    grammar); ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"expected a duration like 30s, 5m or 1h, got {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError(f"a duration cannot be negative: {value!r}")
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if _NUMBER.fullmatch(text):
            return float(text)
        if _GO_DURATION.fullmatch(text):
            return sum(float(number) * _GO_UNITS[unit] for number, unit in _GO_PART.findall(text))
    raise ValueError(f"expected a duration like 30s, 5m or 1h, got {value!r}")


def iso(wall: float) -> str:
    """A time of day as forges write it: ``2026-01-01T00:30:00Z`` (UTC, whole seconds)."""
    return datetime.fromtimestamp(wall, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> float | None:
    """Seconds since the epoch from a forge's ``created_at`` (``...Z`` or ``+00:00``); None if
    it is empty or not a time."""
    try:
        parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


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
