"""One clock per comparison: Flux streams replayed with the cluster's clock 5 minutes behind,
right and 5 minutes ahead of the hub's, and with every event arriving before the promoter
records M (a webhook-driven Flux applies and fails M before the run that records it starts).
Each case runs in an environment of its own, on SQLite and PostgreSQL; the hub's clock is
injected, so nothing sleeps."""

from __future__ import annotations

import itertools

from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from promoter.hub.ingest import ingest
from promoter.hub.reads import read
from tests.support.hub_support import flux_stream_event, register, rfc3339, sign

OLD, M = "a" * 40, "b" * 40
HUB_T0 = 1_790_000_000.0  # the hub's clock when M is merged
SKEWS = (-300.0, 0.0, 300.0)
CASES = list(
    itertools.product(SKEWS, (False, True))
)  # (the cluster's clock offset, events before M's record)
FINISHED = "Reconciliation finished in 2.3s, next run in 10m0s"


class Cluster:
    """A Flux cluster of environment ``env`` whose clock is ``skew`` seconds off the hub's."""

    def __init__(self, db: Database, env: str, skew: float) -> None:
        self.db, self.env, self.skew = db, env, skew
        self.name = f"{env}-edge"
        self.key = register(db, self.name, env, "small")

    def post(self, kind: str, name: str, reason: str, message: str, hub_time: float, **kw: str) -> int:
        """Post an event that happened at ``hub_time`` (the hub's clock), stamped by the cluster's."""
        alert = {"cluster": self.name, "clusterType": "small", "environment": self.env}
        severity = "error" if reason.endswith("Failed") else "info"
        body, extra = flux_stream_event(
            kind,
            name,
            reason,
            message,
            rfc3339(hub_time + self.skew),
            severity=severity,
            alert_metadata=alert,
            **kw,
        )
        headers = {"content-type": "application/json", "x-signature": sign(body, self.key), **extra}
        _, stored = ingest(self.db, "flux", self.name, headers, body, hub_time)
        return stored.id

    def kustomization(self, reason: str, message: str, hub_time: float, sha: str = M) -> None:
        self.post("Kustomization", "platform", reason, message, hub_time, revision=f"{self.env}@sha1:{sha}")

    def helm(self, reason: str, message: str, hub_time: float) -> None:
        self.post("HelmRelease", "podinfo", reason, message, hub_time, revision="6.5.4")


def _record(db: Database, env: str, at: float) -> None:
    record_commit(db, CommitRecord(env, OLD, env, None, "1" * 40, None, (), ()), at - 3600)
    record_commit(db, CommitRecord(env, M, env, OLD, "2" * 40, None, (("small", "web"),)), at)


def _replay(db: Database, stream: object) -> dict[tuple[float, bool], tuple[str, dict[str, object]]]:
    """Run ``stream(cluster)`` in each case; each case's cluster state and rollout counts at M."""
    out = {}
    for i, (skew, early) in enumerate(CASES):
        env = f"e{i}"
        cluster = Cluster(db, env, skew)
        if not early:
            _record(db, env, HUB_T0)
        stream(cluster)  # type: ignore[operator]
        if early:
            _record(db, env, HUB_T0 + 240)  # four minutes after the cluster applied M
        now = HUB_T0 + 600
        small = read(db, "rollout", {"environment": env, "commit": M}, now, 1800)["clusterTypes"]["small"]
        state = next(c["state"] for c in read(db, "clusters", {"environment": env}, now, 1800))
        out[(skew, early)] = (state, small)
    return out


def test_a_helm_upgrade_that_fails_after_the_cluster_applied_m_fails_it(hub_db: Database) -> None:
    """The issue's case: the Kustomization applies M (its change set, Progressing), helm-controller
    fails the upgrade, the Kustomization finishes. Whatever the cluster's clock, and whether the
    promoter recorded M before or after, the cluster is failed for M."""

    def stream(c: Cluster) -> None:
        c.kustomization("ReconciliationSucceeded", FINISHED, HUB_T0 - 600, OLD)
        c.helm("UpgradeSucceeded", "Helm upgrade succeeded for release apps/podinfo", HUB_T0 - 590)
        c.kustomization("Progressing", "HelmRelease/apps/podinfo configured", HUB_T0 + 20)
        c.helm(
            "UpgradeFailed",
            "Helm upgrade failed for release apps/podinfo: context deadline exceeded",
            HUB_T0 + 50,
        )
        c.kustomization("ReconciliationSucceeded", FINISHED, HUB_T0 + 21)

    for case, (state, small) in _replay(hub_db, stream).items():
        assert state == "failed", case
        assert (small["failed"], small["success"], small["failedClusters"]) == (
            1,
            0,
            [f"e{CASES.index(case)}-edge"],
        )


def test_a_helm_failure_older_than_the_clusters_m_is_not_ms(hub_db: Database) -> None:
    """A HelmRelease failing since before its cluster applied M is an old failure: M's verdict is
    its Kustomization's, success, even when that failure's time is after the hub recorded M
    (the cluster's clock 5 minutes ahead) or the record came late."""

    def stream(c: Cluster) -> None:
        c.kustomization("ReconciliationSucceeded", FINISHED, HUB_T0 - 600, OLD)
        c.helm("InstallFailed", "Helm install failed for release apps/podinfo: chart not found", HUB_T0 - 30)
        c.kustomization("Progressing", "Deployment/apps/web configured", HUB_T0 + 20)
        c.kustomization("ReconciliationSucceeded", FINISHED, HUB_T0 + 21)

    for case, (state, small) in _replay(hub_db, stream).items():
        assert state == "success", case
        assert (small["success"], small["failed"], small["percent"]) == (1, 0, 100.0), case


def test_recovery_and_time_to_percent_on_the_hubs_clock(hub_db: Database) -> None:
    """A Kustomization failing at M then recovering ends in success; the time to 100% is the
    hub's receipt of the recovery minus the hub's record of M (0 when the success arrived before
    the record), whatever the cluster's clock says."""

    def stream(c: Cluster) -> None:
        c.kustomization("HealthCheckFailed", "Deployment/apps/web: timeout", HUB_T0 + 60)
        c.kustomization("ReconciliationSucceeded", FINISHED, HUB_T0 + 200)

    for (skew, early), (state, small) in _replay(hub_db, stream).items():
        assert state == "success", (skew, early)
        assert small["timeToPercent"]["100"] == (0.0 if early else 200.0), (skew, early)


def test_a_cluster_ahead_of_the_hub_keeps_its_latest_state_and_stays_fresh(hub_db: Database) -> None:
    """Heartbeats of a clock 5 minutes ahead move its last-seen time (the hub's receipt, compared
    with the hub's now) and a later failure replaces its success; a clock behind likewise."""

    def stream(c: Cluster) -> None:
        for minute in range(0, 10):
            c.kustomization(
                "ReconciliationSucceeded", f"Reconciliation finished in {minute}s", HUB_T0 + 60 * minute
            )

    for case, (state, _) in _replay(hub_db, stream).items():
        assert state == "success", case
    seen = read(hub_db, "cluster", {"name": "e4-edge"}, HUB_T0 + 600, 1800)
    assert seen["lastSeen"] == HUB_T0 + 540 and not seen["stale"]
    # 40 minutes after its last heartbeat (the hub's clock): stale, whatever its own clock.
    later = read(hub_db, "clusters", {}, HUB_T0 + 540 + 2400, 1800)
    assert {c["stale"] for c in later} == {True}
    ahead = Cluster(hub_db, "ahead", 300.0)
    _record(hub_db, "ahead", HUB_T0)
    ahead.kustomization("ReconciliationSucceeded", FINISHED, HUB_T0 + 10)
    ahead.kustomization("HealthCheckFailed", "Deployment/apps/web: timeout", HUB_T0 + 20)
    detail = read(hub_db, "cluster", {"name": "ahead-edge"}, HUB_T0 + 30, 1800)
    assert detail["state"] == "failed" and detail["failingSince"] == HUB_T0 + 20  # the hub's receipt
