"""When each cluster was heard (promoter/hub/fleet.py ``heard``, written by store.py with each
batch of reports), on SQLite and PostgreSQL: a report within 30 minutes of the current
interval's end extends it, a later one closes it and starts another, a cluster whose reconcilers
do not heartbeat is never lost; and migration 11's backfill of the clusters a database held."""

from __future__ import annotations

import math

from promoter.hub import fleet
from promoter.hub.app import DEFAULT_STALE_AFTER
from promoter.hub.db import Database
from promoter.hub.ingest import ingest
from promoter.hub.keys import Cluster
from promoter.hub.payloads import Report
from promoter.hub.schema import MIGRATIONS
from promoter.hub.writer import GroupWriter
from tests.hub.test_dora_history import T0, P, _post
from tests.support.hub_support import flux_stream_event, register, rfc3339, sign


def _helm(db: Database, key: str, cluster: str, at: float) -> None:
    """A HelmRelease's success (a reconciler that does not heartbeat: it reports transitions)."""
    body, extra = flux_stream_event(
        "HelmRelease", "podinfo", "UpgradeSucceeded", f"upgraded at {at - T0:.0f}", rfc3339(at),
        revision="6.5.0", alert_metadata={"cluster": cluster, "clusterType": "small", "environment": "prod"},
    )  # fmt: skip
    ingest(
        db,
        "flux",
        cluster,
        {"content-type": "application/json", "x-signature": sign(body, key), **extra},
        body,
        at,
    )


def _intervals(db: Database) -> dict[str, list[tuple[float, float]]]:
    """Cluster -> the intervals it was heard in, the closed ones then the current one."""
    out: dict[str, list[tuple[float, float]]] = {}
    with db.transaction(write=False) as tx:
        for cluster, a, b in tx.rows("SELECT cluster, seen_from, seen_until FROM cluster_seen ORDER BY 1, 2"):
            out.setdefault(str(cluster), []).append((float(a) - T0, float(b) - T0))
        for name, a, b in tx.rows(
            "SELECT name, seen_since, last_seen FROM clusters WHERE last_seen IS NOT NULL"
        ):
            out.setdefault(str(name), []).append((float(a) - T0, float(b) - T0))
    return out


def test_the_lost_threshold_is_the_reads_default_stale_after() -> None:
    assert fleet.LOST_AFTER == DEFAULT_STALE_AFTER == 1800.0


def test_a_report_after_a_silence_starts_an_interval_and_nothing_else_writes_one(hub_db: Database) -> None:
    k = register(hub_db, "k", "prod", "small", T0 - 100)
    h = register(hub_db, "h", "prod", "small", T0 - 100)
    for at in (0, 600, 1200, 3000, 4800):  # 1800 s after 1200: still the same interval
        _post(hub_db, k, "k", "small", "ok", P["1"], T0 + at)
    for at in (0, 5000, 9000):
        _helm(hub_db, h, "h", T0 + at)
    _post(hub_db, k, "k", "small", "ok", P["1"], T0 + 6601)  # 1801 s after 4800: a new interval
    assert _intervals(hub_db) == {"k": [(0, 4800), (6601, 6601)], "h": [(0, 9000)]}
    with hub_db.transaction(write=False) as tx:
        lost = fleet.silences(tx, "prod")
    # h's reconciler does not heartbeat: its silence is no sign of trouble, it is never lost.
    assert lost == {"k": [(T0 + 6600, T0 + 6601), (T0 + 8401, math.inf)], "h": []}


def test_a_batch_writes_the_intervals_in_its_transaction(hub_db: Database) -> None:
    """Through the group writer: several reports of a cluster in a batch move its interval to the
    latest receipt; a cluster heard after a silence starts one."""
    writer = GroupWriter(hub_db)
    futures = []
    for name, at in (("k", 0), ("j", 0), ("k", 1000), ("k", 1500), ("j", 2500)):
        if at == 0:
            register(hub_db, name, "prod", "small", T0 - 100)
        report = Report(
            "flux", "Kustomization/flux-system/platform", "apply", "success", P["1"], "prod",
            "ReconciliationSucceeded", f"at {at}", T0 + at,
        )  # fmt: skip
        futures.append(writer.submit(Cluster(name, "prod", "small"), report, f"{name}{at}", T0 + at))
        if at == 0:
            futures[-1].result()
    for future in futures:
        future.result()
    assert _intervals(hub_db) == {"k": [(0, 1500)], "j": [(0, 0), (2500, 2500)]}


def test_migration_11_takes_each_cluster_as_heard_from_its_first_report_to_its_last_seen(
    hub_url: str,
) -> None:
    db = Database(hub_url)
    assert 11 not in db.migrate(tuple(m for m in MIGRATIONS if m[0] != 11))
    with db.transaction() as tx:
        for name, first, seen in (("a", 100, 5000), ("b", None, None), ("c", None, 300)):
            tx.run(
                "INSERT INTO clusters (name, environment, cluster_type, created_at, last_seen, first_report)"
                " VALUES (?, 'prod', 'small', ?, ?, ?)",
                (name, T0, None if seen is None else T0 + seen, None if first is None else T0 + first),
            )
            tx.run(
                "INSERT INTO cluster_registrations (cluster, environment, cluster_type, registered_at, first_report)"
                " VALUES (?, 'prod', 'small', ?, ?)",
                (name, T0, None if first is None else T0 + first),
            )
        # c's first registration reported at 50; registered again, it has not reported yet.
        tx.run(
            "INSERT INTO cluster_registrations (cluster, environment, cluster_type, registered_at, revoked_at,"
            " first_report) VALUES ('c', 'prod', 'small', ?, ?, ?)",
            (T0 - 1000, T0 - 10, T0 + 50),
        )
    assert db.migrate() == [11]
    # a: from its first report to its last seen; c: from its earlier registration's first report;
    # b never reported. What came between is not known: no silence is assumed before now.
    assert _intervals(db) == {"a": [(100, 5000)], "c": [(50, 300)]}
    with db.transaction(write=False) as tx:
        assert fleet.silences(tx, "prod") == {"a": [(T0 + 6800, math.inf)], "c": [(T0 + 2100, math.inf)]}
    db.close()
