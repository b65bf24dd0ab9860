"""Notifications at least once, across runs of ``promote``: what a killed run did not tell, the
next run tells once; a receiver that was down gets each event once, as it was, when it is back."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from promoter.changecontrol.deliveries import LEASE
from promoter.changecontrol.notify import NOTIFICATIONS_REF
from promoter.changecontrol.records import Records
from promoter.cli.main import cli
from promoter.clock import FakeClock
from promoter.gitcmd import Git
from promoter.promotion.control_wiring import events_of
from promoter.promotion.report import EnvResult, Report
from tests.support import forkserver
from tests.support.helpers import PIPELINE, WORKLOAD, ControlPlaneFactory
from tests.support.inbox import Inbox
from tests.support.paths import ROOT

DONE = [("done", "dev"), ("done", "prod"), ("done", "qa")]


@pytest.fixture
def inbox() -> Iterator[Inbox]:
    server = Inbox()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def control_plane(factory: ControlPlaneFactory, inbox: Inbox) -> Path:
    receivers = (
        "  notifications:\n"
        f"    - {{name: audit, webhook: {{url: '{inbox.url}/hook', secretFrom: AUDIT_KEY}}, events: [done]}}\n"
    )
    return factory.create({"promoter.yaml": PIPELINE + receivers, "workloads/app.yaml": WORKLOAD})


def told(kept: list[tuple[str, dict[str, str], bytes]]) -> list[tuple[str, str]]:
    return sorted((json.loads(b)["event"], json.loads(b)["environment"]) for _, _, b in kept)


def run(path: Path, module: str = "promoter", *hook: str) -> Any:
    """``promote`` in a process of its own (``hook``: killed by tests.support.killhook)."""
    args = [*hook, "promote", "--control-plane", str(path), "--wait", "none"]
    env = {**os.environ, "AUDIT_KEY": "audit-key"}
    return forkserver.run(module, args, cwd=ROOT, env=env, timeout=120)


def test_a_run_killed_after_devs_success_is_followed_by_one_that_tells_it_once(
    factory: ControlPlaneFactory, inbox: Inbox
) -> None:
    path = control_plane(factory, inbox)
    killed = run(path, "tests.support.killhook", "status", "3")  # right after dev's success status
    assert killed.returncode == -9, killed.stderr
    assert inbox.received == []
    second = run(path)
    assert second.returncode == 0, second.stderr
    assert "dev: already promoted" in second.stdout, second.stdout  # dev was done before
    assert told(inbox.received) == DONE
    third = run(path)
    assert third.returncode == 0, third.stderr
    assert told(inbox.received) == DONE and "warning" not in second.stdout + third.stdout


def test_a_run_killed_between_its_claim_and_sending_is_told_by_a_run_after_the_lease(
    factory: ControlPlaneFactory, inbox: Inbox
) -> None:
    path = control_plane(factory, inbox)
    killed = run(path, "tests.support.killhook", "claim", "1")
    assert killed.returncode == -9, killed.stderr
    soon = run(path)  # the claim may be a run still sending: left to it
    assert soon.returncode == 0, soon.stderr
    assert inbox.received == []
    store = Records(Git(path), NOTIFICATIONS_REF)
    store.update(lambda doc: (_moved_back(doc, LEASE), "test: the claims are two minutes old"))
    later = run(path)
    assert later.returncode == 0, later.stderr
    assert told(inbox.received) == DONE
    assert run(path).returncode == 0 and told(inbox.received) == DONE


def _moved_back(doc: dict[str, Any], seconds: float) -> dict[str, Any]:
    for entry in doc["events"].values():
        for delivery in entry["receivers"].values():
            for name in ("since", "first", "next"):
                if name in delivery:
                    delivery[name] -= seconds
    return doc


def test_a_receiver_down_during_a_run_gets_each_event_once_when_it_is_back(
    factory: ControlPlaneFactory, inbox: Inbox, fake_time: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = control_plane(factory, inbox)
    monkeypatch.setenv("AUDIT_KEY", "audit-key")
    promote = ["promote", "--control-plane", str(path), "--wait", "none"]
    inbox.status = 503
    first = CliRunner().invoke(cli, promote)
    assert first.exit_code == 0, first.output  # the promotion went through all the same
    assert first.output.count("warning: notification to audit failed: HTTP 503; a later run tries again") == 3
    assert told(inbox.refused) == DONE and inbox.received == []
    inbox.status = 200
    fake_time.t += 59  # the backoff is not over: the heartbeat's run sends nothing
    assert CliRunner().invoke(cli, promote).exit_code == 0 and inbox.received == []
    fake_time.t += 1
    assert CliRunner().invoke(cli, promote).exit_code == 0
    assert told(inbox.received) == DONE
    fake_time.t += 3600
    assert CliRunner().invoke(cli, promote).exit_code == 0
    assert told(inbox.received) == DONE  # once each
    assert sorted(b for _, _, b in inbox.received) == sorted(b for _, _, b in inbox.refused)  # same key, at


def test_an_environment_done_in_an_earlier_run_is_done_again_in_the_report_of_the_next() -> None:
    """Events come from recorded state: ``skipped`` (already promoted, its status says success)
    tells ``done`` with the key of the run that promoted it; the record keeps it once."""
    report = Report("promotion", "c" * 40, [EnvResult("dev", "skipped", "already promoted")])
    report.results += [EnvResult("qa", "success", "", pr_url="https://example.com/pr/2")]
    report.results += [EnvResult("prod", "failure", "gates failed")]
    events = events_of(report, 1_800_000_000.0)
    assert [(e.kind, e.environment, e.key) for e in events] == [
        ("done", "dev", f"done:dev:{'c' * 40}"),
        ("done", "qa", f"done:qa:{'c' * 40}"),
        ("failed", "prod", f"failed:prod:{'c' * 40}"),
    ]


RECEIVERS = (
    "  notifications:\n"
    "    - name: chat\n"
    "      slack: {urlFrom: CHAT_URL}\n"
    "    - {name: audit, webhook: {url: 'https://audit.example.com/hook', secretFrom: AUDIT_KEY}}\n"
)
SLACK_LINE = PIPELINE.count("\n") + 2  # "- name: chat"
WEBHOOK_LINE = SLACK_LINE + 2


def test_validate_receivers_is_an_error_for_a_variable_not_set_here(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = factory.create({"promoter.yaml": PIPELINE + RECEIVERS, "workloads/app.yaml": WORKLOAD})
    for name in ("CHAT_URL", "AUDIT_KEY", "PROMOTER_NOTIFICATIONS_ENV"):
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path), "--receivers"])
    assert result.exit_code == 2
    assert result.output == (
        f"error: promoter.yaml:{SLACK_LINE}: spec.notifications[0].slack.urlFrom: $CHAT_URL is not set, in the "
        "environment or in $PROMOTER_NOTIFICATIONS_ENV: receiver chat would be sent nothing\n"
    )
    monkeypatch.setenv("CHAT_URL", "https://hooks.example.com/T0/B0/x")
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path), "--receivers"])
    assert result.exit_code == 2
    assert result.output == (
        f"error: promoter.yaml:{WEBHOOK_LINE}: spec.notifications[1].webhook.secretFrom: $AUDIT_KEY is not set, "
        "in the environment or in $PROMOTER_NOTIFICATIONS_ENV: receiver audit would be sent nothing\n"
    )
    monkeypatch.setenv("PROMOTER_NOTIFICATIONS_ENV", "AUDIT_KEY=audit-key")  # as the workflows pass it
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path), "--receivers"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "receivers: ok, 2 with their variables set" and lines[-1].startswith("valid: main ")


def test_validate_without_receivers_notes_a_variable_not_set_and_passes(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A developer's machine (the pre-commit hook) or a pull request's check holds no receiver's
    URL or key: there it is a note, not an error."""
    path = factory.create({"promoter.yaml": PIPELINE + RECEIVERS, "workloads/app.yaml": WORKLOAD})
    monkeypatch.delenv("PROMOTER_NOTIFICATIONS_ENV", raising=False)
    monkeypatch.delenv("CHAT_URL", raising=False)
    monkeypatch.setenv("AUDIT_KEY", "audit-key")
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        f"note: promoter.yaml:{SLACK_LINE}: spec.notifications[0].slack.urlFrom: $CHAT_URL is not set, in the "
        "environment or in $PROMOTER_NOTIFICATIONS_ENV: receiver chat would be sent nothing "
        "(validate --receivers makes it an error)\n"
    )
    assert "receivers: ok" not in result.stdout


def test_hold_sends_what_is_due_again_of_earlier_runs(
    factory: ControlPlaneFactory, inbox: Inbox, fake_time: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command that notifies retries: here ``hold``, after a promotion whose receiver was down."""
    receivers = (
        "  notifications:\n"
        f"    - {{name: audit, webhook: {{url: '{inbox.url}/hook', secretFrom: AUDIT_KEY}}, events: [done, held]}}\n"
    )
    path = factory.create({"promoter.yaml": PIPELINE + receivers, "workloads/app.yaml": WORKLOAD})
    monkeypatch.setenv("AUDIT_KEY", "audit-key")
    inbox.status = 503
    promoted = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--wait", "none"])
    assert promoted.exit_code == 0, promoted.output
    inbox.status = 200
    fake_time.t += 60
    held = CliRunner().invoke(
        cli, ["hold", "prod", "--control-plane", str(path), "--reason", "incident 4711"]
    )
    assert held.exit_code == 0, held.output
    assert told(inbox.received) == sorted([*DONE, ("held", "prod")])


def test_a_record_the_token_cannot_write_is_an_error_in_the_runs_summary(
    factory: ControlPlaneFactory, inbox: Inbox, tmp_path: Path
) -> None:
    """The control plane's origin refuses refs/promoter/* (a token without Contents write): the
    run says so as an error annotation and in its step summary, never as a warning nobody reads;
    the promotion's outcome stays its own."""
    path = control_plane(factory, inbox)
    origin = tmp_path / "origin.git"
    Git(tmp_path).run("clone", "--quiet", "--bare", operands=[str(path), str(origin)])
    (origin / "hooks").mkdir(exist_ok=True)
    hook = origin / "hooks" / "pre-receive"
    hook.write_text('#!/bin/sh\nwhile read old new ref; do case "$ref" in refs/promoter/*) '
                    'echo "Permission denied" >&2; exit 1;; esac; done\n')  # fmt: skip
    hook.chmod(0o755)
    Git(path).run("remote", "add", "origin", str(origin))
    summary = tmp_path / "summary.md"
    env = {"AUDIT_KEY": "k", "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--wait", "none"], env=env)
    assert result.exit_code == 0, result.output
    assert "::error title=promoter%3A records::notifications not sent: cannot record them: " in result.output
    assert "❌ **Not recorded**: notifications not sent: cannot record them" in summary.read_text()
    assert inbox.received == []  # not claimed, not sent: the next run with a good token sends them
