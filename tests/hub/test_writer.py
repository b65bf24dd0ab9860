"""The group writer's seams: its counters land in the batch's transaction, and its listeners
hear which environments changed, after the commit, never for a heartbeat or a retry."""

from __future__ import annotations

from pathlib import Path

from promoter.hub import keys
from promoter.hub.db import Database
from promoter.hub.payloads import Report
from promoter.hub.writer import GroupWriter


def test_listeners_hear_changed_environments_and_counters_are_written(tmp_path: Path) -> None:
    db = Database(str(tmp_path / "hub.sqlite3"))
    db.migrate()
    keys.add_cluster_key(db, "edge-1", "prod", "small")
    with db.transaction() as tx:
        cluster = keys.cluster(tx, "edge-1")
    assert cluster is not None
    writer = GroupWriter(db)
    heard: list[frozenset[str]] = []
    writer.listeners.append(heard.append)
    report = Report("native", "platform", "apply", "success", "a" * 40, "prod", "Done", "", 100.0)  # type: ignore[arg-type]
    writer.store(cluster, report, "d1", 101.0)
    writer.store(cluster, report, "d1", 102.0)  # a retry
    writer.store(
        cluster,
        Report("native", "platform", "apply", "success", "a" * 40, "prod", "Done", "again", 110.0),
        "d2",
        111.0,
    )  # type: ignore[arg-type]
    assert heard == [frozenset({"prod"})]
    with db.transaction() as tx:
        counted = dict(tx.rows("SELECT labels, value FROM counters"))
    assert counted == {
        'source="native",outcome="stored"': 1,
        'source="native",outcome="duplicate"': 1,
        'source="native",outcome="unchanged"': 1,
    }
    db.close()
