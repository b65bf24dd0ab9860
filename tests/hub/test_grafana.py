"""The Grafana dashboard's SQL runs on the hub's PostgreSQL schema and reads what the hub holds:
each SQL panel's query, with Grafana's macros expanded as its PostgreSQL data source expands
them; each Prometheus panel's query reads metrics that the hub's ``/metrics`` serves."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from promoter.hub.holds import record_holds
from tests.support.hub_support import (
    LiveHub,
    flux_event,
    give_back_pg_database,
    new_pg_database,
    post_flux,
    register,
)
from tests.support.paths import ROOT

DASHBOARD = ROOT / "docs" / "grafana" / "promoter-hub.json"
M = "1" * 40


def expand(sql: str) -> str:
    """Grafana's macros for epoch-second columns, over all time, and the environment variable."""
    sql = re.sub(r"\$__unixEpochGroupAlias\((\w+), '1m'\)", r'floor(\1/60)*60 AS "time"', sql)
    sql = re.sub(r"\$__unixEpochFilter\((\w+)\)", r"\1 BETWEEN 0 AND 9999999999", sql)
    return sql.replace("$environment", "'dev'")


@pytest.fixture
def pg_db(postgres: str) -> Iterator[Database]:
    url, name = new_pg_database(postgres)
    db = Database(url)
    db.migrate()
    yield db
    db.close()
    give_back_pg_database(postgres, name)


def test_every_panel_query_runs_on_postgresql(pg_db: Database) -> None:
    hub_db = pg_db
    record_commit(hub_db, CommitRecord("dev", M, "dev", None, "a" * 40, None, (), ("dev",)), 1.0)
    with LiveHub(hub_db) as live:
        for name, severity in (("edge-1", "info"), ("edge-2", "error")):
            key = register(hub_db, name)
            post_flux(
                live.url,
                name,
                key,
                flux_event(
                    f"dev@sha1:{M}",
                    severity=severity,
                    reason="X" if severity == "error" else "ReconciliationSucceeded",
                ),
            )
    register(hub_db, "edge-3")
    held = {
        "wave": "",
        "reason": "incident 4711",
        "by": "alice",
        "at": 1e9,
        "until": None,
        "origin": "hold",
        "url": "",
    }
    record_holds(hub_db, "dev", [held], 2e9)
    dashboard = json.loads(DASHBOARD.read_text())
    variable = dashboard["templating"]["list"][0]["query"]
    results = {}
    with hub_db.transaction(write=False) as tx:
        assert tx.rows(variable) == [("dev",)]
        for panel in dashboard["panels"]:
            if "rawSql" in panel["targets"][0]:
                results[panel["title"]] = tx.rows(expand(panel["targets"][0]["rawSql"]))
    assert results["Rollout of each environment's head, per cluster type"] == [
        ("dev", "small", M[:12], "a" * 12, 3, 1, 1, 1)
    ]
    assert sorted(r[1] for r in results["Reports per minute, by state"]) == ["failure", "success"]
    assert results["Clusters per platform commit"] == [(f"dev {M[:12]}", 2), ("dev none", 1)]
    assert [r[0] for r in results["Stale clusters (silent for 30 minutes)"]] == ["edge-3"]
    assert [r[1] for r in results["Latest failures"]] == ["edge-2"]
    assert [r[:4] for r in results["Holds in force"]] == [("dev", None, "alice", "incident 4711")]


def test_every_prometheus_panel_reads_metrics_the_hub_serves(tmp_path: Path) -> None:
    from promoter.hub.metrics import Counters, exposition

    db = Database(str(tmp_path / "hub.sqlite3"))
    db.migrate()
    counters = Counters()
    counters.add("promoter_hub_reports_received_total", {"source": "flux", "outcome": "stored"})
    counters.add("promoter_hub_reports_refused_total", {"source": "flux", "status": "401"})
    served = {
        line.split()[2]
        for line in exposition(db, 1e9, 1800, 86400, counters).splitlines()
        if line.startswith("# TYPE")
    }
    db.close()
    dashboard = json.loads(DASHBOARD.read_text())
    exprs = [p["targets"][0]["expr"] for p in dashboard["panels"] if "expr" in p["targets"][0]]
    assert len(exprs) == 6
    for expr in exprs:
        names = set(re.findall(r"promoter_hub_\w+", expr))
        assert names and names <= served, expr
