"""``promoter demo`` with the hub: a real hub, simulated clusters of every cluster type, and
every environment gated on it; the run's table shows the hub gate's counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from promoter.cli.demo import run_demo
from promoter.clock import RealClock
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
    monkeypatch.setattr("promoter.cli.demo.RealClock", QuickClock)
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
    names = [e["environment"] for e in read(db, "environments", {}, 1e10, 1e12)]
    assert names == ["dev", "qa", "prod"]
    assert read(db, "drift", {}, 1e10, 1e12) == []
