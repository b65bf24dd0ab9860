"""Where each notification's delivery stands (DESIGN section 13: at least once), in the record
on ``refs/promoter/notifications``: pure functions over its JSON document, which
``notify.Notifier`` reads and writes with compare-and-swap (``records.Records``).

The document (``record.json``)::

    {
      "events": {
        "done:dev:3a539a4c...": {
          "event": {"kind": "done", "environment": "dev", "wave": null, "mainCommit": "3a53...",
                    "message": "dev: done", "at": 1795726353.0, "url": null},
          "receivers": {
            "chat": {"state": "sent", "attempts": 1, "at": 1795726354.0},
            "audit": {"state": "failed", "attempts": 2, "first": 1795726354.0,
                      "next": 1795726536.0, "error": "HTTP 503"}
          },
          "at": 1795726416.0
        }
      },
      "sent": ["held:prod:None:1795720000"]
    }

Each event key holds the event's data (what a retry sends again: the same body, ``at`` and
``key`` included) and, for each receiver that wants it, its delivery:

- ``sending``: a run claimed it at ``since`` and is sending it. A claim older than ``LEASE`` is a
  run that died before it recorded the answer: the delivery is due again.
- ``failed``: the receiver did not answer 2xx (or its variable was not set); due again at
  ``next``: ``FIRST_RETRY`` after the first failure, doubling, at most ``LONGEST_RETRY`` apart.
- ``sent``: the receiver answered 2xx; never sent again.
- ``dropped``: not acknowledged within ``GIVE_UP`` of its ``first`` attempt; never sent again.

``attempts`` counts the requests made, ``first`` is the time of the first, ``at`` (of a delivery
and of the event) the time of the last change. The event's data goes once every delivery is
sent or dropped, and of the finished events the newest ``KEPT_EVENTS`` stay. ``sent`` holds the
keys of the first record format (recorded before sending, each sent once): every receiver had
its one try of those.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

DeliveryState = Literal["sending", "failed", "sent", "dropped"]
#: How long a run's claim of a delivery holds: a run that sends waits at most its timeout for
#: the answers, so an older claim is a run that died.
LEASE = 120.0
FIRST_RETRY = 60.0
LONGEST_RETRY = 3600.0
#: After this long since its first attempt, a delivery is dropped with a warning.
GIVE_UP = 24 * 3600.0
KEPT_EVENTS = 2000
#: Whether the receiver of this name wants an event of these data (a receiver no longer in the
#: Pipeline wants none: what it still had pending goes).
Wants = Callable[[str, Mapping[str, Any]], bool]


@dataclass(frozen=True)
class Due:
    """One request a run makes now: ``attempt`` of delivering event ``key`` to ``receiver``."""

    key: str
    receiver: str
    event: Mapping[str, Any]
    attempt: int
    since: float  # the claim's time


@dataclass(frozen=True)
class Outcome:
    """What became of a delivery: sent (no ``problem``), due again at ``retry_at``, or dropped
    (a ``problem`` and no ``retry_at``) after ``attempts`` since ``first``."""

    key: str
    receiver: str
    problem: str | None
    retry_at: float | None
    attempts: int
    first: float


def retry_delay(attempts: int) -> float:
    """How long after its ``attempts``-th failed request a delivery is due again."""
    return min(FIRST_RETRY * 2.0 ** min(max(attempts - 1, 0), 32), LONGEST_RETRY)


def claim(
    doc: dict[str, Any],
    fresh: Mapping[str, Mapping[str, Any]],
    receivers: Sequence[str],
    wants: Wants,
    now: float,
) -> tuple[list[Due], list[Outcome]]:
    """Record in ``doc`` a delivery for each receiver that wants an event of ``fresh`` (events'
    data by key) and has none yet, and claim every delivery due now: those new ones, failed
    ones whose ``next`` has come and claims that ran out. The claims, and the deliveries
    dropped because their time is up; the document is worth writing only when there are any
    (what else changed, a delivery of a receiver gone, goes with the next write)."""
    events = _events(doc)
    _add(events, fresh, set(_legacy(doc)), receivers, wants)
    due: list[Due] = []
    dropped: list[Outcome] = []
    for key, entry in events.items():
        before = len(due) + len(dropped)
        _claim_event(key, entry, wants, now, due, dropped)
        if len(due) + len(dropped) > before:
            _tidy(entry, now)
    return due, dropped


def _claim_event(
    key: str, entry: dict[str, Any], wants: Wants, now: float, due: list[Due], dropped: list[Outcome]
) -> None:
    """Claim one event's deliveries due now (into ``due``), drop those whose time is up (into
    ``dropped``) and forget those of receivers gone."""
    data = entry.get("event")
    for name, d in list(entry["receivers"].items()):
        at = _due_at(d)
        if at is None:
            continue
        if not isinstance(data, dict) or not wants(name, data):
            del entry["receivers"][name]  # its receiver is gone: nothing to send it
        elif now - _num(d, "first", now) >= GIVE_UP:
            dropped.append(_drop(entry, key, name, d, str(d.get("error") or "no answer"), now))
        elif at <= now:
            due.append(_lease(entry, key, name, d, now))


def settle(doc: dict[str, Any], answers: Sequence[tuple[Due, str | None]], now: float) -> list[Outcome]:
    """Record the answers to this run's claims (a problem, or None for 2xx): sent, due again
    after ``retry_delay``, or dropped when that is past ``GIVE_UP``. A claim another run took
    over meanwhile is that run's to record."""
    events = _events(doc)
    outcomes: list[Outcome] = []
    for due, problem in answers:
        entry = events.get(due.key)
        d = entry["receivers"].get(due.receiver) if entry else None
        if entry is None or d is None or d.get("state") != "sending" or _num(d, "since") != due.since:
            continue
        first = _num(d, "first", due.since)
        if problem is None:
            entry["receivers"][due.receiver] = {"state": "sent", "attempts": due.attempt, "at": now}
            outcomes.append(Outcome(due.key, due.receiver, None, None, due.attempt, first))
        elif now + retry_delay(due.attempt) - first >= GIVE_UP:
            outcomes.append(_drop(entry, due.key, due.receiver, d, problem, now))
        else:
            retry_at = now + retry_delay(due.attempt)
            entry["receivers"][due.receiver] = {
                "state": "failed",
                "attempts": due.attempt,
                "first": first,
                "next": retry_at,
                "error": problem,
            }
            outcomes.append(Outcome(due.key, due.receiver, problem, retry_at, due.attempt, first))
        _tidy(entry, now)
    _trim(doc)
    return outcomes


def next_due(doc: Mapping[str, Any], wants: Wants) -> float | None:
    """When the earliest pending delivery (of a receiver that still wants it) is due: a failed
    one's ``next``, or when a claim runs out; None when none is pending."""
    times = []
    events = doc.get("events")
    for entry in events.values() if isinstance(events, dict) else ():
        data = entry.get("event") if isinstance(entry, dict) else None
        receivers = entry.get("receivers") if isinstance(data, dict) else None
        for name, d in receivers.items() if isinstance(receivers, dict) else ():
            at = _due_at(d)
            if at is not None and wants(name, data):  # type: ignore[arg-type]
                times.append(at)
    return min(times, default=None)


def _new_receivers(
    entry: dict[str, Any], data: Mapping[str, Any], receivers: Sequence[str], wants: Wants
) -> list[str]:
    """The receivers that want the event (as recorded, else ``data``) and have no delivery of it."""
    known = entry["receivers"]
    return [name for name in receivers if name not in known and wants(name, entry.get("event") or data)]


def _add(
    events: dict[str, dict[str, Any]],
    fresh: Mapping[str, Mapping[str, Any]],
    legacy: set[str],
    receivers: Sequence[str],
    wants: Wants,
) -> None:
    """A new delivery (due at once) for each receiver that wants a fresh event and has none."""
    for key, data in fresh.items():
        if key in legacy:
            continue
        entry = events.get(key) or {"receivers": {}}
        known = entry["receivers"]
        new = _new_receivers(entry, data, receivers, wants)
        if new:
            entry.setdefault("event", dict(data))
            known.update({name: {"state": "failed", "attempts": 0} for name in new})  # no next: due now
            events[key] = entry


def _lease(entry: dict[str, Any], key: str, name: str, d: Mapping[str, Any], now: float) -> Due:
    attempt = int(_num(d, "attempts", 0)) + 1
    claimed: dict[str, Any] = {"state": "sending", "since": now, "attempts": attempt}
    claimed["first"] = _num(d, "first", now)
    if d.get("error"):
        claimed["error"] = d["error"]  # the last one, until this attempt's answer
    entry["receivers"][name] = claimed
    return Due(key, name, entry["event"], attempt, now)


def _drop(
    entry: dict[str, Any], key: str, name: str, d: Mapping[str, Any], problem: str, now: float
) -> Outcome:
    attempts = int(_num(d, "attempts", 0))
    first = _num(d, "first", now)
    entry["receivers"][name] = {
        "state": "dropped",
        "attempts": attempts,
        "first": first,
        "at": now,
        "error": problem,
    }
    return Outcome(key, name, problem, None, attempts, first)


def _due_at(d: Any) -> float | None:
    """When an unfinished delivery is due (a new one, failed without a `next`: at once), None
    for a finished one."""
    state = d.get("state") if isinstance(d, dict) else None
    if state == "sending":
        return _num(d, "since") + LEASE
    if state == "failed":
        return _num(d, "next")
    return None


def _tidy(entry: dict[str, Any], now: float) -> None:
    """An event every delivery of which is finished keeps no data; its ``at`` is when it last changed."""
    if all(_due_at(d) is None for d in entry["receivers"].values()):
        entry.pop("event", None)
    entry["at"] = now


def _trim(doc: dict[str, Any]) -> None:
    """Of the finished events, the newest ``KEPT_EVENTS`` stay (the first format's keys go first)."""
    events = _events(doc)
    finished = sorted((_num(e, "at"), key) for key, e in events.items() if "event" not in e)
    for _, key in finished[: max(len(events) - KEPT_EVENTS, 0)]:
        del events[key]
    legacy = _legacy(doc)
    room = max(KEPT_EVENTS - len(events), 0)
    if len(legacy) > room:
        doc["sent"] = legacy[len(legacy) - room :]


def _events(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The document's events, those a hand could have broken left out."""
    found = doc.get("events")
    events = {
        key: entry
        for key, entry in (found.items() if isinstance(found, dict) else ())
        if isinstance(entry, dict) and isinstance(entry.get("receivers"), dict)
    }
    doc["events"] = events
    return events


def _legacy(doc: Mapping[str, Any]) -> list[str]:
    sent = doc.get("sent")
    return [k for k in sent if isinstance(k, str)] if isinstance(sent, list) else []


def _num(d: Mapping[str, Any], name: str, default: float = 0.0) -> float:
    value = d.get(name)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default
