"""SIGKILL of ``promoter hub serve`` while clusters report loses no acknowledged report, on
both engines; the restarted hub resumes, and a retry of an acknowledged delivery stays one row."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
from pathlib import Path

import pytest
import requests

from promoter.hub.db import Database
from tests.support.hub_support import register, report_count, served


def _body(i: int) -> dict[str, object]:
    return {
        "reconciler": f"Kustomization/flux-system/r{i % 20}",
        "state": "success",
        "revision": f"dev@sha1:{i:040x}",
        "timestamp": time.time(),
    }


def test_sigkill_during_ingest_loses_no_acknowledged_report(hub_db: Database) -> None:
    key = register(hub_db, "edge-1")
    headers = {"Authorization": f"Bearer {key}"}
    acked: dict[int, dict[str, object]] = {}
    stop = threading.Event()

    def sender(base: str) -> None:
        session = requests.Session()
        i = 0
        while not stop.is_set():
            body = _body(i)
            try:
                answer = session.post(
                    f"{base}/v1/reports",
                    data=json.dumps(body),
                    headers={**headers, "Content-Type": "application/json"},
                    timeout=5,
                )
            except requests.RequestException:
                return  # the hub died under this request: it was never acknowledged
            if answer.status_code == 201:
                acked[answer.json()["id"]] = body
            i += 1

    with served(hub_db.url) as (proc, base):
        thread = threading.Thread(target=sender, args=(base,))
        thread.start()
        deadline = time.monotonic() + 20
        while len(acked) < 50 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        stop.set()
        thread.join(10)
    assert len(acked) >= 50
    with hub_db.transaction() as tx:
        stored = {int(r[0]) for r in tx.rows("SELECT id FROM reports")}
    assert set(acked) <= stored
    before = report_count(hub_db)
    with served(hub_db.url) as (_, base):
        # The restarted hub takes reports again, and a retry of an acknowledged one is a no-op.
        first_id, first_body = next(iter(acked.items()))
        retry = requests.post(
            f"{base}/v1/reports",
            data=json.dumps(first_body),
            headers={**headers, "Content-Type": "application/json"},
            timeout=5,
        )
        assert retry.status_code == 200 and retry.json() == {
            "id": first_id,
            "cluster": "edge-1",
            "duplicate": True,
        }
        fresh = requests.post(f"{base}/v1/reports", json=_body(10**6), headers=headers, timeout=5)
        assert fresh.status_code == 201
    assert report_count(hub_db) == before + 1


def test_closing_the_database_leaves_another_threads_transaction_to_finish(tmp_path: Path) -> None:
    """A background read (the key cache's check, say) still running when the hub closes its
    database finishes, and its connection is closed by its own thread after: closing a
    connection another thread is using crashed SQLite's driver (a segfault)."""
    db = Database(str(tmp_path / "hub.sqlite3"))
    db.migrate()
    inside = threading.Event()
    found: list[object] = []
    conns: list[sqlite3.Connection] = []

    def reader() -> None:
        with db.transaction(write=False) as tx:
            conns.append(db._connection())
            inside.set()
            count = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000)"
            found.append(tx.one(count + " SELECT count(*) FROM c"))

    thread = threading.Thread(target=reader)
    thread.start()
    inside.wait(10)
    db.close()  # while the reader's transaction is open
    thread.join(30)
    assert found == [(300000,)]
    with pytest.raises(sqlite3.ProgrammingError):  # closed by the reader's thread, once done
        conns[0].execute("SELECT 1")
    with db.transaction(write=False) as tx:  # a closed database opens a new connection
        assert tx.one("SELECT 1") == (1,)
    db.close()
