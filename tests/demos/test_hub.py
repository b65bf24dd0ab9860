"""``promoter demo`` with the hub: a real hub, simulated clusters of every cluster type, and
every environment gated on it; the run's table shows the hub gate's counts."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from promoter.clock import RealClock
from promoter.demos.promotion import run_demo
from promoter.hub.db import Database
from promoter.hub.reads import read


class QuickClock(RealClock):
    """Real time, twenty times faster: the demo's soaks and bakes of seconds pass in tenths,
    while its simulated clusters, real threads, still get real time to report to the hub."""

    def sleep(self, seconds: float) -> None:
        super().sleep(seconds / 20)
        self.skipped += seconds - seconds / 20

    def now(self) -> float:
        return super().now() + self.skipped

    skipped = 0.0


def test_the_demo_gates_every_environment_on_its_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("promoter.demos.promotion.RealClock", QuickClock)
    report = run_demo(tmp_path / "demo", progress_interval=60)
    assert report.ok
    every = [("hub 6/6 clusters (east-large 2/2, edge 2/2, west-small 2/2)", "success")]
    waves = [  # prod rolls out in two waves: each wave's hub gate judges its own cluster types
        ("hub 2/2 clusters (edge 2/2)", "success"),
        ("hub 4/4 clusters (east-large 2/2, west-small 2/2)", "success"),
    ]
    for result in report.results:
        hubs = [(g.gate, g.state) for g in result.gates if g.gate.startswith("hub ")]
        assert hubs == (waves if result.environment == "prod" else every), result.environment
    db = Database(str(tmp_path / "demo" / "hub.sqlite3"))
    overview = read(db, "environments", {}, 1e10, 1e12)
    assert [e["environment"] for e in overview] == ["dev", "qa", "prod"]
    with db.transaction() as tx:  # the runs recorded the Pipeline's graph with what they merged
        assert tx.rows("SELECT follows FROM environments ORDER BY position") == [
            ("[]",),
            ('["dev"]',),
            ('["qa"]',),
        ]
    assert read(db, "drift", {}, 1e10, 1e12) == []
    # One main change, which prod landed in two waves: one deployment in each environment, and in
    # each of prod's cluster types (the canary's with its wave, the fleet's with the last).
    delivery = read(db, "delivery", {}, time.time(), 1800)["environments"]
    assert [(e["environment"], e["deployments"], e["changes"]) for e in delivery] == [
        ("dev", 1, 1),
        ("qa", 1, 1),
        ("prod", 1, 1),
    ]
    assert {t: f["deployments"] for t, f in delivery[2]["clusterTypes"].items()} == {
        "east-large": 1,
        "edge": 1,
        "west-small": 1,
    }


def test_make_demo_hub_keeps_its_clusters_reporting_and_follows_a_new_run(tmp_path: Path) -> None:
    """``hub serve --demo-clusters`` (make demo-hub): each simulated cluster reports again at the
    commit it last reported, so the served pages stay fresh; a database replaced by a new demo
    run is noticed (the server then starts again on it)."""
    import requests

    from promoter.demos.hub import Heartbeats, SimulatedCluster, _post
    from promoter.hub import keys
    from promoter.hub.commits import CommitRecord, record_commit
    from tests.support.hub_support import LiveHub

    path = tmp_path / "hub.sqlite3"
    db = Database(str(path))
    db.migrate()
    sha = "5" * 40
    record_commit(db, CommitRecord("dev", sha, "dev", None, "6" * 40, None, (), ("dev",)), time.time())
    clusters = [
        SimulatedCluster(
            f"dev-{kind}-1", "dev", kind, kind, keys.add_cluster_key(db, f"dev-{kind}-1", "dev", kind)[1]
        )
        for kind in ("flux", "argocd")
    ]
    later = [time.time()]
    with LiveHub(db, clock=lambda: later[0]) as live, requests.Session() as session:
        assert all(_post(session, live.url, c, "dev", sha) for c in clusters)
        later[0] += 2400  # 40 minutes on: stale, with no heartbeat
        assert {c["name"]: c["state"] for c in read(db, "clusters", {}, later[0], 1800)} == {
            "dev-argocd-1": "stale",
            "dev-flux-1": "stale",
        }
        beats = Heartbeats(path, live.url)
        assert beats.beat() == 2
        states = read(db, "clusters", {}, later[0], 1800)
        assert {c["name"]: (c["state"], c["lastSeen"]) for c in states} == {
            "dev-argocd-1": ("success", later[0]),
            "dev-flux-1": ("success", later[0]),
        }
    assert not beats.replaced()
    db.close()
    path.unlink()
    assert beats.replaced()
    Database(str(path)).migrate()  # the next run's database, at the same path
    assert beats.replaced()
    beats.stop()
