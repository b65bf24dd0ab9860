"""Notifications at a loopback receiver: each event arrives once, signed; a receiver that is down
changes nothing and costs no time; no secret reaches the output."""

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

from promoter.changecontrol.notify import NOTIFICATIONS_REF, SCHEMA, Event, Notifier, secrets_block
from promoter.changecontrol.records import Records
from promoter.gitcmd import Git
from promoter.model import NOTIFY_EVENTS, Receiver, Source
from tests.support.inbox import Inbox

SECRET = "s3cr3t-hmac-key"


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


def test_a_dead_receiver_changes_nothing_and_costs_no_time(tmp_path: Path, inbox: Inbox) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    said: list[str] = []
    secret_url = f"{dead}/T000/B000/XXXXsecretXXXX"
    notifier = Notifier("platform", receivers(dead), records(tmp_path), said.append, {"CHAT_URL": secret_url})
    start = time.monotonic()
    assert len(notifier.send([event()])) == 1
    assert time.monotonic() - start < 2
    assert said == [
        "warning: notification to chat failed: URLError: [Errno 111] Connection refused",
        "warning: notification to audit failed: $AUDIT_KEY is not set",
    ] or sorted(said) == sorted(
        [
            "warning: notification to chat failed: URLError: [Errno 111] Connection refused",
            "warning: notification to audit failed: $AUDIT_KEY is not set",
        ]
    )
    assert not any("XXXXsecretXXXX" in line for line in said)


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
