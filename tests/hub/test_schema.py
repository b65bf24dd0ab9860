"""The hub's migrations (promoter/hub/schema.py, run by ``Database.migrate``) on SQLite and
PostgreSQL: version 7 writes the registrations a database of before knew, and a version missing
below the newest still runs when it comes (lines of work merged in another order than numbered)."""

from __future__ import annotations

from promoter.hub.db import Database
from promoter.hub.fleet import Registration, registrations
from promoter.hub.schema import MIGRATIONS

T0 = 1_790_000_000.0
REPORT = (
    "INSERT INTO reports (cluster, environment, cluster_type, source, reconciler, role, state, revision,"
    " branch, reason, message, event_time, received_at, digest)"
    " VALUES (?, 'prod', 'small', 'flux', 'Kustomization/flux-system/platform', 'apply', 'success',"
    " 'p1', 'prod', 'ReconciliationSucceeded', '', ?, ?, ?)"
)


def test_version_7_writes_each_cluster_s_registration_and_first_report(hub_url: str) -> None:
    db = Database(hub_url)
    before = tuple(m for m in MIGRATIONS if m[0] <= 5)
    assert db.migrate(before) == [1, 2, 3, 4, 5]
    with db.transaction() as tx:
        clusters = (("a", None, T0 + 300), ("b", T0 + 900, T0 + 800), ("c", None, None), ("d", None, T0 + 50))
        for name, revoked, seen in clusters:
            tx.run(
                "INSERT INTO clusters (name, environment, cluster_type, created_at, revoked_at, last_seen)"
                " VALUES (?, 'prod', 'small', ?, ?, ?)",
                (name, T0, revoked, seen),
            )
        for name, at in (("a", 200), ("a", 100), ("b", 800)):  # d's reports were pruned
            tx.run(REPORT, (name, T0 + at, T0 + at, f"{name}{at}"))
    assert db.migrate(tuple(m for m in MIGRATIONS if m[0] <= 7)) == [6, 7]
    with db.transaction(write=False) as tx:
        found = registrations(tx, "prod")
    assert found == [
        Registration("a", "small", T0, None, T0 + 100),  # its first report
        Registration("b", "small", T0, T0 + 900, T0 + 800),
        Registration("c", "small", T0, None, None),  # never reported
        Registration("d", "small", T0, None, T0),  # reported, when no longer known: from its registration
    ]
    db.close()


def test_a_version_below_the_newest_runs_when_it_comes(hub_url: str) -> None:
    """A database migrated without version 6 (a line of work merged after 7 was out) takes it when
    the code that has it comes."""
    db = Database(hub_url)
    lacking = tuple(m for m in MIGRATIONS if m[0] != 6)
    assert db.migrate(lacking)[-1] == max(m[0] for m in lacking)
    stand_in = (6, "another line of work's", ("CREATE TABLE six (x INTEGER)",))
    merged = tuple(sorted((*lacking, next((m for m in MIGRATIONS if m[0] == 6), stand_in))))
    assert db.migrate(merged) == [6]
    assert db.migrate(merged) == []
    with db.transaction(write=False) as tx:
        versions = [v for (v,) in tx.rows("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == [m[0] for m in merged]
    db.close()
