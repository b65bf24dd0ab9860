"""A CronJob's ``schedule`` and ``timeZone`` as the API server reads them: the standard five
fields of robfig/cron's ``ParseStandard`` (minute, hour, day of month, month, day of week; ``*``,
``?``, ranges, steps, lists, month and day names) or a descriptor (``@daily``, ``@every 1h``),
never ``TZ=``/``CRON_TZ=``; the time zone one of the IANA database.
"""

from __future__ import annotations

import re
import zoneinfo
from functools import cache
from typing import Any, NamedTuple

from promoter.k8s.values import GO_DURATION

DESCRIPTORS = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
DAYS = {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}


class Field(NamedTuple):
    name: str
    low: int
    high: int
    names: dict[str, int]  # month or day names, lower case


FIELDS = (
    Field("minute", 0, 59, {}),
    Field("hour", 0, 23, {}),
    Field("day of month", 1, 31, {}),
    Field("month", 1, 12, MONTHS),
    Field("day of week", 0, 6, DAYS),
)
RANGE = re.compile(r"(?P<start>\*|\?|[0-9A-Za-z]+)(?:-(?P<end>[0-9A-Za-z]+))?(?:/(?P<step>[0-9]+))?")


def schedule_problem(value: Any) -> str | None:
    """Why ``value`` is not a schedule the API server accepts, or None."""
    if not isinstance(value, str) or not value.strip():
        return "must be a cron schedule such as '*/5 * * * *' or '@hourly'"
    if "TZ" in value:
        return "cannot use TZ or CRON_TZ in schedule, use the timeZone field instead"
    text = value.strip()
    return _descriptor_problem(text) if text.startswith("@") else _fields_problem(text)


def _descriptor_problem(text: str) -> str | None:
    if text in DESCRIPTORS:
        return None
    every = text.removeprefix("@every ").strip()
    if text.startswith("@every ") and GO_DURATION.fullmatch(every):
        return None
    return f"unrecognized descriptor: {text} (use {', '.join(sorted(DESCRIPTORS))} or @every <duration>)"


def _fields_problem(text: str) -> str | None:
    parts = text.split()
    if len(parts) != len(FIELDS):
        return f"expected exactly 5 fields (minute hour day-of-month month day-of-week), found {len(parts)}"
    for part, field in zip(parts, FIELDS, strict=True):
        said = _field_problem(part, field)
        if said:
            return f"{field.name} {part!r}: {said}"
    return None


def _field_problem(part: str, field: Field) -> str | None:
    for piece in part.split(","):
        said = _piece_problem(piece, field)
        if said:
            return said
    return None


def _piece_problem(piece: str, field: Field) -> str | None:
    """What is wrong with one value, range or step of a field's list, or None."""
    match = RANGE.fullmatch(piece)
    if match is None:
        return f"{piece!r} is not a value, range or step"
    if match["start"] in ("*", "?") and match["end"] is not None:
        return "a range may not start with '*'"
    bounds = _bounds(match, field)
    if bounds is None:
        return f"{piece!r} is not a number{' or name' if field.names else ''}"
    return _range_problem(piece, bounds, match["step"], field)


def _range_problem(piece: str, bounds: tuple[int, int], step: str | None, field: Field) -> str | None:
    """A range must lie within the field's values, in order, with a step above zero."""
    first, last = bounds
    if not field.low <= first <= field.high or not field.low <= last <= field.high:
        return f"{piece!r} is out of the range {field.low}-{field.high}"
    if first > last:
        return f"{piece!r}: the beginning of a range is after its end"
    if step is not None and int(step) == 0:
        return f"{piece!r}: the step of a range must be a positive number"
    return None


def _bounds(match: re.Match[str], field: Field) -> tuple[int, int] | None:
    """The first and last value a piece covers (``*`` all of the field's, a value alone to the
    end with a step); None when one is neither a number nor a name."""
    start, end, step = match["start"], match["end"], match["step"]
    if start in ("*", "?"):
        return field.low, field.high
    first = _value(start, field.names)
    last = _value(end, field.names) if end is not None else (field.high if step else first)
    return None if first is None or last is None else (first, last)


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
