"""Change control through the command line: ``promote`` notifies each event once at a loopback
receiver (a heartbeat after it sends nothing), and a hold stops a run by hand until --force comes
with a reason."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.clock import FakeClock
from tests.changecontrol.test_notify import Inbox
from tests.support.helpers import PIPELINE, WORKLOAD, ControlPlaneFactory


@pytest.fixture(scope="module")
def inbox() -> Iterator[Inbox]:
    server = Inbox()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def test_promote_notifies_each_event_once(
    factory: ControlPlaneFactory, inbox: Inbox, fake_time: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    inbox.received.clear()
    receivers = (
        "  notifications:\n"
        f"    - {{name: audit, webhook: {{url: '{inbox.url}/hook', secretFrom: AUDIT_KEY}}, events: [done, held]}}\n"
    )
    path = factory.create({"promoter.yaml": PIPELINE + receivers, "workloads/app.yaml": WORKLOAD})
    monkeypatch.setenv("AUDIT_KEY", "k")
    runner = CliRunner()
    held = runner.invoke(cli, ["hold", "prod", "--control-plane", str(path), "--reason", "incident 4711"])
    assert held.exit_code == 0, held.output
    for _ in range(2):  # the push's run, then a heartbeat that finds the same state
        result = runner.invoke(cli, ["promote", "--control-plane", str(path), "--wait", "none", "-o", "json"])
        assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["state"] == "waiting" and report["waiting"]["for"] == "hold"
    events = [json.loads(body) for _, _, body in inbox.received]
    assert sorted((e["event"], e["environment"]) for e in events) == [
        ("done", "dev"),
        ("done", "qa"),
        ("held", "prod"),
    ]
    forced = runner.invoke(cli, ["promote", "--control-plane", str(path), "--force", "--to", "prod"])
    assert forced.exit_code == 0 and "--force passes it only with --reason" in forced.output
    forced = runner.invoke(
        cli, ["promote", "--control-plane", str(path), "--force", "--to", "prod", "--reason", "hotfix 12"]
    )
    assert forced.exit_code == 0, forced.output
    assert "prod: held by " in forced.output and "passed with --force: hotfix 12" in forced.output
    assert sorted(json.loads(b)["event"] for _, _, b in inbox.received).count("done") == 3
