"""Notifications at a loopback receiver: each event arrives once, signed; a receiver that is down
changes nothing and costs no time, and gets the event, as it was, once it is back; no secret
reaches the output."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from promoter.changecontrol.deliveries import GIVE_UP, LEASE
from promoter.changecontrol.notify import (
    NOTIFICATIONS_REF,
    SCHEMA,
    SIGNATURE_HEADER,
    Event,
    Notifier,
    secrets_block,
)
from promoter.changecontrol.records import Records
from promoter.gitcmd import Git
from promoter.model import NOTIFY_EVENTS, Receiver, Source
from tests.support.inbox import Inbox

SECRET = "s3cr3t-hmac-key"
T0 = 1_800_000_000.0  # 2027-01-15T08:00:00Z


@pytest.fixture(scope="module")
def inbox() -> Iterator[Inbox]:
    server = Inbox()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()


def receivers(url: str) -> tuple[Receiver, ...]:
    return (
        Receiver("chat", "slack", None, "CHAT_URL", None, NOTIFY_EVENTS, (), Source("p", 1)),
        Receiver(
            "audit", "webhook", f"{url}/audit", None, "AUDIT_KEY", ("held", "done"), ("prod",), Source("p", 2)
        ),
    )


def event(kind: str = "held", env: str = "prod") -> Event:
    return Event(kind, env, None, "c" * 40, f"{env}: held by alice", 1_800_000_000.0, f"{kind}:{env}:x")  # type: ignore[arg-type]


def records(tmp_path: Path) -> Records:
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path / "cp")], check=True)
    return Records(Git(tmp_path / "cp"), NOTIFICATIONS_REF)


def test_each_event_arrives_once_signed_and_a_later_run_sends_nothing(tmp_path: Path, inbox: Inbox) -> None:
    inbox.received.clear()
    said: list[str] = []
    environ = {"CHAT_URL": f"{inbox.url}/chat", "AUDIT_KEY": SECRET}
    first = Notifier("platform", receivers(inbox.url), records(tmp_path), said.append, environ)
    assert [e.key for e in first.send([event(), event("done", "qa")])] == ["held:prod:x", "done:qa:x"]
    later = Notifier(
        "platform",
        receivers(inbox.url),
        Records(Git(tmp_path / "cp"), NOTIFICATIONS_REF),
        said.append,
        environ,
    )
    assert later.send([event(), event("done", "qa")]) == []  # a heartbeat that sees them again
    by_path = sorted((path, body) for path, _, body in inbox.received)
    assert [p for p, _ in by_path] == ["/audit", "/chat", "/chat"]  # audit wants prod only
    audit = next((h, b) for p, h, b in inbox.received if p == "/audit")
    body = json.loads(audit[1])
    assert body["schema"] == SCHEMA and body["event"] == "held" and body["environment"] == "prod"
    expected = "sha256=" + hmac.new(SECRET.encode(), audit[1], hashlib.sha256).hexdigest()
    assert audit[0]["X-Promoter-Signature"] == expected
    chats = sorted(json.loads(b)["text"] for p, _, b in inbox.received if p == "/chat")
    assert chats[1] == f"[platform] held: prod: held by alice (main {'c' * 12})"
    assert said == []


def test_a_dead_receiver_changes_nothing_costs_no_time_and_is_not_counted_as_sent(
    tmp_path: Path, inbox: Inbox
) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    said: list[str] = []
    secret_url = f"{dead}/T000/B000/XXXXsecretXXXX"
    store = records(tmp_path)
    notifier = Notifier(
        "platform", receivers(dead), store, said.append, {"CHAT_URL": secret_url}, wall=lambda: T0
    )
    start = time.monotonic()
    assert len(notifier.send([event()])) == 1
    assert time.monotonic() - start < 2
    again = "a later run tries again from 2027-01-15T08:01:00Z"
    assert sorted(said) == [
        f"warning: notification to audit failed: $AUDIT_KEY is not set; {again}",
        f"warning: notification to chat failed: URLError: [Errno 111] Connection refused; {again}",
    ]
    assert not any("XXXXsecretXXXX" in line for line in said)
    deliveries = store.read(fresh=True)["events"]["held:prod:x"]["receivers"]
    assert {name: d["state"] for name, d in deliveries.items()} == {"chat": "failed", "audit": "failed"}
    assert notifier.next_retry() == T0 + 60
    assert "XXXXsecretXXXX" not in json.dumps(store.read(fresh=True))


def test_no_receiver_wants_it_then_nothing_is_recorded(tmp_path: Path) -> None:
    store = records(tmp_path)
    notifier = Notifier("platform", receivers("http://127.0.0.1:9")[1:], store, print, {})
    assert notifier.send([event("done", "qa")]) == []
    assert store.git.commit_of(NOTIFICATIONS_REF) is None


def test_the_receivers_variables_may_come_as_lines_of_one_secret(tmp_path: Path, inbox: Inbox) -> None:
    """``PROMOTER_NOTIFICATIONS_ENV`` (what the reusable workflow passes): NAME=value lines; a
    variable of the environment itself wins."""
    inbox.received.clear()
    block = f"# the receivers\n\nCHAT_URL = {inbox.url}/block-chat\nAUDIT_KEY={SECRET}\nnot a line\n"
    environ = {"PROMOTER_NOTIFICATIONS_ENV": block, "CHAT_URL": f"{inbox.url}/chat"}
    said: list[str] = []
    Notifier("platform", receivers(inbox.url), records(tmp_path), said.append, environ).send([event()])
    assert sorted(path for path, _, _ in inbox.received) == ["/audit", "/chat"]
    audit_headers, audit_body = next((h, b) for p, h, b in inbox.received if p == "/audit")
    expected = "sha256=" + hmac.new(SECRET.encode(), audit_body, hashlib.sha256).hexdigest()
    assert audit_headers["X-Promoter-Signature"] == expected
    assert secrets_block(environ) == {"CHAT_URL": f"{inbox.url}/block-chat", "AUDIT_KEY": SECRET}
    assert said == []


class Wall:
    """The notifier's time of day, moved by the test (no sleeping through a backoff)."""

    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def flaky() -> Iterator[Inbox]:
    """A receiver of its own, which a test takes down (503) and brings back."""
    server = Inbox()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def audit_only(url: str) -> tuple[Receiver, ...]:
    return (
        Receiver("audit", "webhook", f"{url}/audit", None, "AUDIT_KEY", NOTIFY_EVENTS, (), Source("p", 2)),
    )


def later_run(tmp_path: Path, url: str, said: list[str], wall: Wall, environ: dict[str, str]) -> Notifier:
    """A notifier as the next run builds it: its own read of the record."""
    store = Records(Git(tmp_path / "cp"), NOTIFICATIONS_REF)
    return Notifier("platform", audit_only(url), store, said.append, environ, wall=wall)


def test_a_receiver_that_was_down_gets_the_event_once_as_it_was_when_it_is_back(
    tmp_path: Path, flaky: Inbox
) -> None:
    said: list[str] = []
    wall, environ = Wall(), {"AUDIT_KEY": SECRET}
    records(tmp_path)
    flaky.status = 503
    first = later_run(tmp_path, flaky.url, said, wall, environ)
    assert [e.key for e in first.send([event()])] == ["held:prod:x"]
    assert said == [
        "warning: notification to audit failed: HTTP 503; a later run tries again from 2027-01-15T08:01:00Z"
    ]
    flaky.status = 200
    wall.t += 30  # before the backoff is over: the event is seen again, nothing is sent
    seen_again = Event("held", "prod", None, "c" * 40, "prod: held by alice", T0 + 30, "held:prod:x")
    assert later_run(tmp_path, flaky.url, said, wall, environ).send([seen_again]) == []
    assert later_run(tmp_path, flaky.url, said, wall, environ).next_retry() == T0 + 60
    wall.t = T0 + 60
    assert len(later_run(tmp_path, flaky.url, said, wall, environ).send([seen_again])) == 1
    wall.t += 3600
    assert later_run(tmp_path, flaky.url, said, wall, environ).send([seen_again]) == []
    assert len(flaky.refused) == 1 and len(flaky.received) == 1
    (_, refused_headers, refused_body), (_, headers, body) = flaky.refused[0], flaky.received[0]
    assert body == refused_body and headers[SIGNATURE_HEADER] == refused_headers[SIGNATURE_HEADER]
    assert json.loads(body)["key"] == "held:prod:x" and json.loads(body)["at"] == "2027-01-15T08:00:00Z"
    assert later_run(tmp_path, flaky.url, said, wall, environ).next_retry() is None
    assert len(said) == 1


def test_a_receiver_whose_variable_is_not_set_is_not_counted_as_sent(tmp_path: Path, flaky: Inbox) -> None:
    said: list[str] = []
    wall = Wall()
    records(tmp_path)
    later_run(tmp_path, flaky.url, said, wall, {}).send([event()])
    assert said == [
        "warning: notification to audit failed: $AUDIT_KEY is not set; a later run tries again from 2027-01-15T08:01:00Z"
    ]
    assert flaky.received == [] and flaky.refused == []
    wall.t += 60  # the variable is there now (from the block): the next run that notifies sends it
    block = {"PROMOTER_NOTIFICATIONS_ENV": f"AUDIT_KEY={SECRET}"}
    assert len(later_run(tmp_path, flaky.url, said, wall, block).send([])) == 1
    assert len(flaky.received) == 1


def test_two_runs_at_once_send_an_event_once(tmp_path: Path, flaky: Inbox) -> None:
    """The second run's claim finds the first's (compare-and-swap); a claim is a lease."""
    said: list[str] = []
    wall, environ = Wall(), {"AUDIT_KEY": SECRET}
    records(tmp_path)
    one = later_run(tmp_path, flaky.url, said, wall, environ)
    other = later_run(tmp_path, flaky.url, said, wall, environ)
    assert one.records is not None and other.records is not None
    other.records.read()  # both read the record before either wrote it
    claimed = one._claim(one.records, {"held:prod:x": event()})
    assert [d.receiver for d in claimed] == ["audit"]
    assert other.send([event()]) == [] and flaky.received == []
    assert other.next_retry() == T0 + LEASE  # the first run may have died before sending


def test_a_run_that_died_between_its_claim_and_sending_is_followed_by_one_that_sends(
    tmp_path: Path, flaky: Inbox
) -> None:
    said: list[str] = []
    wall, environ = Wall(), {"AUDIT_KEY": SECRET}
    records(tmp_path)
    died = later_run(tmp_path, flaky.url, said, wall, environ)
    assert died.records is not None
    died._claim(died.records, {"held:prod:x": event()})  # and died
    wall.t += LEASE
    assert len(later_run(tmp_path, flaky.url, said, wall, environ).send([event()])) == 1
    assert later_run(tmp_path, flaky.url, said, wall, environ).send([event()]) == []
    assert len(flaky.received) == 1 and said == []


def test_a_receiver_down_for_a_day_is_dropped_with_one_warning(tmp_path: Path, flaky: Inbox) -> None:
    said: list[str] = []
    wall, environ = Wall(), {"AUDIT_KEY": SECRET}
    records(tmp_path)
    flaky.status = 503
    later_run(tmp_path, flaky.url, said, wall, environ).send([event()])
    wall.t += GIVE_UP  # no run came for a day
    assert later_run(tmp_path, flaky.url, said, wall, environ).send([event()]) == []
    assert said[1:] == [
        "warning: notification to audit dropped: held:prod:x was not acknowledged in 1 attempt(s) "
        "since 2027-01-15T08:00:00Z (last: HTTP 503)"
    ]
    flaky.status = 200
    wall.t += 3600
    assert later_run(tmp_path, flaky.url, said, wall, environ).send([event()]) == []
    assert later_run(tmp_path, flaky.url, said, wall, environ).next_retry() is None
    assert len(said) == 2 and flaky.received == []


def test_a_redirect_is_not_an_acknowledgement(tmp_path: Path, flaky: Inbox) -> None:
    said: list[str] = []
    records(tmp_path)
    flaky.status = 302
    later_run(tmp_path, flaky.url, said, Wall(), {"AUDIT_KEY": SECRET}).send([event()])
    assert said == [
        "warning: notification to audit failed: HTTP 302; a later run tries again from 2027-01-15T08:01:00Z"
    ]
