"""The Pipeline's change-control fields (DESIGN section 13): ``windows`` of an environment or a
wave, and ``spec.notifications``; strict, with file:line errors like every other field."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from promoter.controlplane.fields import Fields
from promoter.model import (
    NOTIFY_EVENTS,
    Environment,
    GateSpec,
    NotifyEvent,
    Receiver,
    Source,
    WindowRule,
    Windows,
)

DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_HOURS = re.compile(r"([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-4]):([0-5]\d)")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def windows_from(f: Fields) -> Windows | None:
    """``windows``: ``timeZone``, and ``allow`` / ``deny`` lists of rules."""
    w = f.fields("windows")
    if w is None:
        return None
    zone = w.str("timeZone", required=True)
    assert zone is not None
    _check_zone(w, zone)
    allow = tuple(_rule(Fields(item, w.file, path, line)) for path, line, item in w.items("allow"))
    deny = tuple(_rule(Fields(item, w.file, path, line)) for path, line, item in w.items("deny"))
    w.done()
    if not allow and not deny:
        w.fail("needs allow or deny rules (or no windows field: always open)")
    return Windows(zone, allow, deny, Source(w.file, w.line))


def _check_zone(w: Fields, zone: str) -> None:
    """``zone`` must be an IANA time zone; a wrong case is told its right one."""
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        near = [z for z in sorted(available_timezones()) if z.lower() == zone.lower()]
        hint = f" (did you mean {near[0]}?)" if near else " (an IANA name such as Europe/Berlin or UTC)"
        w.fail(f"unknown time zone {zone!r}{hint}", "timeZone")


def _rule(r: Fields) -> WindowRule:
    days = _days(r)
    hours = _hours(r)
    dates = _dates(r)
    reason = r.text("reason", default="") or ""
    r.done()
    if days is None and hours is None and dates is None:
        r.fail("needs days, hours or dates")
    return WindowRule(days, hours, dates, reason.strip(), r.line)


def _days(r: Fields) -> frozenset[int] | None:
    """``days: Mon-Fri`` or ``[Mon, Wed, Sat-Sun]``."""
    given = r.strings("days")
    if given is None:
        return None
    found: set[int] = set()
    for item in given:
        first, _, last = item.strip().partition("-")
        for name in (first, last or first):
            if name.strip().title()[:3] not in DAYS or len(name.strip()) < 3:
                r.fail(
                    f"{item!r}: days are Mon, Tue, Wed, Thu, Fri, Sat, Sun, or a range like Mon-Fri", "days"
                )
        a, b = DAYS.index(first.strip().title()[:3]), DAYS.index((last or first).strip().title()[:3])
        found |= set(range(a, b + 1)) if a <= b else set(range(a, 7)) | set(range(0, b + 1))
    return frozenset(found)


def _hours(r: Fields) -> tuple[int, int] | None:
    """``hours: "09:00-17:00"`` (24-hour clock; ``22:00-06:00`` runs overnight)."""
    text = r.str("hours")
    if text is None:
        return None
    m = _HOURS.fullmatch(text.replace(" ", ""))
    if m is None:
        r.fail(f"{text!r}: hours are HH:MM-HH:MM on a 24-hour clock, like 09:00-17:00", "hours")
    start, end = int(m[1]) * 60 + int(m[2]), int(m[3]) * 60 + int(m[4])
    if end > 1440 or start == end:
        r.fail(f"{text!r}: the end must differ from the start and be at most 24:00", "hours")
    return start, end


def _dates(r: Fields) -> tuple[tuple[date, date], ...] | None:
    """``dates: 2026-12-24`` or ``["2026-12-20..2027-01-04", 2026-05-01]`` (ranges inclusive)."""
    value = r.get("dates")
    if value is None:
        return None
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        first, _, last = str(item).partition("..")
        try:
            a = date.fromisoformat(first.strip())
            b = date.fromisoformat(last.strip()) if last else a
        except ValueError:
            r.fail(f"{item!r}: dates are YYYY-MM-DD or a range YYYY-MM-DD..YYYY-MM-DD", "dates")
        if b < a:
            r.fail(f"{item!r}: the range ends before it starts", "dates")
        out.append((a, b))
    if not out:
        r.fail("must name at least one date or range", "dates")
    return tuple(out)


def notifications_from(spec: Fields, environments: tuple[str, ...]) -> tuple[Receiver, ...]:
    """``spec.notifications``: receivers, each ``slack`` or ``webhook``."""
    receivers: list[Receiver] = []
    for path, line, item in spec.items("notifications"):
        n = Fields(item, spec.file, path, line)
        receiver = _receiver(n, environments)
        if any(r.name == receiver.name for r in receivers):
            n.fail(f"receiver {receiver.name!r} is listed twice", "name")
        receivers.append(receiver)
    return tuple(receivers)


def _receiver(n: Fields, environments: tuple[str, ...]) -> Receiver:
    name = n.name("name")
    slack, webhook = n.fields("slack"), n.fields("webhook")
    if (slack is None) == (webhook is None):
        n.fail("needs exactly one of slack or webhook")
    events = _events(n)
    envs = tuple(n.strings("environments") or ())
    for env in envs:
        if env not in environments:
            n.fail(f"no environment {env!r} (the Pipeline has {', '.join(environments)})", "environments")
    n.done()
    source = Source(n.file, n.line)
    if slack is not None:
        url_from = _variable(slack, "urlFrom", required=True)
        slack.done()
        return Receiver(name, "slack", None, url_from, None, events, envs, source)
    assert webhook is not None
    url = webhook.str("url", required=True)
    assert url is not None
    if not url.startswith(("https://", "http://")):
        webhook.fail(f"{url!r}: must be an http:// or https:// URL", "url")
    secret_from = _variable(webhook, "secretFrom", required=False)
    webhook.done()
    return Receiver(name, "webhook", url, None, secret_from, events, envs, source)


def _variable(f: Fields, key: str, *, required: bool) -> str | None:
    """The name of an environment variable holding a secret (never the secret itself)."""
    value = f.str(key, required=required)
    if value is not None and not _ENV_NAME.fullmatch(value):
        f.fail(
            f"{value!r}: names the environment variable that holds the secret, like SLACK_WEBHOOK_URL", key
        )
    return value


def _events(n: Fields) -> tuple[NotifyEvent, ...]:
    given = n.strings("events")
    if given is None:
        return NOTIFY_EVENTS
    chosen: list[NotifyEvent] = []
    for event in given:
        match = next((e for e in NOTIFY_EVENTS if e == event), None)
        if match is None:
            n.fail(f"unknown event {event!r}; known: {', '.join(NOTIFY_EVENTS)}", "events")
        chosen.append(match)
    return tuple(chosen)


def withhold_receivers(
    environments: list[Environment], receivers: tuple[Receiver, ...]
) -> tuple[Environment, ...]:
    """The environments, each command gate of theirs (and of their waves) told to keep the
    receivers' variables (``urlFrom``, ``secretFrom``) from its commands: a receiver's URL or
    key never reaches a gate command, whatever the environment the promoter runs in."""
    names = tuple(sorted({v for r in receivers for v in (r.url_from, r.secret_from) if v}))
    if not names:
        return tuple(environments)

    def gates(specs: tuple[GateSpec, ...]) -> tuple[GateSpec, ...]:
        return tuple(replace(g, withheld=names) if g.type == "command" else g for g in specs)

    return tuple(
        replace(
            e,
            gates=gates(e.gates),
            waves=tuple(replace(w, gates=None if w.gates is None else gates(w.gates)) for w in e.waves),
        )
        for e in environments
    )
