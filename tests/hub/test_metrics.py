"""Delivery figures and ``/metrics``: a replayed history whose DORA answers are worked out by
hand (docs/hub.md, "Delivery figures"), on SQLite and PostgreSQL, with each cluster's clock
off the hub's by up to 5 minutes; then the exposition scraped by a real Prometheus (Debian's,
on 127.0.0.1) and its figures and counters read back through Prometheus' API."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest
import requests

from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from promoter.hub.ingest import ingest
from promoter.hub.reads import read
from tests.support.hub_support import LiveHub, flux_stream_event, free_port, missing, register, rfc3339, sign

T0 = 1_790_000_000.0
NOW = T0 + 4000
DAYS_30 = 30 * 86400.0
P = {n: f"{n}" * 40 for n in "1234"}  # prod's platform commits P1..P4
SKEW = {"p-s1": -300.0, "p-s2": 0.0, "p-l1": 300.0}
TYPES = {"p-s1": "small", "p-s2": "small", "p-l1": "large"}
#: (hub time, cluster, kind, reason, revision); a Kustomization's revision is a platform commit.
EVENTS = (
    (100, "p-s1", "Kustomization", "ReconciliationSucceeded", "1"),
    (120, "p-l1", "Kustomization", "ReconciliationSucceeded", "1"),
    (150, "p-s2", "Kustomization", "ReconciliationSucceeded", "1"),
    (1050, "p-s2", "Kustomization", "ReconciliationSucceeded", "2"),
    (1080, "p-l1", "Kustomization", "ReconciliationSucceeded", "2"),
    (1100, "p-s1", "Kustomization", "HealthCheckFailed", "2"),
    (1400, "p-s1", "Kustomization", "ReconciliationSucceeded", "2"),
    (2020, "p-s1", "Kustomization", "ReconciliationSucceeded", "3"),
    (2030, "p-s2", "Kustomization", "ReconciliationSucceeded", "3"),
    (2050, "p-l1", "Kustomization", "ReconciliationSucceeded", "3"),
    (2100, "p-l1", "HelmRelease", "UpgradeFailed", "6.5.4"),
    (2300, "p-l1", "HelmRelease", "UpgradeSucceeded", "6.5.4"),
    (3100, "p-s1", "Kustomization", "ReconciliationSucceeded", "4"),
    (3100, "p-s2", "Kustomization", "ReconciliationSucceeded", "4"),
    (3100, "p-l1", "Kustomization", "ReconciliationSucceeded", "4"),
)
# Worked out by hand. prod deploys P1..P4 at 150, 1400, 2050, 3100 (the last cluster's success);
# the main commits were first recorded (in dev) at -1000, 500, 1900, 2950: lead times 1150, 900,
# 150, 150. P2 failed on p-s1 (restored after 300 s), P3's HelmRelease on p-l1 (after 200 s).
PROD = {
    "deployments": 4,
    "deploymentFrequencyPerDay": round(4 / 30, 6),
    "leadTimeSeconds": 525.0,
    "changes": 4,
    "failedChanges": 2,
    "changeFailureRate": 0.5,
    "restores": 2,
    "timeToRestoreSeconds": 250.0,
}
SMALL = {**PROD, "leadTimeSeconds": 525.0, "failedChanges": 1, "changeFailureRate": 0.25}
SMALL.update({"restores": 1, "timeToRestoreSeconds": 300.0})  # deploys 150, 1400, 2030, 3100
LARGE = {**PROD, "leadTimeSeconds": 365.0, "failedChanges": 1, "changeFailureRate": 0.25}
LARGE.update({"restores": 1, "timeToRestoreSeconds": 200.0})  # deploys 120, 1080, 2050, 3100


def replay(db: Database) -> dict[str, str]:
    """Record the commits and post the events; each cluster's key."""
    order = ("dev", "prod")
    for i, (n, dev_at) in enumerate(zip("1234", (-1000, 500, 1900, 2950), strict=True)):
        record_commit(
            db, CommitRecord("dev", "d" * 39 + n, "dev", None, "m" * 39 + n, None, (), order), T0 + dev_at
        )
        parent = P[str(i)] if i else None
        record_commit(
            db, CommitRecord("prod", P[n], "prod", parent, "m" * 39 + n, None, (), order), T0 + 1000 * i
        )
    keys = {name: register(db, name, "prod", cluster_type, T0 - 2000) for name, cluster_type in TYPES.items()}
    for at, cluster, kind, reason, revision in EVENTS:
        body, extra = flux_stream_event(
            kind,
            "podinfo" if kind == "HelmRelease" else "platform",
            reason,
            f"{reason} at {at}",
            rfc3339(T0 + at + SKEW[cluster]),
            severity="error" if reason.endswith("Failed") else "info",
            revision=revision if kind == "HelmRelease" else f"prod@sha1:{P[revision]}",
            alert_metadata={"cluster": cluster, "clusterType": TYPES[cluster], "environment": "prod"},
        )
        headers = {"content-type": "application/json", "x-signature": sign(body, keys[cluster]), **extra}
        ingest(db, "flux", cluster, headers, body, T0 + at)
    return keys


def test_dora_figures_of_a_replayed_history(hub_db: Database) -> None:
    replay(hub_db)
    answer = read(hub_db, "delivery", {"environment": "prod", "window": "30d"}, NOW, 1800)
    prod = answer["environments"][0]
    assert {k: prod[k] for k in PROD} == PROD
    assert {k: prod["clusterTypes"]["small"][k] for k in SMALL} == SMALL
    assert {k: prod["clusterTypes"]["large"][k] for k in LARGE} == LARGE
    assert len(prod["trend"]) == 6 and all(
        t["deployments"] == 0 for t in prod["trend"]
    )  # all of it is recent
    # A window of the last 1000 s holds P4 alone: lead time 150, no failure.
    recent = read(hub_db, "delivery", {"env": "prod", "window": "1000s"}, NOW, 1800)["environments"][0]
    assert (recent["deployments"], recent["leadTimeSeconds"], recent["changeFailureRate"]) == (1, 150.0, 0.0)


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, dict[str, str]]]:
    """A hub (SQLite, its clock at NOW) holding the replayed history, scraped every second by a
    real Prometheus: the hub's URL, Prometheus' URL and the clusters' keys."""
    binary = shutil.which("prometheus")
    if binary is None:
        missing("prometheus is not installed")
    root = tmp_path_factory.mktemp("metrics")
    db = Database(str(root / "hub.sqlite3"))
    db.migrate()
    keys = replay(db)
    with LiveHub(db, clock=lambda: NOW) as hub:
        config = root / "prometheus.yml"
        target = hub.url.removeprefix("http://")
        config.write_text(
            "global: {scrape_interval: 1s}\n"
            f"scrape_configs:\n  - job_name: hub\n    static_configs: [{{targets: ['{target}']}}]\n"
        )
        port = free_port()
        with open(root / "prometheus.log", "wb") as log:
            proc = subprocess.Popen(
                [binary, f"--config.file={config}", f"--storage.tsdb.path={root / 'data'}",
                 f"--web.listen-address=127.0.0.1:{port}"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        try:
            yield hub.url, f"http://127.0.0.1:{port}", keys
        finally:
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=20)
            if proc.poll() is None:
                proc.kill()
    db.close()


def _query(prometheus: str, expr: str, want: int = 1, wait: float = 60) -> list[dict[str, object]]:
    """Poll Prometheus until ``expr`` has ``want`` series (the first scrapes land after start)."""
    deadline = time.monotonic() + wait
    while True:
        with contextlib.suppress(requests.RequestException, KeyError, ValueError):
            found = requests.get(f"{prometheus}/api/v1/query", params={"query": expr}, timeout=2).json()
            result: list[dict[str, object]] = found["data"]["result"]
            if len(result) >= want or time.monotonic() > deadline:
                return result
        if time.monotonic() > deadline:
            pytest.fail(f"Prometheus has no {expr} after {wait}s")
        time.sleep(0.25)


def _value(prometheus: str, expr: str) -> float:
    series = _query(prometheus, expr)
    assert len(series) == 1, series
    return float(series[0]["value"][1])  # type: ignore[index]


def test_prometheus_scrapes_the_dora_figures_and_rollout_state(
    scraped: tuple[str, str, dict[str, str]],
) -> None:
    hub, prometheus, _ = scraped
    answer = requests.get(f"{hub}/metrics", timeout=10)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith(
        "text/plain; version=0.0.4"
    )
    assert "# TYPE promoter_hub_dora_lead_time_seconds gauge" in answer.text
    assert (
        _value(prometheus, 'promoter_hub_dora_change_failure_ratio{environment="prod",cluster_type=""}')
        == 0.5
    )
    assert (
        _value(prometheus, 'promoter_hub_dora_lead_time_seconds{environment="prod",cluster_type=""}') == 525
    )
    assert _value(prometheus, 'promoter_hub_dora_lead_time_seconds{cluster_type="large"}') == 365
    assert (
        _value(prometheus, 'promoter_hub_dora_time_to_restore_seconds{environment="prod",cluster_type=""}')
        == 250
    )
    assert _value(prometheus, 'promoter_hub_dora_deployments{environment="prod",cluster_type="small"}') == 4
    assert _value(
        prometheus, 'promoter_hub_dora_deployment_frequency_per_day{environment="prod",cluster_type=""}'
    ) == round(4 / 30, 6)
    assert (
        _value(
            prometheus,
            'promoter_hub_rollout_clusters{environment="prod",cluster_type="small",state="success"}',
        )
        == 2
    )
    assert _value(prometheus, 'promoter_hub_rollout_percent{environment="prod",cluster_type="large"}') == 100


def test_ingest_and_refusal_counters_reach_prometheus(scraped: tuple[str, str, dict[str, str]]) -> None:
    hub, prometheus, keys = scraped
    url = f"{hub}/v1/ingest/flux/p-s2"

    def post(reason: str, signature: str | None = None) -> int:
        body, extra = flux_stream_event(
            "Kustomization", "platform", reason, f"{reason} now", rfc3339(NOW - 5),
            severity="error" if reason.endswith("Failed") else "info", revision=f"prod@sha1:{P['4']}",
        )  # fmt: skip
        signed = signature or sign(body, keys["p-s2"])
        headers = {"Content-Type": "application/json", "X-Signature": signed, **extra}
        return requests.post(url, data=body, headers=headers, timeout=10).status_code

    assert post("ReconciliationSucceeded", "sha256=00") == 401
    assert post("ReconciliationSucceeded") == 200  # a heartbeat: unchanged
    assert post("HealthCheckFailed") == 201  # stored
    assert post("HealthCheckFailed") == 200  # its retry: a duplicate
    for outcome in ("unchanged", "stored", "duplicate"):
        assert (
            _value(prometheus, f'promoter_hub_reports_received_total{{source="flux",outcome="{outcome}"}}')
            == 1
        )
    assert _value(prometheus, 'promoter_hub_reports_refused_total{source="flux",status="401"}') == 1


def test_a_rollback_counts_the_commit_it_undid_as_failed() -> None:
    """prod runs m1, m2, then m1 again (a rollback, onFailure: rollback): the commit that carried
    m2 failed, though no cluster reported a failure; a later m3 after m2 is no rollback."""
    from promoter.hub.dora import History, PlatformCommit, failed_commits

    commits = [
        PlatformCommit(f"{i}" * 40, None, main, float(i)) for i, main in enumerate(("m1", "m2", "m1", "m3"))
    ]
    history = History(commits, {}, {"c": "small"}, {}, {})
    assert failed_commits(history, {"c"}) == {"1" * 40}
