"""The rollout of a platform commit per cluster type, and the other reads, on both engines:
success at M or a first-parent descendant, failures that are this rollout's, stale clusters
left out of the percentage, history kept."""

from __future__ import annotations

from promoter.hub import keys
from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from promoter.hub.payloads import Report
from promoter.hub.reads import read
from promoter.hub.rollout import NotFound
from promoter.hub.store import store_report

M0, M, M2, SIDE = "0" * 40, "1" * 40, "2" * 40, "3" * 40
T = 1_000_000.0


def _report(
    cluster: str, db: Database, reconciler: str, state: str, revision: str, at: float, role: str = "apply"
) -> None:
    with db.transaction() as tx:
        found = keys.cluster(tx, cluster)
    assert found is not None
    report = Report("native", reconciler, role, state, revision, "dev", state, "", None)  # type: ignore[arg-type]
    store_report(db, found, report, f"{cluster}-{reconciler}-{revision}-{state}-{at}", at)


def _world(db: Database) -> None:
    for sha, parent, at in ((M0, None, T - 500), (M, M0, T), (M2, M, T + 50)):
        record_commit(
            db,
            CommitRecord(
                "dev",
                sha,
                "dev",
                parent,
                f"main-{sha[0]}",
                None,
                (("small", "hello-functional"),),
                ("dev", "qa"),
            ),
            at,
        )
    for name in ("s1", "s2", "s3", "s4", "s5"):
        keys.add_cluster_key(db, name, "dev", "small")
    for name in ("l1", "l2"):
        keys.add_cluster_key(db, name, "dev", "large")
    keys.add_cluster_key(db, "q1", "qa", "small")
    _report("s1", db, "platform", "success", M, T + 10)
    _report("s2", db, "platform", "success", M2, T + 60)  # a descendant of M
    _report("s3", db, "platform", "success", M0, T + 20)  # still at the older commit
    _report("s4", db, "platform", "failure", M, T + 30)
    # s5 never reports: stale
    _report("l1", db, "platform", "success", M, T + 15)
    _report("l1", db, "infra", "success", M0, T + 16)  # a second platform reconciler, behind
    _report("l2", db, "app", "failure", "f" * 40, T - 100)  # failing since before M: not M's fault
    _report("l2", db, "app", "failure", "f" * 40, T + 40)
    _report("l2", db, "platform", "success", M, T + 40)


def test_rollout_counts_per_cluster_type(hub_db: Database) -> None:
    _world(hub_db)
    answer = read(hub_db, "rollout", {"environment": "dev", "commit": M}, T + 100, 600)
    small, large = answer["clusterTypes"]["small"], answer["clusterTypes"]["large"]
    assert {k: small[k] for k in ("total", "success", "failed", "pending", "stale")} == {
        "total": 5,
        "success": 2,
        "failed": 1,
        "pending": 1,
        "stale": 1,
    }
    assert small["failedClusters"] == ["s4"] and small["percent"] == 50.0  # 2 of 4 fresh
    assert {k: large[k] for k in ("total", "success", "failed", "pending", "stale")} == {
        "total": 2,
        "success": 1,
        "failed": 0,
        "pending": 1,
        "stale": 0,
    }
    assert answer["commit"] == M and answer["mainCommit"] == "main-1"
    # Time to each percent of the fresh clusters: s1 at +10, s2 at +60 (first success at M2).
    assert small["timeToPercent"]["25"] == 10.0 and small["timeToPercent"]["50"] == 60.0
    assert small["timeToPercent"]["75"] is None


def test_rollout_by_main_commit_prefix_and_cluster_types(hub_db: Database) -> None:
    _world(hub_db)
    by_main = read(hub_db, "rollout", {"environment": "dev", "commit": M[:7]}, T + 100, 600)
    assert by_main["commit"] == M
    only = read(
        hub_db, "rollout", {"environment": "dev", "commit": M, "clusterType": ["large"]}, T + 100, 600
    )
    assert list(only["clusterTypes"]) == ["large"]
    # Much later every cluster is stale: nothing counts, nothing passes.
    late = read(hub_db, "rollout", {"environment": "dev", "commit": M}, T + 100_000, 600)
    assert late["clusterTypes"]["small"]["stale"] == 5 and late["clusterTypes"]["small"]["percent"] == 0.0
    try:
        read(hub_db, "rollout", {"environment": "dev", "commit": SIDE}, T, 600)
    except NotFound as err:
        assert "no platform commit or main commit" in str(err)
    else:
        raise AssertionError("an unknown commit must be NotFound")


def test_reads_environment_drift_stale_and_discrepancies(hub_db: Database) -> None:
    _world(hub_db)
    now, stale = T + 100, 600.0
    env = read(hub_db, "environment", {"name": "dev"}, now, stale)
    assert env["head"]["commit"] == M2
    # Deployed as the head's rollout counts it: only s2 runs M2, healthy (s1 and s4 are at M).
    assert env["targets"] == [
        {"clusterType": "small", "deploymentTarget": "hello-functional", "clusters": 5, "deployed": 1}
    ]
    assert env["rollout"]["clusterTypes"]["small"]["success"] == 1
    drifted = {d["name"]: d["behind"] for d in read(hub_db, "drift", {"environment": "dev"}, now, stale)}
    assert drifted == {"s1": 1, "s3": 2, "s4": 1, "s5": None, "l1": 2, "l2": 1}
    assert [s["name"] for s in read(hub_db, "stale", {}, now, stale)] == ["s5", "q1"]
    record_commit(hub_db, CommitRecord("qa", SIDE, "qa", None, "main-1"), T)
    found = read(hub_db, "discrepancies", {}, now, stale)
    assert found[0] == {
        "kind": "promotion",
        "upstream": "dev",
        "downstream": "qa",
        "upstreamMainCommit": "main-2",
        "downstreamMainCommit": "main-1",
    }
    drifts = [d for d in found[1:] if d["kind"] == "drift"]
    assert {d["name"] for d in drifts} == {"s1", "s3", "s4", "s5", "l1", "l2", "q1"}
    # A failing cluster is a discrepancy too: s4 fails at M, l2's app since before M (each is
    # pending in the head M2's rollout, which neither failure is about).
    failing = {d["name"]: d["state"] for d in found[1:] if d["kind"] == "failing"}
    assert failing == {"s4": "pending", "l2": "pending"}
    assert len(found) == 1 + len(drifts) + len(failing)
    names = [e["environment"] for e in read(hub_db, "environments", {}, now, stale)]
    assert names == ["dev", "qa"]
    detail = read(hub_db, "cluster", {"name": "l2"}, now, stale)
    assert [r["name"] for r in detail["reconcilerStates"]] == ["app", "platform"]
    # l2's app failed twice with the same reason: one transition, the repeat only moved last-seen.
    assert len(detail["history"]) == 2


def test_commits_are_recorded_once_and_keep_the_pipeline_order(hub_db: Database) -> None:
    record = CommitRecord("qa", M, "qa", None, "x", None, (), ("dev", "qa", "prod"))
    assert record_commit(hub_db, record, T) is True
    assert record_commit(hub_db, record, T + 1) is False
    with hub_db.transaction() as tx:
        assert tx.rows("SELECT name FROM environments ORDER BY position") == [("dev",), ("qa",), ("prod",)]
        assert tx.one("SELECT COUNT(*) FROM platform_commits") == (1,)
