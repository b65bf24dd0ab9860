"""The notification record's deliveries, as pure functions over its document: claims and their
lease, the retry schedule and its bound, what a later run finds due."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from promoter.changecontrol import deliveries
from promoter.changecontrol.deliveries import (
    FIRST_RETRY,
    GIVE_UP,
    LEASE,
    Due,
    claim,
    next_due,
    retry_delay,
    settle,
)

T0 = 1_800_000_000.0
DONE = {"kind": "done", "environment": "dev", "wave": None, "mainCommit": "c" * 40, "message": "dev: done"}
DONE = {**DONE, "at": T0, "url": None}
KEY = "done:dev:" + "c" * 40


def everyone(name: str, data: Mapping[str, Any]) -> bool:
    return True


def offer(doc: dict[str, Any], now: float, receivers: tuple[str, ...] = ("chat", "audit")) -> list[Due]:
    due, dropped = claim(doc, {KEY: DONE}, receivers, everyone, now)
    assert dropped == []
    return due


def test_the_retry_schedule_doubles_from_a_minute_to_an_hour() -> None:
    assert [retry_delay(n) for n in range(1, 10)] == [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]
    assert retry_delay(10_000) == 3600  # no overflow however long it went on


def test_a_fresh_event_is_claimed_once_for_each_receiver_that_wants_it() -> None:
    doc: dict[str, Any] = {}
    due, dropped = claim(doc, {KEY: DONE}, ("chat", "audit"), lambda name, _: name == "chat", T0)
    assert (due, dropped) == ([Due(KEY, "chat", DONE, 1, T0)], [])
    assert doc["events"][KEY]["receivers"] == {
        "chat": {"state": "sending", "since": T0, "attempts": 1, "first": T0}
    }
    assert doc["events"][KEY]["event"] == DONE
    # another run at the same time finds it claimed, and so does one within the lease
    assert offer(json.loads(json.dumps(doc)), T0) == [Due(KEY, "audit", DONE, 1, T0)]
    assert claim(doc, {KEY: DONE}, ("chat",), everyone, T0 + LEASE - 1) == ([], [])


def test_a_claim_that_ran_out_is_a_run_that_died_and_is_sent_again() -> None:
    doc: dict[str, Any] = {}
    offer(doc, T0)
    later = {**DONE, "at": T0 + LEASE}  # the next run's report says it again, later
    due, _ = claim(doc, {KEY: later}, ("chat", "audit"), everyone, T0 + LEASE)
    assert [(d.receiver, d.attempt, d.event["at"]) for d in due] == [("chat", 2, T0), ("audit", 2, T0)]


def test_a_failed_delivery_is_due_after_its_backoff_and_a_sent_one_never_again() -> None:
    doc: dict[str, Any] = {}
    chat, audit = offer(doc, T0)
    outcomes = settle(doc, [(chat, None), (audit, "HTTP 503")], T0 + 1)
    assert [(o.receiver, o.problem, o.retry_at) for o in outcomes] == [
        ("chat", None, None),
        ("audit", "HTTP 503", T0 + 1 + FIRST_RETRY),
    ]
    assert doc["events"][KEY]["receivers"]["audit"] == {
        "state": "failed",
        "attempts": 1,
        "first": T0,
        "next": T0 + 1 + FIRST_RETRY,
        "error": "HTTP 503",
    }
    assert next_due(doc, everyone) == T0 + 1 + FIRST_RETRY
    assert offer(doc, T0 + FIRST_RETRY) == []  # not yet
    (again,) = offer(doc, T0 + 1 + FIRST_RETRY)
    assert (again.receiver, again.attempt, again.event) == ("audit", 2, DONE)
    settle(doc, [(again, None)], T0 + 62)
    assert "event" not in doc["events"][KEY]  # every delivery is done: its data goes
    assert offer(doc, T0 + 10_000) == [] and next_due(doc, everyone) is None


def test_a_delivery_not_acknowledged_within_the_bound_is_dropped_once() -> None:
    doc: dict[str, Any] = {}
    (due,) = offer(doc, T0, ("audit",))
    now = T0
    attempts = 0
    while True:
        attempts += 1
        (outcome,) = settle(doc, [(due, "HTTP 503")], now)
        if outcome.retry_at is None:
            break
        now = outcome.retry_at
        (due,) = offer(doc, now, ("audit",))
    assert (outcome.receiver, outcome.key, outcome.attempts, outcome.first) == ("audit", KEY, attempts, T0)
    assert now - T0 < GIVE_UP and attempts == 29  # 7 doubling retries, then hourly for the rest of the day
    assert doc["events"][KEY]["receivers"]["audit"]["state"] == "dropped"
    assert offer(doc, now + 1, ("audit",)) == [] and next_due(doc, everyone) is None


def test_a_delivery_whose_time_ran_out_between_runs_is_dropped_not_sent() -> None:
    doc: dict[str, Any] = {}
    (due,) = offer(doc, T0, ("audit",))
    settle(doc, [(due, "HTTP 503")], T0)
    due_now, dropped = claim(doc, {}, ("audit",), everyone, T0 + GIVE_UP)  # no run for a day
    assert due_now == [] and [(o.receiver, o.problem, o.retry_at) for o in dropped] == [
        ("audit", "HTTP 503", None)
    ]


def test_the_pending_deliveries_of_a_receiver_gone_go_with_it() -> None:
    doc: dict[str, Any] = {}
    chat, audit = offer(doc, T0)
    settle(doc, [(chat, "HTTP 503"), (audit, "HTTP 503")], T0)
    chat_only = lambda name, _: name == "chat"  # noqa: E731
    assert next_due(doc, chat_only) == T0 + FIRST_RETRY
    due, _ = claim(doc, {}, ("chat",), chat_only, T0 + FIRST_RETRY)
    assert [d.receiver for d in due] == ["chat"] and list(doc["events"][KEY]["receivers"]) == ["chat"]


def test_the_first_formats_keys_count_as_sent_to_everyone() -> None:
    doc: dict[str, Any] = {"sent": [KEY]}
    assert offer(doc, T0) == [] and KEY not in doc["events"]


def test_an_answer_to_a_claim_another_run_took_over_is_that_runs_to_record() -> None:
    doc: dict[str, Any] = {}
    (mine,) = offer(doc, T0, ("chat",))
    (theirs,) = offer(doc, T0 + LEASE, ("chat",))  # this run looked dead
    settle(doc, [(theirs, None)], T0 + LEASE + 1)
    assert settle(doc, [(mine, "did not answer in 5s")], T0 + LEASE + 2) == []
    assert doc["events"][KEY]["receivers"]["chat"]["state"] == "sent"


def test_the_newest_finished_events_stay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deliveries, "KEPT_EVENTS", 3)
    doc: dict[str, Any] = {"sent": ["v1:a", "v1:b"]}
    for i in range(5):
        due, _ = claim(doc, {f"k{i}": DONE}, ("chat",), everyone, T0 + i)
        settle(doc, [(d, None) for d in due], T0 + i)
    assert sorted(doc["events"]) == ["k2", "k3", "k4"] and doc["sent"] == []


def test_a_record_a_hand_broke_is_read_as_far_as_it_goes() -> None:
    doc: dict[str, Any] = {"events": {"x": "not an entry", "y": {"receivers": {"chat": {"state": "failed"}}}}}
    assert next_due(doc, everyone) is None  # y has no event data to send
    assert offer(doc, T0, ("chat",)) == [Due(KEY, "chat", DONE, 1, T0)]
    assert "x" not in doc["events"] and doc["events"]["y"]["receivers"] == {}
