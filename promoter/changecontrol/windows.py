"""Change windows (DESIGN section 13): whether a time of day is inside an environment's (and a
wave's) windows, and when a closed window opens.

Rules are read in the window's own zone, in wall-clock time, as a person reads a calendar: a
window of 09:00-17:00 opens at 09:00 local time on both sides of a daylight-saving change (the
day it changes is an hour shorter or longer in UTC). A local time that a spring-forward skips
(02:30 in Europe/Berlin on the last Sunday of March) is reached at the jump (03:00); one that a
fall-back repeats counts from its first occurrence.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from promoter.model import WindowRule, Windows

DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
#: How far ahead an opening is looked for: a window closed for longer never opens.
HORIZON_DAYS = 400


@dataclass(frozen=True)
class Closed:
    """A closed window: why, since when and until when (seconds since the epoch; ``opens`` None
    when it does not open within ``HORIZON_DAYS``)."""

    reason: str
    since: float
    opens: float | None
    zone: str

    def local(self, when: float) -> str:
        """``2026-12-21 09:00 Europe/Berlin (08:00Z)``."""
        moment = datetime.fromtimestamp(when, ZoneInfo(self.zone))
        utc = datetime.fromtimestamp(when, UTC)
        return f"{moment:%Y-%m-%d %H:%M} {self.zone} ({utc:%Y-%m-%dT%H:%MZ})"

    def describe(self) -> str:
        opens = f"opens {self.local(self.opens)}" if self.opens is not None else "does not open within a year"
        return f"outside its change window ({self.reason}); {opens}"


def describe(windows: Windows) -> str:
    """``Europe/Berlin: allowed Mon-Fri 09:00-17:00; denied 2026-12-21..2027-01-04 (freeze)``."""
    parts = [f"allowed {', '.join(_rule_text(r) for r in windows.allow)}"] if windows.allow else []
    if windows.deny:
        parts.append(f"denied {', '.join(_rule_text(r) for r in windows.deny)}")
    return f"{windows.zone}: {'; '.join(parts)}"


def _rule_text(rule: WindowRule) -> str:
    words = []
    if rule.days is not None:
        words.append(",".join(DAY_NAMES[d] for d in sorted(rule.days)))
    if rule.hours is not None:
        start, end = rule.hours
        words.append(f"{start // 60:02d}:{start % 60:02d}-{end // 60:02d}:{end % 60:02d}")
    for first, last in rule.dates or ():
        words.append(first.isoformat() if first == last else f"{first}..{last}")
    return " ".join(words) + (f" ({rule.reason})" if rule.reason else "")


def rule_matches(rule: WindowRule, moment: datetime) -> bool:
    """Whether ``moment`` (local, aware) falls in ``rule``. An overnight ``hours`` (22:00-02:00)
    belongs to the day it starts on: its days and dates are those of the evening."""
    day = _window_day(rule.hours, moment)
    if day is None or (rule.days is not None and day.weekday() not in rule.days):
        return False
    return rule.dates is None or any(first <= day <= last for first, last in rule.dates)


def _window_day(hours: tuple[int, int] | None, moment: datetime) -> date | None:
    """The day whose ``hours`` (minutes of the day, start and end) hold ``moment``: the day
    before in the small hours of an overnight window; None when they do not hold it."""
    if hours is None:
        return moment.date()
    start, end = hours
    minute = moment.hour * 60 + moment.minute
    overnight = end <= start
    if overnight and minute < end:
        return moment.date() - timedelta(days=1)  # the small hours of a window started yesterday
    if start <= minute < end or (overnight and minute >= start):
        return moment.date()
    return None


def closed_by(windows: Windows, when: float) -> str | None:
    """Why ``windows`` are closed at ``when`` (a deny rule's reason, or that no allowed window
    holds it); None when they are open."""
    moment = datetime.fromtimestamp(when, ZoneInfo(windows.zone))
    denied = next((r for r in windows.deny if rule_matches(r, moment)), None)
    if denied is not None:
        return denied.reason or "a denied window"
    if windows.allow and not any(rule_matches(r, moment) for r in windows.allow):
        return "outside the allowed hours"
    return None


def closed(all_windows: tuple[Windows, ...], when: float) -> Closed | None:
    """The windows that apply (an environment's, then a wave's: all must be open), closed at
    ``when``: why, since when and when they all open again; None when open."""
    reasons = [(w, r) for w in all_windows if (r := closed_by(w, when)) is not None]
    if not reasons:
        return None
    first, reason = reasons[0]
    since = _last_change(all_windows, when)
    opens = next((t for t in _boundaries(all_windows, when, 1) if _open(all_windows, t)), None)
    return Closed(reason, since, opens, first.zone)


def _open(all_windows: tuple[Windows, ...], when: float) -> bool:
    return all(closed_by(w, when) is None for w in all_windows)


def _last_change(all_windows: tuple[Windows, ...], when: float) -> float:
    """When the windows last closed: the latest boundary before ``when`` at which they were
    open just before (``when`` itself if they were closed as far back as the horizon)."""
    previous = when
    for t in _boundaries(all_windows, when, -1):
        if _open(all_windows, t - 1):
            return t
        previous = t
    return previous


def _boundaries(all_windows: tuple[Windows, ...], when: float, direction: int) -> Iterator[float]:
    """Every instant after (``direction`` 1) or at or before (-1) ``when`` at which a rule may
    start or stop matching: each local midnight and each rule's hours, day by day."""
    for day_offset in range(HORIZON_DAYS):
        instants: set[float] = set()
        for w in all_windows:
            zone = ZoneInfo(w.zone)
            day = datetime.fromtimestamp(when, zone).date() + timedelta(days=day_offset * direction)
            for minute in _minutes(w):
                instants.add(_instant(day, minute, zone))
        ordered = sorted(instants, reverse=direction < 0)
        yield from (t for t in ordered if (t > when if direction > 0 else t <= when))


def _minutes(windows: Windows) -> set[int]:
    found = {0}
    for rule in (*windows.allow, *windows.deny):
        if rule.hours is not None:
            found |= {rule.hours[0] % 1440, rule.hours[1] % 1440}
    return found


def _instant(day: date, minute: int, zone: ZoneInfo) -> float:
    """The first instant the local clock shows ``day`` ``minute`` (or, in a spring-forward gap,
    the instant the clock jumps over it)."""
    local = datetime.combine(day, time(minute // 60, minute % 60), zone)
    instant = local.timestamp()  # fold 0: the earlier of a repeated time, past a gap's end
    back = datetime.fromtimestamp(instant, zone)
    if (back.hour, back.minute) != (local.hour, local.minute):  # in the gap: the jump itself
        jump = back.replace(minute=0, second=0)
        return jump.timestamp()
    return instant
