"""Holds at the hub (docs/hub.md#holds), on SQLite and PostgreSQL: the promoter sends an
environment's holds in force with its key, each send replaces the last (order of arrival), and
the reads, pages and ``/metrics`` show the environment or wave as held (a failure still wins);
a hold whose ``until`` passed ends by itself; bad bodies are refused naming the field. Then the
promoter's side: ``promoter hold`` and ``release`` tell a live hub, and a run that meets the
``promoter/hold`` label on its promotion PR tells it too."""

from __future__ import annotations

import time
from typing import Any

import pytest
import requests
from click.testing import CliRunner

from promoter.hub import keys
from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.reads import read
from tests.support.hub_support import LiveHub, flux_event, post_flux, register, rfc3339

M0, M = "0" * 40, "1" * 40
ORDER = ("dev", "qa", "prod")


def _post(hub: LiveHub, body: Any, key: str | None) -> requests.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return requests.post(f"{hub.url}/v1/holds", json=body, headers=headers, timeout=10)


def _hold(**extra: Any) -> dict[str, Any]:
    return {"by": "alice", "reason": "incident 4711", "at": rfc3339(time.time() - 60), **extra}


def _world(hub: LiveHub) -> None:
    """dev healthy at M (one cluster), qa with a cluster failing at M; waves canary and fleet in qa."""
    folders = (("small", "canary", "b" * 40), ("large", "fleet", "a" * 40))
    for env in ("dev", "qa"):
        record_commit(
            hub.db, CommitRecord(env, M0, env, None, "a" * 40, None, (("small", "web"),), ORDER), 1.0
        )
        record_commit(
            hub.db,
            CommitRecord(
                env, M, env, M0, "b" * 40, None, (("small", "web"),),
                wave="canary" if env == "qa" else "", folders=folders if env == "qa" else (),
            ),
            2.0,
        )  # fmt: skip
    for name, env, severity in (("dev-1", "dev", "info"), ("qa-1", "qa", "error")):
        key = register(hub.db, name, environment=env)
        reason = "ReconciliationSucceeded" if severity == "info" else "HealthCheckFailed"
        post_flux(hub.url, name, key, flux_event(f"{env}@sha1:{M}", severity=severity, reason=reason))


def _states(hub: LiveHub) -> dict[str, str]:
    return {
        e["environment"]: e["state"] for e in requests.get(f"{hub.url}/v1/environments", timeout=10).json()
    }


def test_holds_replace_what_was_sent_and_show_as_held(live_hub: LiveHub) -> None:
    _world(live_hub)
    key = keys.add_promoter_key(live_hub.db, "ci")[1]
    assert _states(live_hub) == {"dev": "healthy", "qa": "failed", "prod": "stale"}

    sent = _post(live_hub, {"environment": "dev", "holds": [_hold(until=rfc3339(time.time() + 3600))]}, key)
    assert sent.status_code == 200 and sent.json() == {"holds": 1}
    assert _post(live_hub, {"environment": "qa", "holds": [_hold(wave="fleet")]}, key).json() == {"holds": 1}
    assert _post(live_hub, {"environment": "prod", "holds": [_hold()]}, key).status_code == 200
    assert _states(live_hub) == {"dev": "held", "qa": "failed", "prod": "held"}  # a failure wins
    dev = requests.get(f"{live_hub.url}/v1/environments/dev", timeout=10).json()
    assert [(h["by"], h["reason"], h["wave"], h["origin"]) for h in dev["holds"]] == [
        ("alice", "incident 4711", None, "hold")
    ]
    assert dev["holds"][0]["until"] > time.time() and dev["rollout"]["state"] == "healthy"
    qa = requests.get(f"{live_hub.url}/v1/environments/qa", timeout=10).json()
    assert {w["name"]: w["state"] for w in qa["waves"]} == {"canary": "failed", "fleet": "held"}
    listed = requests.get(f"{live_hub.url}/v1/holds", params={"env": "qa"}, timeout=10).json()
    assert [(h["environment"], h["wave"]) for h in listed] == [("qa", "fleet")]
    label = _hold(origin="label", url="javascript:alert(1)")  # not a web page: kept as no link
    assert _post(live_hub, {"environment": "qa", "holds": [label]}, key).json() == {"holds": 1}
    [shown] = requests.get(f"{live_hub.url}/v1/holds", params={"environment": "qa"}, timeout=10).json()
    assert shown["origin"] == "label" and shown["url"] is None and shown["wave"] is None
    assert _post(live_hub, {"environment": "qa", "holds": [_hold(wave="fleet")]}, key).ok

    metrics = requests.get(f"{live_hub.url}/metrics", timeout=10).text
    assert 'promoter_hub_holds{environment="dev",wave=""} 1' in metrics
    assert 'promoter_hub_holds{environment="qa",wave="fleet"} 1' in metrics
    page = requests.get(f"{live_hub.url}/", timeout=10).text
    assert "The whole environment held" in page and "incident 4711" in page

    # The next send replaces the last: released, dev is what its clusters say again.
    assert _post(live_hub, {"environment": "dev", "holds": []}, key).json() == {"holds": 0}
    assert _states(live_hub)["dev"] == "healthy"
    metrics = requests.get(f"{live_hub.url}/metrics", timeout=10).text
    assert 'promoter_hub_holds{environment="dev"' not in metrics
    assert 'promoter_hub_holds{environment="qa",wave="fleet"} 1' in metrics


def test_a_hold_whose_until_passed_ends_by_itself(live_hub: LiveHub) -> None:
    _world(live_hub)
    key = keys.add_promoter_key(live_hub.db, "ci")[1]
    until = time.time() + 600
    assert _post(live_hub, {"environment": "dev", "holds": [_hold(until=rfc3339(until))]}, key).ok
    params = {"name": "dev"}
    assert read(live_hub.db, "environment", params, until - 1, 1800)["state"] == "held"
    later = read(live_hub.db, "environment", params, until + 1, 1800)
    assert later["state"] != "held" and later["holds"] == []


BAD = [
    ({"holds": []}, "missing 'environment'"),
    ({"environment": "dev"}, "'holds' must be a list"),
    ({"environment": "dev", "holds": [{"by": "a"}]}, "missing 'holds[0].at'"),
    ({"environment": "dev", "holds": [_hold(at="yesterday")]}, "'holds[0].at' must be an RFC 3339 time"),
    (
        {"environment": "dev", "holds": [_hold(origin="vote")]},
        "holds[0].origin must be one of hold, label",
    ),
    ({"environment": "dev", "holds": [_hold(environment="prod")]}, "holds[0].environment is not 'dev'"),
    ({"environment": "dev", "holds": [_hold(colour="red")]}, "holds[0]: unknown field 'colour'"),
]


@pytest.mark.parametrize("hub_url", ["sqlite"], indirect=True)  # a body is judged alike on both engines
def test_bad_bodies_are_refused_naming_the_field(live_hub: LiveHub) -> None:
    key = keys.add_promoter_key(live_hub.db, "ci")[1]
    for body, said in BAD:
        refused = _post(live_hub, body, key)
        assert refused.status_code == 422 and said in refused.json()["error"], body


def test_only_a_promoter_key_sends_holds(live_hub: LiveHub) -> None:
    cluster_key = register(live_hub.db, "dev-1")
    for key in (None, "phk_wrong", cluster_key):
        refused = _post(live_hub, {"environment": "dev", "holds": [_hold()]}, key)
        assert refused.status_code == 401
        assert ("promoter key" if key else "missing 'Authorization: Bearer <key>'") in refused.json()["error"]
    with live_hub.db.transaction() as tx:
        assert tx.rows("SELECT * FROM holds") == []


# --- The promoter's side ----------------------------------------------------------------------


@pytest.mark.parametrize("hub_url", ["sqlite"], indirect=True)
def test_hold_and_release_tell_the_hub(
    live_hub: LiveHub, factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from promoter.cli.main import cli
    from tests.support.helpers import PIPELINE, WORKLOAD

    path = factory.create({"promoter.yaml": PIPELINE, "workloads/app.yaml": WORKLOAD})
    runner = CliRunner()
    monkeypatch.setenv("PROMOTER_HUB_URL", live_hub.url)
    unkeyed = runner.invoke(cli, ["hold", "prod", "--control-plane", str(path), "--reason", "freeze"])
    assert unkeyed.exit_code == 0 and "PROMOTER_HUB_TOKEN is not" in unkeyed.output  # a warning only
    monkeypatch.setenv("PROMOTER_HUB_TOKEN", keys.add_promoter_key(live_hub.db, "ci")[1])
    args = ["--control-plane", str(path)]
    held = runner.invoke(cli, ["hold", "prod", *args, "--reason", "year-end freeze", "--until", "4h"])
    assert held.exit_code == 0, held.output
    state = read(live_hub.db, "environment", {"name": "prod"}, time.time(), 1800)
    assert state["state"] == "held"
    [hold] = state["holds"]
    assert (
        hold["reason"] == "year-end freeze"
        and hold["wave"] is None
        and hold["until"] > time.time() + 3.9 * 3600
    )
    shown = runner.invoke(cli, ["hub", "holds", "--url", live_hub.url])
    assert shown.exit_code == 0 and shown.output.startswith("prod: held by ")
    assert "UTC until 20" in shown.output and shown.output.endswith(": year-end freeze\n")
    status = runner.invoke(cli, ["hub", "status", "--url", live_hub.url]).output
    assert "  HELD: prod: held by " in status
    released = runner.invoke(cli, ["release", "prod", *args])
    assert released.exit_code == 0, released.output
    assert read(live_hub.db, "holds", {}, time.time(), 1800) == []
    assert runner.invoke(cli, ["hub", "holds", "--url", live_hub.url]).output == "no hold in force\n"


@pytest.mark.parametrize("hub_url", ["sqlite"], indirect=True)
def test_a_run_that_meets_a_hold_label_tells_the_hub(
    live_hub: LiveHub, factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from promoter.clock import FakeClock
    from promoter.gitcmd import Git
    from tests.promotion.test_change_control import create, run

    monkeypatch.setenv("PROMOTER_HUB_URL", live_hub.url)
    monkeypatch.setenv("PROMOTER_HUB_TOKEN", keys.add_promoter_key(live_hub.db, "ci")[1])
    path, clock = create(factory, merge="manual"), FakeClock()
    assert run(path, clock).wait.waiting_for == "merge"  # type: ignore[union-attr]
    assert read(live_hub.db, "holds", {}, time.time(), 1800) == []
    with live_hub.db.transaction() as tx:  # the run recorded what it merged, with the Pipeline's graph
        follows = tx.rows("SELECT name, follows FROM environments ORDER BY position")
    assert follows == [("dev", "[]"), ("qa", '["dev"]'), ("prod", '["qa"]')]
    platform = Git(factory.platform)
    head = platform.out("rev-parse", "promoter/prod")
    platform.run("notes", "--ref=promoter-labels", "add", "-m", "promoter/hold", operands=[head])
    assert run(path, clock).wait.waiting_for == "hold"  # type: ignore[union-attr]
    [hold] = read(live_hub.db, "holds", {"environment": "prod"}, time.time(), 1800)
    assert hold["origin"] == "label" and hold["url"] is None and hold["wave"] is None
    platform.run("notes", "--ref=promoter-labels", "remove", operands=[head])
    assert run(path, clock).wait.waiting_for == "merge"  # type: ignore[union-attr]
    assert read(live_hub.db, "holds", {}, time.time(), 1800) == []
