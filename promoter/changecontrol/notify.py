"""Notifications (DESIGN section 13): once per event, to the Pipeline's receivers, never once per
run. Each event has a key (what happened, where, to which main commit); the keys sent are
recorded on ``refs/promoter/notifications`` of the control-plane repo *before* sending, with a
compare-and-swap, so two runs that see the same event send it once, and a heartbeat that sees
it again sends nothing.

A receiver that is down changes nothing: every request has a short timeout, all are sent at
once and waited for at most that long together, nothing is retried, and a failure is one
warning line. URLs and HMAC keys come from environment variables and are masked in output.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from promoter.changecontrol.records import Records
from promoter.clock import iso
from promoter.errors import PromoterError
from promoter.masking import NOTIFICATIONS_ENV, mask, name_value_lines, register_secret
from promoter.model import NotifyEvent, Receiver

NOTIFICATIONS_REF = "refs/promoter/notifications"
SCHEMA = "promoter.notification/v1"
SIGNATURE_HEADER = "X-Promoter-Signature"
TIMEOUT = 5.0
#: Keys kept in the record (older ones drop out; an event that old does not come back).
KEPT_KEYS = 2000


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


def sign(secret: str, body: bytes) -> str:
    """``sha256=<hex>``: HMAC-SHA256 of the exact body with the receiver's key."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


Post = Callable[[str, bytes, Mapping[str, str], float], None]


def post(url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> None:
    import urllib.request  # heavy (a thirtieth of a second, http and ssl): loads only when notifying

    request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        answer.read(65536)


class Notifier:
    """Sends a run's events to the receivers that want them, each event once."""

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
    ) -> None:
        self.pipeline = pipeline
        self.receivers = tuple(receivers)
        self.records = records
        self.say = say
        self.environ = environ
        self.timeout = timeout
        self.transport = transport

    def send(self, events: Sequence[Event]) -> list[Event]:
        """Send the events not sent before; those sent now. Never raises."""
        wanted = [e for e in events if any(self._wants(r, e) for r in self.receivers)]
        if not wanted:
            return []
        try:
            fresh = self._claim(wanted)
        except PromoterError as err:
            self.say(f"warning: notifications not sent: cannot record them: {mask(str(err))}")
            return []
        jobs = [(r, e) for e in fresh for r in self.receivers if self._wants(r, e)]
        self._deliver(jobs)
        return fresh

    def _wants(self, receiver: Receiver, event: Event) -> bool:
        return event.kind in receiver.events and (
            not receiver.environments or event.environment in receiver.environments
        )

    def _claim(self, events: list[Event]) -> list[Event]:
        """Record the keys of the events not recorded yet (compare-and-swap); those events."""
        if self.records is None:
            return events
        claimed: list[Event] = []

        def change(doc: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
            sent = [k for k in doc.get("sent", []) if isinstance(k, str)]
            known = set(sent)
            claimed[:] = [e for e in dict((e.key, e) for e in events).values() if e.key not in known]
            if not claimed:
                return None
            keys = (sent + [e.key for e in claimed])[-KEPT_KEYS:]
            lines = "\n".join(f"- {e.kind} {e.environment}: {e.message}" for e in claimed)
            return {**doc, "sent": keys}, f"notify {len(claimed)} event(s)\n\n{lines}"

        self.records.update(change)
        return claimed

    def _deliver(self, jobs: list[tuple[Receiver, Event]]) -> None:
        """All requests at once; waited for at most ``timeout`` together, never retried."""
        if not jobs:
            return
        from concurrent.futures import ThreadPoolExecutor  # loads only when notifying
        from concurrent.futures import wait as wait_for  # loads only when notifying

        pool = ThreadPoolExecutor(max_workers=min(8, len(jobs)), thread_name_prefix="promoter-notify")
        futures = {pool.submit(self._one, r, e): r for r, e in jobs}
        done, late = wait_for(futures, timeout=self.timeout + 1)
        pool.shutdown(wait=False, cancel_futures=True)
        for future in late:
            self.say(f"warning: notification to {futures[future].name} did not answer in {self.timeout:g}s")
        for future in done:
            problem = future.result()
            if problem:
                self.say(f"warning: notification to {futures[future].name} failed: {mask(problem)}")

    def _one(self, receiver: Receiver, event: Event) -> str | None:
        """Send one request; what went wrong, or None."""
        import urllib.error  # loads only when notifying

        try:
            url, body, headers = self._request(receiver, event)
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
        value = self.environ.get(variable or "", "") or secrets_block(self.environ).get(variable or "", "")
        if not value:
            raise _Unset(f"${variable} is not set")
        register_secret(value)
        return value


def secrets_block(environ: Mapping[str, str]) -> dict[str, str]:
    """``$PROMOTER_NOTIFICATIONS_ENV``: lines ``NAME=value`` (blank lines and ``#`` comments
    skipped), the receivers' variables in one secret, as the reusable workflow passes them (it
    cannot pass secrets it does not name). A variable of the environment itself wins."""
    lines = name_value_lines(environ.get(NOTIFICATIONS_ENV, ""))
    return {name: value for _, name, sep, value in lines if sep and name}


class _Unset(Exception):
    """A receiver's secret is missing from the environment."""
