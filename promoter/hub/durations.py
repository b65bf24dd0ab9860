"""Durations as a reader says them, on the pages and in what the reads say in words."""

from __future__ import annotations


def duration(seconds: float) -> str:
    """``seconds`` as a reader says it: 45 s, 7 min, 3 h 5 min, 2 days."""
    s = round(abs(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    if s < 86400:
        hours, minutes = divmod(s // 60, 60)
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days = s // 86400
    return f"{days} day{'s' if days != 1 else ''}"
