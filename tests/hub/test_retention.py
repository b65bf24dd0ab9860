"""Storage stays bounded, on both engines: heartbeats add no history, and ``--retain`` prunes
history older than the retention in the background (the pruner's thread, as serve runs it)."""

from __future__ import annotations

from promoter.hub import keys
from promoter.hub.db import Database
from promoter.hub.payloads import Report
from promoter.hub.server import Pruner, parse_retention
from promoter.hub.store import store_report
from tests.support.hub_support import report_count

DAY = 86400.0
T = 1_700_000_000.0  # in the past: the background round uses the real clock


def _store(db: Database, state: str, revision: str, at: float, reason: str = "", message: str = "") -> None:
    with db.transaction() as tx:
        cluster = keys.cluster(tx, "edge-1")
    assert cluster is not None
    report = Report(
        "flux",
        "Kustomization/flux-system/platform",
        "apply",
        state,
        revision,
        "dev",  # type: ignore[arg-type]
        reason or state,
        message,
        at,
    )
    store_report(db, cluster, report, f"{state}-{revision}-{at}-{message}", at)


def test_only_transitions_are_history(hub_db: Database) -> None:
    keys.add_cluster_key(hub_db, "edge-1", "dev", "small")
    for i in range(50):
        _store(hub_db, "success", "a" * 40, T + 600 * i, message=f"Reconciliation finished in {i}s")
    assert report_count(hub_db) == 1
    _store(hub_db, "failure", "a" * 40, T + 40_000)
    _store(hub_db, "failure", "a" * 40, T + 40_600)  # the same failure again: no new history
    _store(hub_db, "success", "a" * 40, T + 41_200)  # recovery: a transition
    with hub_db.transaction() as tx:
        assert [r[0] for r in tx.rows("SELECT state FROM reports ORDER BY id")] == [
            "success",
            "failure",
            "success",
        ]
        seen = tx.one("SELECT last_seen FROM clusters WHERE name = 'edge-1'")
        latest = tx.one("SELECT state, received_at FROM reconcilers")
    assert seen == (T + 41_200,) and latest == ("success", T + 41_200)


def test_retention_prunes_old_history_in_the_background(hub_db: Database) -> None:
    keys.add_cluster_key(hub_db, "edge-1", "dev", "small")
    for day in range(10):  # a transition a day
        _store(hub_db, "success" if day % 2 else "failure", f"{day:x}" * 40, T + day * DAY)
    assert report_count(hub_db) == 10
    pruner = Pruner(hub_db, parse_retention("3d"), every=3600)
    assert pruner.run_once(T + 10 * DAY) == 7  # received before day 7: days 0 to 6
    with hub_db.transaction() as tx:
        left = tx.rows("SELECT received_at FROM reports ORDER BY received_at")
        revisions = tx.rows("SELECT DISTINCT revision FROM deployments ORDER BY revision")
    assert [r[0] for r in left] == [T + d * DAY for d in (7, 8, 9)]
    # Per-revision rows of revisions no reconciler is at any more go with them; the current stays.
    assert ("9" * 40,) in revisions and ("0" * 40,) not in revisions
    background = Pruner(hub_db, parse_retention("1d"), every=3600).start()
    background.stop()  # its first round runs at once, with the real clock: everything is older
    assert report_count(hub_db) == 0


def test_retention_parses_days_and_durations() -> None:
    assert parse_retention("90d") == 90 * DAY and parse_retention("36h") == 36 * 3600
