"""A CronJob's ``schedule`` and ``timeZone`` as the API server reads them: the standard five
fields of robfig/cron's ``ParseStandard`` (minute, hour, day of month, month, day of week; ``*``,
``?``, ranges, steps, lists, month and day names) or a descriptor (``@daily``, ``@every 1h``),
never ``TZ=``/``CRON_TZ=``; the time zone one of the IANA database.
"""

from __future__ import annotations

import re
import zoneinfo
from functools import cache
from typing import Any

from promoter.k8s.values import GO_DURATION

DESCRIPTORS = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
DAYS = {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
# name, low, high, names
FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, MONTHS),
    ("day of week", 0, 6, DAYS),
)
RANGE = re.compile(r"(?P<start>\*|\?|[0-9A-Za-z]+)(?:-(?P<end>[0-9A-Za-z]+))?(?:/(?P<step>[0-9]+))?")


def schedule_problem(value: Any) -> str | None:
    """Why ``value`` is not a schedule the API server accepts, or None."""
    if not isinstance(value, str) or not value.strip():
        return "must be a cron schedule such as '*/5 * * * *' or '@hourly'"
    if "TZ" in value:
        return "cannot use TZ or CRON_TZ in schedule, use the timeZone field instead"
    text = value.strip()
    if text.startswith("@"):
        if text in DESCRIPTORS:
            return None
        every = text.removeprefix("@every ").strip()
        if text.startswith("@every ") and GO_DURATION.fullmatch(every):
            return None
        return f"unrecognized descriptor: {text} (use {', '.join(sorted(DESCRIPTORS))} or @every <duration>)"
    parts = text.split()
    if len(parts) != len(FIELDS):
        return f"expected exactly 5 fields (minute hour day-of-month month day-of-week), found {len(parts)}"
    for part, field in zip(parts, FIELDS, strict=True):
        said = _field_problem(part, field)
        if said:
            return f"{field[0]} {part!r}: {said}"
    return None


def _field_problem(part: str, field: tuple[str, int, int, dict[str, int]]) -> str | None:
    _, low, high, names = field
    for piece in part.split(","):
        match = RANGE.fullmatch(piece)
        if match is None:
            return f"{piece!r} is not a value, range or step"
        start, end, step = match["start"], match["end"], match["step"]
        if start in ("*", "?"):
            if end is not None:
                return "a range may not start with '*'"
            first, last = low, high
        else:
            start_value = _value(start, names)
            end_value = _value(end, names) if end is not None else (high if step else start_value)
            if start_value is None or end_value is None:
                return f"{piece!r} is not a number{' or name' if names else ''}"
            first, last = start_value, end_value
        if not low <= first <= high or not low <= last <= high:
            return f"{piece!r} is out of the range {low}-{high}"
        if first > last:
            return f"{piece!r}: the beginning of a range is after its end"
        if step is not None and int(step) == 0:
            return f"{piece!r}: the step of a range must be a positive number"
    return None


def _value(text: str, names: dict[str, int]) -> int | None:
    if text.isdigit():
        return int(text)
    return names.get(text.lower())


@cache
def time_zone_problem(value: Any) -> str | None:
    """Why ``value`` is not an IANA time zone name, or None."""
    if not isinstance(value, str) or not value or value.lower() == "local":
        return "must be an explicit time zone as defined in https://www.iana.org/time-zones"
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return "unknown time zone: not in the IANA time zone database"
    return None
