"""Change windows read as a person reads a calendar: in their zone's wall-clock time, across
daylight-saving changes, with the time they open and since when they are closed."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from promoter.changecontrol.windows import closed, closed_by
from promoter.model import Source, WindowRule, Windows

MON_FRI = frozenset(range(5))


def rule(
    days: frozenset[int] | None = None, hours: tuple[int, int] | None = None, dates=None, reason: str = ""
) -> WindowRule:  # type: ignore[no-untyped-def]
    return WindowRule(days, hours, dates, reason)


def business(zone: str = "Europe/Berlin") -> Windows:
    return Windows(zone, (rule(MON_FRI, (9 * 60, 17 * 60)),), (), Source("promoter.yaml", 7))


def at(text: str, zone: str = "UTC") -> float:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(zone)).timestamp()


def utc(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%dT%H:%MZ")


def test_business_hours_open_and_close_in_the_zone() -> None:
    w = business()
    assert closed_by(w, at("2026-11-26T10:00", "Europe/Berlin")) is None  # a Thursday
    assert closed_by(w, at("2026-11-26T17:00", "Europe/Berlin")) == "outside the allowed hours"
    found = closed((w,), at("2026-11-27T18:30", "Europe/Berlin"))  # Friday evening
    assert found is not None
    assert utc(found.since) == "2026-11-27T16:00Z"  # 17:00 in Berlin (CET, +1)
    assert found.opens is not None and utc(found.opens) == "2026-11-30T08:00Z"  # Monday 09:00
    assert found.describe() == (
        "outside its change window (outside the allowed hours); opens 2026-11-30 09:00 Europe/Berlin (2026-11-30T08:00Z)"
    )


def test_the_same_local_hours_in_another_zone_are_other_instants() -> None:
    when = at("2026-11-26T15:00")  # 10:00 in New York, 16:00 in Berlin, 00:00 next day in Tokyo
    assert closed((business("America/New_York"),), when) is None
    assert closed((business("Europe/Berlin"),), when) is None
    tokyo = closed((business("Asia/Tokyo"),), when)
    assert tokyo is not None and tokyo.opens is not None and utc(tokyo.opens) == "2026-11-27T00:00Z"


def test_a_window_opens_at_its_local_hour_across_a_spring_forward() -> None:
    # Europe/Berlin moves from +1 to +2 on Sunday 2026-03-29: Monday's 09:00 is 07:00Z, not 08:00Z.
    found = closed((business(),), at("2026-03-27T18:00", "Europe/Berlin"))
    assert found is not None and found.opens is not None
    assert utc(found.opens) == "2026-03-30T07:00Z"
    assert utc(found.since) == "2026-03-27T16:00Z"


def test_a_window_opens_at_its_local_hour_across_a_fall_back() -> None:
    # America/New_York moves from -4 to -5 on Sunday 2026-11-01.
    found = closed((business("America/New_York"),), at("2026-10-30T20:00", "America/New_York"))
    assert found is not None and found.opens is not None
    assert utc(found.opens) == "2026-11-02T14:00Z"


def test_a_time_the_spring_forward_skips_opens_at_the_jump() -> None:
    nightly = Windows("Europe/Berlin", (rule(None, (2 * 60 + 30, 4 * 60)),), (), Source("p", 1))
    found = closed((nightly,), at("2026-03-29T00:30", "Europe/Berlin"))
    assert found is not None and found.opens is not None
    # 02:30 does not exist that night: the window opens when the clocks jump (03:00 CEST, 01:00Z)
    assert utc(found.opens) == "2026-03-29T01:00Z"
    assert closed((nightly,), found.opens) is None


def test_a_year_end_freeze_denies_inside_the_allowed_hours() -> None:
    freeze = rule(dates=((date(2026, 12, 21), date(2027, 1, 4)),), reason="year-end freeze")
    w = Windows("Europe/Berlin", business().allow, (freeze,), Source("p", 1))
    found = closed((w,), at("2026-12-22T10:00", "Europe/Berlin"))
    assert found is not None and found.reason == "year-end freeze"
    assert utc(found.since) == "2026-12-18T16:00Z"  # closed since Friday 17:00, the freeze follows
    assert found.opens is not None and utc(found.opens) == "2027-01-05T08:00Z"  # Tuesday after


def test_an_overnight_window_belongs_to_the_evening_it_starts() -> None:
    friday_night = Windows("UTC", (rule(frozenset({4}), (22 * 60, 2 * 60)),), (), Source("p", 1))
    assert closed_by(friday_night, at("2026-11-27T23:00")) is None  # Friday 23:00
    assert closed_by(friday_night, at("2026-11-28T01:00")) is None  # Saturday 01:00: Friday's night
    assert closed_by(friday_night, at("2026-11-28T23:00")) is not None  # Saturday's evening


def test_a_wave_window_applies_with_its_environment() -> None:
    mornings = Windows("UTC", (rule(None, (6 * 60, 12 * 60)),), (), Source("p", 2))
    found = closed((business("UTC"), mornings), at("2026-11-26T13:00"))
    assert found is not None and found.opens is not None
    assert utc(found.opens) == "2026-11-27T09:00Z"  # both open: 09:00 the next weekday


@pytest.mark.parametrize("zone", ["UTC", "Australia/Lord_Howe"])
def test_a_window_that_never_opens_says_so(zone: str) -> None:
    never = Windows(zone, (), (rule(MON_FRI | {5, 6}, reason="closed for good"),), Source("p", 1))
    found = closed((never,), at("2026-11-26T10:00"))
    assert found is not None and found.opens is None
    assert found.describe().endswith("does not open within a year")
