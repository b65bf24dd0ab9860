"""The ``hub`` gate: its spec, its verdicts (zero clusters never passes, failures, percents,
bake), and a whole run against the real hub, where the gate records M from the platform repo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from promoter.clock import FakeClock
from promoter.errors import ConfigError, GateFailed, GateTimedOut
from promoter.gates import GateContext, build_gate
from promoter.gates.hub import HubGate
from promoter.gates.runner import run_gates
from promoter.hub import keys
from promoter.model import GateSpec, Source
from promoter.platform.repo import PlatformRepo
from tests.support.hub_support import LiveHub, flux_event, platform_repo, post_flux, register

SRC = Source("promoter.yaml", 12)
URL = "http://127.0.0.1:9"


def gate(**spec: Any) -> HubGate:
    built = build_gate(GateSpec("hub", {"url": URL, **spec}, SRC))
    assert isinstance(built, HubGate)
    return built


def ctx(clock: FakeClock | None = None, **kwargs: Any) -> GateContext:
    values: dict[str, Any] = {
        "environment": "dev",
        "commit": "c" * 40,
        "platform_sha": "1" * 40,
        "platform_url": "unused",
        "platform_branch": "dev",
        "clock": clock or FakeClock(),
    }
    values.update(kwargs)
    return GateContext(**values)


def counts(total: int, success: int, failed: int = 0, stale: int = 0) -> dict[str, int]:
    return {
        "total": total,
        "success": success,
        "failed": failed,
        "pending": total - success - failed - stale,
        "stale": stale,
    }


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"url": "ftp://hub"}, "'url' must be an http:// or https:// URL"),
        ({"minPercent": 0}, "'minPercent' must be a number above 0 and at most 100"),
        ({"minPercent": 101}, "'minPercent' must be a number above 0"),
        ({"minClusters": 0}, "'minClusters' must be a whole number of at least 1"),
        ({"maxFailures": "ten"}, "'maxFailures' must be a count (0, 2) or a percent ('10%')"),
        ({"maxFailures": -1}, "'maxFailures' must be a count"),
        ({"staleAfter": "soon"}, "'staleAfter'"),
        ({"bake": "1 hour"}, "'bake'"),
        ({"minPrecent": 50}, "unknown field 'minPrecent'"),
        ({"clusterTypes": {"large": {"minPercnt": 5}}}, "unknown field 'minPercnt'"),
    ],
)
def test_bad_specs_name_the_gate_line_and_key(spec: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError) as err:
        build_gate(GateSpec("hub", {"url": URL, **spec}, SRC))
    assert str(err.value).startswith("promoter.yaml:12: gate hub: ")
    assert words in str(err.value)


def test_zero_clusters_never_passes() -> None:
    g = gate(minPercent=1)
    assert g.judge({"clusterTypes": {}}, ctx()).state == "pending"
    assert g.judge({"clusterTypes": {"small": counts(0, 0)}}, ctx()).state == "pending"
    all_stale = g.judge({"clusterTypes": {"small": counts(3, 0, stale=3)}}, ctx())
    assert all_stale.state == "pending" and "0/3 success, 0 failed, 0 pending, 3 stale" in all_stale.message


def test_percent_min_clusters_and_per_type_thresholds() -> None:
    g = gate(minPercent=50, minClusters=2, clusterTypes={"canary": {"minPercent": 100, "minClusters": 1}})
    rollout = {"clusterTypes": {"canary": counts(1, 1), "large": counts(4, 2, stale=0)}}
    assert g.judge(rollout, ctx()).state == "success"
    rollout["clusterTypes"]["large"] = counts(4, 1)
    assert g.judge(rollout, ctx()).state == "pending"  # 25% and only one cluster
    rollout["clusterTypes"]["large"] = counts(5, 2, stale=1)  # 2 of 4 fresh: 50%
    assert g.judge(rollout, ctx()).state == "success"
    rollout["clusterTypes"]["canary"] = counts(2, 1)
    assert g.judge(rollout, ctx()).state == "pending"


def test_max_failures_as_count_and_percent() -> None:
    assert gate().judge({"clusterTypes": {"small": counts(10, 9, failed=1)}}, ctx()).state == "failure"
    assert (
        gate(maxFailures=1, minPercent=90)
        .judge({"clusterTypes": {"small": counts(10, 9, failed=1)}}, ctx())
        .state
        == "success"
    )
    g = gate(maxFailures="10%", minPercent=80)
    assert g.judge({"clusterTypes": {"small": counts(20, 18, failed=2)}}, ctx()).state == "success"
    failed = g.judge({"clusterTypes": {"small": counts(20, 17, failed=3)}}, ctx())
    assert failed.state == "failure" and failed.message.startswith("too many failed clusters in small")


def test_bake_holds_the_verdict_and_restarts_when_it_lapses() -> None:
    clock = FakeClock()
    g = gate(bake="5m")
    good = {"clusterTypes": {"small": counts(2, 2)}}
    assert g.judge(good, ctx(clock)).state == "pending"
    clock.sleep(200)
    assert g.judge({"clusterTypes": {"small": counts(2, 1)}}, ctx(clock)).state == "pending"  # lapsed
    clock.sleep(200)
    assert g.judge(good, ctx(clock)).message.startswith("baking 0.0s of 5m00s: small 2/2")
    clock.sleep(300)
    assert g.judge(good, ctx(clock)).state == "success"


def _run(g: HubGate, context: GateContext, timeout: float) -> Any:
    return run_gates([g], context, context.clock.now() + timeout, lambda _: None, 3600)


def test_a_run_records_m_then_passes_once_every_type_reports(
    live_hub: LiveHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, (m0, m) = platform_repo(tmp_path)
    platform = PlatformRepo(url)
    platform.fetch(["dev"])
    token = keys.add_promoter_key(live_hub.db, "ci")[1]
    monkeypatch.setenv("PROMOTER_HUB_TOKEN", token)
    small, large = register(live_hub.db, "edge-1"), register(live_hub.db, "east-1", cluster_type="large")
    g = build_gate(GateSpec("hub", {"url": live_hub.url, "interval": "1s"}, SRC))
    context = ctx(platform_sha=m, platform=platform)
    # Nothing reports yet: the gate records M, then waits until the environment's timeout.
    with pytest.raises(GateTimedOut) as waited:
        _run(g, context, 3)
    assert "small 0/1 success" in str(waited.value.outcomes[0])
    with live_hub.db.transaction() as tx:
        assert tx.one("SELECT parent, main_commit FROM platform_commits WHERE sha = ?", (m,)) == (
            m0,
            "c" * 40,
        )
        assigned = tx.rows(
            "SELECT cluster_type, deployment_target FROM assignments WHERE sha = ? ORDER BY 1, 2", (m,)
        )
    assert assigned == [
        ("large", "hello-world-functional-test"),
        ("small", "hello-world-functional-test"),
        ("small", "observability-metrics"),
    ]
    post_flux(live_hub.url, "edge-1", small, flux_event(f"dev@sha1:{m}"))
    post_flux(live_hub.url, "east-1", large, flux_event(f"dev@sha1:{m}"))
    [outcome] = _run(g, context, 30)
    assert outcome.state == "success"
    assert (
        outcome.message
        == "large 1/1 success, 0 failed, 0 pending, 0 stale; small 1/1 success, 0 failed, 0 pending, 0 stale"
    )


def test_a_wave_judges_its_own_cluster_types_and_a_failure_fails(
    live_hub: LiveHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMOTER_HUB_TOKEN", keys.add_promoter_key(live_hub.db, "ci")[1])
    m = "1" * 40
    small, large = register(live_hub.db, "edge-1"), register(live_hub.db, "east-1", cluster_type="large")
    post_flux(live_hub.url, "edge-1", small, flux_event(f"dev@sha1:{m}"))
    g = build_gate(GateSpec("hub", {"url": live_hub.url, "interval": "1s"}, SRC))
    [outcome] = _run(g, ctx(platform_sha=m, cluster_types=("small",)), 30)
    assert outcome.message == "small 1/1 success, 0 failed, 0 pending, 0 stale"
    post_flux(
        live_hub.url,
        "east-1",
        large,
        flux_event(f"dev@sha1:{m}", severity="error", reason="HealthCheckFailed"),
    )
    g = build_gate(GateSpec("hub", {"url": live_hub.url, "interval": "1s"}, SRC))
    with pytest.raises(GateFailed) as failed:
        _run(g, ctx(platform_sha=m), 30)
    assert "too many failed clusters in large" in str(failed.value.outcomes[0])


def test_a_refused_token_fails_and_an_unreachable_hub_waits(
    live_hub: LiveHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMOTER_HUB_TOKEN", "phk_not-a-key")
    g = build_gate(GateSpec("hub", {"url": live_hub.url}, SRC))
    assert g.check(ctx()).state == "failure"
    monkeypatch.delenv("PROMOTER_HUB_TOKEN")
    unknown = build_gate(GateSpec("hub", {"url": live_hub.url}, SRC)).check(ctx())
    assert unknown.state == "pending" and "set PROMOTER_HUB_TOKEN" in unknown.message
    away = build_gate(GateSpec("hub", {"url": URL, "timeout": "1s"}, SRC)).check(ctx())
    assert away.state == "pending" and "cannot reach the hub" in away.message


def test_record_merge_is_what_a_promotion_run_calls(
    live_hub: LiveHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from promoter.gates.hubapi import record_merge

    url, (_, m) = platform_repo(tmp_path)
    platform = PlatformRepo(url)
    platform.fetch(["dev"])
    assert record_merge(platform, m, "", "dev", "dev", "c" * 40) is None  # no PROMOTER_HUB_URL: nothing
    monkeypatch.setenv("PROMOTER_HUB_URL", live_hub.url)
    assert "PROMOTER_HUB_TOKEN is not" in (record_merge(platform, m, "", "dev", "dev", None) or "")
    monkeypatch.setenv("PROMOTER_HUB_TOKEN", "phk_wrong")
    assert "HTTP 401" in (record_merge(platform, m, "", "dev", "dev", None) or "")
    monkeypatch.setenv("PROMOTER_HUB_TOKEN", keys.add_promoter_key(live_hub.db, "ci")[1])
    graph = {"dev": (), "qa": ("dev",)}
    assert record_merge(platform, m, "", "dev", "dev", "c" * 40, ("dev", "qa"), graph) is None
    with live_hub.db.transaction() as tx:
        assert tx.one("SELECT main_commit FROM platform_commits WHERE sha = ?", (m,)) == ("c" * 40,)
        assert tx.rows("SELECT name, follows FROM environments ORDER BY position") == [
            ("dev", "[]"),
            ("qa", '["dev"]'),
        ]


def test_a_promotion_run_tells_the_hub_its_pr_run_and_failure_policy(
    live_hub: LiveHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In GitHub Actions the record carries the run and the control plane's page; a PR's web page
    is sent, a local forge's path is not (the hub links only web pages)."""
    from promoter.gates.hubapi import promotion_fields, record_merge

    class Pr:
        url = "https://github.com/acme/platform/pull/7"

    local = promotion_fields(type("Local", (), {"url": "/tmp/forge/prs/3"})(), "stop", 600.0)
    for name in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"):
        monkeypatch.delenv(name, raising=False)
    assert promotion_fields(None, "stop", 600.0) == {"onFailure": "stop", "timeout": 600.0}
    assert "pullRequest" not in local
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/control-plane")
    monkeypatch.setenv("GITHUB_RUN_ID", "4242")
    fields = promotion_fields(Pr(), "rollback", 900.0)
    assert fields == {
        "onFailure": "rollback",
        "timeout": 900.0,
        "pullRequest": Pr.url,
        "controlPlaneRepo": "https://github.com/acme/control-plane",
        "run": "https://github.com/acme/control-plane/actions/runs/4242",
    }
    url, (_, m) = platform_repo(tmp_path)
    platform = PlatformRepo(url)
    platform.fetch(["dev"])
    monkeypatch.setenv("PROMOTER_HUB_URL", live_hub.url)
    monkeypatch.setenv("PROMOTER_HUB_TOKEN", keys.add_promoter_key(live_hub.db, "ci")[1])
    assert record_merge(platform, m, "", "dev", "dev", "c" * 40, ("dev",), None, fields) is None
    with live_hub.db.transaction() as tx:
        row = tx.one("SELECT pull_request, run_url, on_failure, gate_timeout FROM platform_commits")
        assert tuple(row) == (Pr.url, fields["run"], "rollback", 900.0)
        assert tx.one("SELECT control_plane_url FROM environments WHERE name = 'dev'") == (
            "https://github.com/acme/control-plane",
        )


def test_a_fleet_that_grows_and_shrinks_while_a_wave_bakes(
    live_hub: LiveHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/health-gates.md#a-fleet-that-changes-mid-wave, replayed against the real hub: each
    check counts the clusters registered then. One that joins is stale (left out) until it
    reports; once it reports an older commit it is pending and the bake starts again. One that
    goes stale leaves the count and the budget. One revoked is out of the fleet, its failure too.
    The budget is said at each check."""
    monkeypatch.setenv("PROMOTER_HUB_TOKEN", keys.add_promoter_key(live_hub.db, "ci")[1])
    m, old = "1" * 40, "0" * 40
    clock = FakeClock()
    sender = {name: register(live_hub.db, name) for name in ("e1", "e2", "e3", "e4")}
    for name in ("e1", "e2", "e3"):
        post_flux(live_hub.url, name, sender[name], flux_event(f"dev@sha1:{m}"))
    post_flux(
        live_hub.url,
        "e4",
        sender["e4"],
        flux_event(f"dev@sha1:{m}", severity="error", reason="HealthCheckFailed"),
    )
    g = build_gate(
        GateSpec("hub", {"url": live_hub.url, "maxFailures": "25%", "minPercent": 75, "bake": "10m"}, SRC)
    )
    context = ctx(clock, platform_sha=m)
    first = g.check(context)
    assert first.state == "pending" and first.message.startswith("baking 0.0s of 10m00s: small 3/4 success")
    assert "1 failed (1 of 1 failure allowed)" in first.message  # 25% of 4 fresh
    clock.sleep(300)
    sender["e5"] = register(live_hub.db, "e5")  # joins: nothing known of it yet
    joined = g.check(context)
    assert joined.message.startswith(
        "baking 5m00s of 10m00s: small 3/5 success, 1 failed (1 of 1 failure allowed), 0 pending, 1 stale"
    )
    post_flux(live_hub.url, "e5", sender["e5"], flux_event(f"dev@sha1:{old}"))  # at the older commit
    restarted = g.check(context)
    assert (
        restarted.state == "pending"
        and "small 3/5 success, 1 failed (1 of 1 failure allowed), 1 pending" in restarted.message
    )
    post_flux(live_hub.url, "e5", sender["e5"], flux_event(f"dev@sha1:{m}"))
    clock.sleep(60)
    again = g.check(context)
    assert again.message.startswith("baking 0.0s of 10m00s: small 4/5 success")  # the bake began again
    keys.revoke(live_hub.db, "e4")  # the failed cluster leaves the fleet
    clock.sleep(600)
    done = g.check(context)
    assert (
        done.state == "success"
        and done.message == "small 4/4 success, 0 failed (0 of 1 failure allowed), 0 pending, 0 stale"
    )
    with live_hub.db.transaction() as tx:  # the gate recorded M with its budget, for the hub's pages
        assert tx.one("SELECT failure_budget FROM platform_commits WHERE sha = ?", (m,)) == (
            '{"clusterTypes": {}, "maxFailures": "25%"}',
        )
