"""CronJob schedules and time zones as the API server reads them (robfig/cron's ParseStandard)."""

from __future__ import annotations

import pytest

from promoter.k8s.cron import schedule_problem, time_zone_problem


@pytest.mark.parametrize(
    "schedule",
    [
        "*/5 * * * *",
        "0 0 * * *",
        "0 9-17/2 * * MON-FRI",
        "30 3 1,15 * ?",
        "0 0 1 jan,jul *",
        "5/15 * * * *",
        "@hourly",
        "@every 1h30m",
        " 0 12 * * 0 ",
    ],
)
def test_schedules_the_api_server_accepts(schedule: str) -> None:
    assert schedule_problem(schedule) is None


@pytest.mark.parametrize(
    ("schedule", "says"),
    [
        ("61 * * * *", "minute '61': '61' is out of the range 0-59"),
        ("* 24 * * *", "hour '24': '24' is out of the range 0-23"),
        ("* * 0 * *", "day of month '0': '0' is out of the range 1-31"),
        ("* * * 13 *", "month '13'"),
        ("* * * * 7", "day of week '7'"),
        ("* * * * FUNDAY", "is not a number or name"),
        ("*/0 * * * *", "the step of a range must be a positive number"),
        ("5-1 * * * *", "the beginning of a range is after its end"),
        ("* * * *", "expected exactly 5 fields"),
        ("0 0 * * * *", "expected exactly 5 fields"),
        ("every day", "expected exactly 5 fields"),
        ("@fortnightly", "unrecognized descriptor"),
        ("@every soon", "unrecognized descriptor"),
        ("CRON_TZ=UTC 0 * * * *", "use the timeZone field instead"),
        ("", "must be a cron schedule"),
    ],
)
def test_schedules_the_api_server_refuses(schedule: str, says: str) -> None:
    problem = schedule_problem(schedule)
    assert problem is not None and says in problem


def test_time_zones_are_iana_names() -> None:
    assert time_zone_problem("Europe/Paris") is None and time_zone_problem("Etc/UTC") is None
    assert "explicit time zone" in str(time_zone_problem("Local"))
    assert "unknown time zone" in str(time_zone_problem("Mars/Olympus_Mons"))
    assert "unknown time zone" in str(time_zone_problem("../etc/passwd"))
