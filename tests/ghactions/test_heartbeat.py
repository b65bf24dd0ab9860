"""The heartbeat's variable (promoter/ghactions/heartbeat.py, promoter/forges/github/variables.py):
armed while a promotion waits on time, idle otherwise, through GitHub's Actions variables API."""

from __future__ import annotations

import json
import re

import responses

from promoter.clock import FakeClock
from promoter.ghactions.heartbeat import CRONS, TIME_WAITS, cadence, heartbeat, waits_on_time
from promoter.promotion.report import EnvResult, Report
from promoter.promotion.waiting import Wait

API = "https://api.github.com"
URL = r"https://api\.github\.com(:443)?/repos/acme/cp/actions/variables"
ENV = {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "acme/cp", "PROMOTER_GITHUB_TOKEN": "ghs_t"}


def waiting(what: str, next_check: float | None = 1.0) -> Report:
    wait = Wait(what, "qa", "", 0.0, next_check, "qa: waiting")  # type: ignore[arg-type]
    return Report("promotion", "a" * 40, [EnvResult("qa", "waiting", wait=wait)])


def test_which_waits_keep_it_armed() -> None:
    assert {"bake", "gates", "window"} <= TIME_WAITS
    assert waits_on_time(waiting("bake")) and waits_on_time(waiting("gates"))
    assert not waits_on_time(waiting("approval", None)) and not waits_on_time(waiting("merge", None))
    assert waits_on_time(waiting("merge", 5.0))  # an automatic merge, tried again
    assert not waits_on_time(Report("promotion", "a" * 40, [EnvResult("qa", "held")]))
    assert waits_on_time(waiting("approval", 5.0))  # an approval this run could not ask: the next run asks


def test_a_hold_keeps_it_armed_only_until_its_end_and_a_window_only_if_it_opens() -> None:
    assert waits_on_time(waiting("hold", 4 * 3600.0))  # --until: the heartbeat after it goes on
    assert not waits_on_time(waiting("hold", None))  # until released: the release wakes it
    assert not waits_on_time(waiting("window", None))  # a window that does not open within a year


def test_the_cadence_follows_how_far_away_the_next_check_is() -> None:
    hour = 3600.0
    assert cadence([], 0.0) == "idle"
    assert cadence([None], 0.0) == "armed"  # a polled gate: every ten minutes
    assert cadence([59 * 60.0], 0.0) == "armed"
    assert cadence([hour], 0.0) == "armed-hourly"
    assert cadence([5.9 * hour], 0.0) == "armed-hourly"
    assert cadence([6 * hour], 0.0) == "armed-6h"
    assert cadence([63 * hour, 30 * 60.0], 0.0) == "armed"  # the nearest decides
    assert cadence([63 * hour, None], 0.0) == "armed"
    assert cadence([100.0 + 2 * hour], 100.0) == "armed-hourly"  # from now, not from 0
    assert cadence([-5.0], 0.0) == "armed"  # past due: the next heartbeat
    assert set(CRONS) == {"armed", "armed-hourly", "armed-6h"}


def test_no_heartbeat_comes_more_than_ten_minutes_after_the_next_check() -> None:
    """Whatever the distance, the cadence chosen at each run never steps over the next check by
    more than the ten-minute period: runs at each cadence's period until the check is due."""
    from promoter.ghactions.heartbeat import PERIODS

    for hours in (0.2, 1.0, 4.0, 6.0, 16.0, 63.0, 200.0):
        due, now, runs = hours * 3600.0, 0.0, 0
        while now < due:
            now += PERIODS[cadence([due], now)]
            runs += 1
        assert now - due < 600.0 and runs <= 6 + 6 + hours / 6 + 1, (hours, now - due, runs)


def test_any_environment_waiting_on_time_keeps_it_armed() -> None:
    """In a graph, prod-eu may wait for a person while prod-us bakes."""
    merge = Wait("merge", "prod-eu", "", 0.0, None, "prod-eu: waiting for merge")
    bake = Wait("bake", "prod-us", "", 0.0, 60.0, "prod-us: baking")
    report = Report(
        "promotion",
        "a" * 40,
        [EnvResult("prod-eu", "waiting", wait=merge), EnvResult("prod-us", "waiting", wait=bake)],
    )

    assert report.wait == merge and waits_on_time(report)


@responses.activate
def test_armed_then_created_then_disarmed_in_githubs_shapes() -> None:
    responses.patch(re.compile(URL + "/PROMOTER_HEARTBEAT"), status=404, json={"message": "Not Found"})
    responses.post(re.compile(URL), status=201, json={})
    responses.patch(re.compile(URL + "/PROMOTER_HEARTBEAT"), status=204)
    warned: list[str] = []
    beat = heartbeat("PROMOTER_HEARTBEAT", API, FakeClock(start=0.0), warned.append, ENV)
    beat.arm()  # the variable does not exist yet: created
    beat.arm()  # no second request
    beat.settle(waiting("approval", None), 0.0)
    bodies = [(c.request.method, json.loads(c.request.body or b"")) for c in responses.calls]
    assert bodies == [
        ("PATCH", {"name": "PROMOTER_HEARTBEAT", "value": "armed"}),
        ("POST", {"name": "PROMOTER_HEARTBEAT", "value": "armed"}),
        ("PATCH", {"name": "PROMOTER_HEARTBEAT", "value": "idle"}),
    ]
    assert warned == []


@responses.activate
def test_a_token_without_variables_write_is_a_warning_not_a_failure() -> None:
    body = {"message": "Resource not accessible by integration", "status": "403"}
    responses.patch(re.compile(URL + "/PROMOTER_HEARTBEAT"), status=403, json=body)
    warned: list[str] = []
    beat = heartbeat("PROMOTER_HEARTBEAT", API, FakeClock(start=0.0), warned.append, ENV)
    beat.arm()
    assert len(warned) == 1 and warned[0].startswith("the heartbeat (PROMOTER_HEARTBEAT) stays as it was: ")
    assert "ghs_t" not in warned[0]


def test_outside_actions_or_without_a_name_it_does_nothing() -> None:
    for name, env in (("PROMOTER_HEARTBEAT", {}), ("", ENV)):
        beat = heartbeat(name, API, FakeClock(start=0.0), print, env)
        beat.arm()  # no request: responses is not active, a request would go out and fail
        assert beat.value is None
