"""Notifications (DESIGN section 13), at least once: each event of a run goes to each of the
Pipeline's receivers that wants it until that receiver answered 2xx, never once per run.

Each event has a key (what happened, where, to which main commit). Before sending, a run claims
each delivery, an (event, receiver) pair, on ``refs/promoter/notifications`` of the
control-plane repo with a compare-and-swap, so two runs that see the same event do not both
send it; after the answers it records each: sent, or failed and due again after a backoff (1
minute, doubling, at most an hour apart), or dropped with one warning line once it was not
acknowledged within 24 hours of its first attempt (``deliveries`` holds the record's format
and the schedule). Any later run that notifies (``promote``, ``hold``, ``release``) sends what is
due; ``Notifier.next_retry`` says when that is. A retry sends the recorded event again: the same
body, ``key`` and ``at``, so the same signature. Events come from recorded state (a run's report
says again what an interrupted run did not get to tell), so what a killed run missed is sent by
the next; only a run killed between sending and recording sends twice (its claim runs out after
two minutes), and receivers drop such a duplicate by its ``key``.

A receiver that is down changes nothing for the promotion: every request has a short timeout, all
are sent at once and waited for at most that long together, and a failure is one warning line.
A receiver whose variable is not set fails like one that is down. URLs and HMAC keys come from
environment variables and are masked in output.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.error
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import dataclass
from typing import Any

from promoter.changecontrol.deliveries import Due, Outcome, claim, next_due, settle
from promoter.changecontrol.records import Records
from promoter.clock import iso
from promoter.errors import ConfigError, PromoterError
from promoter.masking import NOTIFICATIONS_ENV, mask, name_value_lines, register_secret
from promoter.model import NOTIFY_EVENTS, NotifyEvent, Receiver

NOTIFICATIONS_REF = "refs/promoter/notifications"
SCHEMA = "promoter.notification/v1"
SIGNATURE_HEADER = "X-Promoter-Signature"
TIMEOUT = 5.0


@dataclass(frozen=True)
class Event:
    kind: NotifyEvent
    environment: str
    wave: str | None
    main_commit: str | None
    message: str
    at: float
    key: str
    url: str | None = None

    def to_json(self, pipeline: str) -> dict[str, Any]:
        """The generic webhook's body (docs/change-control.md#notifications)."""
        return {
            "schema": SCHEMA,
            "event": self.kind,
            "pipeline": pipeline,
            "environment": self.environment,
            "wave": self.wave,
            "mainCommit": self.main_commit,
            "message": self.message,
            "at": iso(self.at),
            "url": self.url,
            "key": self.key,
        }

    def text(self, pipeline: str) -> str:
        """One line for a chat: ``[platform] prod: held ...``."""
        commit = f" (main {self.main_commit[:12]})" if self.main_commit else ""
        link = f" {self.url}" if self.url else ""
        return f"[{pipeline}] {self.kind}: {self.message}{commit}{link}"

    def record(self) -> dict[str, Any]:
        """What the record keeps of the event (its key aside): enough to send it again as it was."""
        return {
            "kind": self.kind,
            "environment": self.environment,
            "wave": self.wave,
            "mainCommit": self.main_commit,
            "message": self.message,
            "at": self.at,
            "url": self.url,
        }

    @classmethod
    def from_record(cls, key: str, data: Mapping[str, Any]) -> Event | None:
        """The event ``record`` kept; None when the data are not one (a hand edited them)."""
        kind = next((k for k in NOTIFY_EVENTS if k == data.get("kind")), None)
        if kind is None or not _is_event_record(data):
            return None
        return cls(
            kind,
            data["environment"],
            data.get("wave"),
            data.get("mainCommit"),
            data["message"],
            float(data["at"]),
            key,
            data.get("url"),
        )


def _is_event_record(data: Mapping[str, Any]) -> bool:
    """Whether the fields of a record have an event's types: texts, optional texts, and a time
    that is a number (not a bool)."""
    texts = all(isinstance(data.get(name), str) for name in ("environment", "message"))
    optional = all(
        data.get(name) is None or isinstance(data.get(name), str) for name in ("wave", "mainCommit", "url")
    )
    at = data.get("at")
    return texts and optional and isinstance(at, int | float) and not isinstance(at, bool)


def sign(secret: str, body: bytes) -> str:
    """``sha256=<hex>``: HMAC-SHA256 of the exact body with the receiver's key."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


Post = Callable[[str, bytes, Mapping[str, str], float], None]


def post(url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> None:
    """POST ``body``; returns when the receiver answered 2xx, else raises ``HTTPError`` (for a
    redirect too: followed, the POST would arrive as a GET without its body) or ``OSError``."""
    import urllib.request  # heavy (12 ms with http.client and ssl; a local promotion never loads it): only when notifying

    class Refuse(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None  # urllib then raises HTTPError with the 3xx code

    request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
    with urllib.request.build_opener(Refuse).open(request, timeout=timeout) as answer:
        answer.read(65536)


class Notifier:
    """Sends a run's events to the receivers that want them until each acknowledged them, and
    what earlier runs could not deliver when it is due again."""

    def __init__(
        self,
        pipeline: str,
        receivers: Sequence[Receiver],
        records: Records | None,
        say: Callable[[str], None],
        environ: Mapping[str, str],
        *,
        timeout: float = TIMEOUT,
        transport: Post = post,
        wall: Callable[[], float] = time.time,
        alarm: Callable[[str], None] | None = None,
    ) -> None:
        """``alarm``: where a record that cannot be written is said (default ``say``): the
        run's summary, as an error, in GitHub Actions (a token without Contents write)."""
        self.pipeline = pipeline
        self.alarm = alarm or say
        self.receivers = {r.name: r for r in receivers}
        self.records = records
        self.say = say
        self.environ = environ
        self.timeout = timeout
        self.transport = transport
        self.wall = wall

    def send(self, events: Sequence[Event]) -> list[Event]:
        """Send each event to each receiver that wants it and has not acknowledged it, and the
        deliveries of earlier events that are due again; the events sent now (each once, an
        earlier one as it was recorded). Never raises: a problem is a warning line."""
        fresh = {e.key: e for e in events if self._wanting(e)}
        if self.records is None:
            return self._send_unrecorded(fresh)
        if not self.receivers:
            return []
        return self._send_recorded(self.records, fresh)

    def _send_unrecorded(self, fresh: Mapping[str, Event]) -> list[Event]:
        """Without a record: each event once to each receiver that wants it, failures warned of."""
        now = self.wall()
        self._deliver([Due(e.key, r, e.record(), 1, now) for e in fresh.values() for r in self._wanting(e)])
        return list(fresh.values())

    def _send_recorded(self, records: Records, fresh: Mapping[str, Event]) -> list[Event]:
        """Claim what is due (the fresh events and earlier ones due again), send it, record the
        answers; the events sent."""
        try:
            due = self._claim(records, fresh)
        except PromoterError as err:
            self.alarm(f"notifications not sent: cannot record them: {mask(str(err))}")
            return []
        self._record(records, self._deliver(due))
        sent = {d.key: Event.from_record(d.key, d.event) for d in due}
        return [e for e in sent.values() if e is not None]

    def next_retry(self) -> float | None:
        """When the earliest notification still pending is due again (seconds since the epoch,
        maybe past), from the record: what a run that ends with nothing else to wait for keeps
        its heartbeat armed for. None when none is pending (or the record cannot be read)."""
        if self.records is None:
            return None
        try:
            return next_due(self.records.read(), self._wants_data)
        except PromoterError:
            return None

    def _wants(self, receiver: Receiver, event: Event) -> bool:
        return event.kind in receiver.events and (
            not receiver.environments or event.environment in receiver.environments
        )

    def _wanting(self, event: Event) -> list[str]:
        return [name for name, r in self.receivers.items() if self._wants(r, event)]

    def _wants_data(self, name: str, data: Mapping[str, Any]) -> bool:
        receiver = self.receivers.get(name)
        event = Event.from_record("", data)
        return receiver is not None and event is not None and self._wants(receiver, event)

    def _claim(self, records: Records, fresh: Mapping[str, Event]) -> list[Due]:
        """Claim what is due now (compare-and-swap); the claims. Deliveries whose time is up are
        dropped, each with a warning line."""
        claimed: list[Due] = []
        dropped: list[Outcome] = []
        now = self.wall()
        data = {key: e.record() for key, e in fresh.items()}

        def change(doc: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
            due, gone = claim(doc, data, list(self.receivers), self._wants_data, now)
            claimed[:], dropped[:] = due, gone
            if not due and not gone:
                return None
            lines = "\n".join(f"- {d.receiver}: {d.key} (attempt {d.attempt})" for d in due)
            return doc, f"notify: send {len(due)}, drop {len(gone)}\n\n{lines}".rstrip()

        records.update(change)
        for outcome in dropped:
            self.say(_dropped(outcome))
        return claimed

    def _record(self, records: Records, answers: list[tuple[Due, str | None]]) -> None:
        """Record the answers (compare-and-swap) and warn of each failure."""
        if not answers:
            return
        outcomes: list[Outcome] = []
        now = self.wall()

        def change(doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
            outcomes[:] = settle(doc, answers, now)
            lines = "\n".join(f"- {o.receiver}: {o.key}: {_state(o)}" for o in outcomes)
            return doc, f"notify: {sum(o.problem is None for o in outcomes)} sent\n\n{lines}".rstrip()

        try:
            records.update(change)
        except PromoterError as err:
            self.alarm(
                f"notifications sent but not recorded (a later run sends them again): {mask(str(err))}"
            )
            return
        for o in outcomes:
            if o.problem is not None:
                self.say(_dropped(o) if o.retry_at is None else _failed(o))

    def _deliver(self, due: list[Due]) -> list[tuple[Due, str | None]]:
        """All requests at once, waited for at most ``timeout`` together: each with what went
        wrong, or None when the receiver answered 2xx. Without a record, a failure is a warning."""
        if not due:
            return []
        pool = ThreadPoolExecutor(max_workers=min(8, len(due)), thread_name_prefix="promoter-notify")
        futures = {pool.submit(self._one, d): d for d in due}
        done, _ = wait_for(futures, timeout=self.timeout + 1)
        pool.shutdown(wait=False, cancel_futures=True)
        late = f"did not answer in {self.timeout:g}s"
        answers = [(d, f.result() if f in done else late) for f, d in futures.items()]
        for d, problem in answers if self.records is None else ():
            if problem:
                self.say(f"warning: notification to {d.receiver} failed: {mask(problem)}")
        return answers

    def _one(self, due: Due) -> str | None:
        """Send one request; what went wrong (masked: the record keeps it), or None."""
        problem = self._problem(due)
        return None if problem is None else mask(problem)

    def _problem(self, due: Due) -> str | None:
        event = Event.from_record(due.key, due.event)
        try:
            if event is None:
                raise _Unset("its recorded data is not an event")
            url, body, headers = self._request(self.receivers[due.receiver], event)
            self.transport(url, body, headers, self.timeout)
        except _Unset as err:
            return str(err)
        except urllib.error.HTTPError as err:
            return f"HTTP {err.code}"
        except (OSError, ValueError) as err:
            return type(err).__name__ + (f": {err.reason}" if isinstance(err, urllib.error.URLError) else "")
        return None

    def _request(self, receiver: Receiver, event: Event) -> tuple[str, bytes, dict[str, str]]:
        headers = {"Content-Type": "application/json", "User-Agent": "promoter"}
        if receiver.kind == "slack":
            url = self._secret(receiver.url_from)
            body = json.dumps({"text": event.text(self.pipeline)}).encode()
            return url, body, headers
        assert receiver.url is not None
        body = json.dumps(event.to_json(self.pipeline), sort_keys=True).encode()
        if receiver.secret_from:
            headers[SIGNATURE_HEADER] = sign(self._secret(receiver.secret_from), body)
        return receiver.url, body, headers

    def _secret(self, variable: str | None) -> str:
        value = variable_value(variable or "", self.environ)
        if not value:
            raise _Unset(f"${variable} is not set")
        register_secret(value)
        return value


def _failed(o: Outcome) -> str:
    again = iso(o.retry_at or 0)
    return f"warning: notification to {o.receiver} failed: {o.problem}; a later run tries again from {again}"


def _dropped(o: Outcome) -> str:
    return (
        f"warning: notification to {o.receiver} dropped: {o.key} was not acknowledged in "
        f"{o.attempts} attempt(s) since {iso(o.first)} (last: {o.problem or 'no answer'})"
    )


def _state(o: Outcome) -> str:
    if o.problem is None:
        return "sent"
    return f"{o.problem}, dropped" if o.retry_at is None else f"{o.problem}, again from {iso(o.retry_at)}"


def variable_value(name: str, environ: Mapping[str, str]) -> str:
    """A receiver's variable: from the environment, else from ``$PROMOTER_NOTIFICATIONS_ENV``."""
    return environ.get(name, "") or secrets_block(environ).get(name, "")


def unset_variables(receivers: Sequence[Receiver], environ: Mapping[str, str]) -> list[ConfigError]:
    """Each variable a receiver names (``urlFrom``, ``secretFrom``) that is set neither in
    ``environ`` nor in its ``$PROMOTER_NOTIFICATIONS_ENV``: an error at the receiver's line
    naming the field, the variable and the receiver (``promoter validate --receivers``)."""
    problems = []
    for i, r in enumerate(receivers):
        for field, name in (("urlFrom", r.url_from), ("secretFrom", r.secret_from)):
            if name and not variable_value(name, environ):
                message = (
                    f"spec.notifications[{i}].{r.kind}.{field}: ${name} is not set, in the environment "
                    f"or in ${NOTIFICATIONS_ENV}: receiver {r.name} would be sent nothing"
                )
                problems.append(ConfigError(message, file=r.source.file, line=r.source.line))
    return problems


def secrets_block(environ: Mapping[str, str]) -> dict[str, str]:
    """``$PROMOTER_NOTIFICATIONS_ENV``: lines ``NAME=value`` (blank lines and ``#`` comments
    skipped), the receivers' variables in one secret, as the reusable workflow passes them (it
    cannot pass secrets it does not name). A variable of the environment itself wins."""
    lines = name_value_lines(environ.get(NOTIFICATIONS_ENV, ""))
    return {name: value for _, name, sep, value in lines if sep and name}


class _Unset(Exception):
    """A receiver's secret is missing from the environment (or its event from the record)."""
