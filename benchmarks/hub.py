"""``python -m benchmarks.hub``: the hub at thousands of clusters (docs/performance.md).

For each engine (SQLite, and a PostgreSQL server of its own): ``--clusters`` registered
clusters with ``--reconcilers`` reconcilers each, all holding a latest report at the previous
commit (written in bulk, untimed). Then, through the real server (``promoter hub serve`` in a
process of its own) on loopback:

- **ingest**: ``--connections`` keep-alive connections (a fleet's clusters post at once) post
  signed Flux events of the new commit for random (cluster, reconciler) pairs for ``--seconds``,
  from an asyncio client sending requests it signed beforehand (a load generator that costs
  little, so that the hub, not the client, is what runs out of CPU). The hub process is bound to
  one CPU and the client to the others (``--no-pin`` leaves both free): reports/s, p50/p99
  latency of each POST, the hub's CPU per report and reports per second of the hub's CPU (per core);
- **gate**: ``GET /v1/rollout`` of the new commit, as the ``hub`` gate asks it, p50 of 20;
- **steady**: ``--steady-clusters`` clusters, all reconcilers at the new commit, each posting
  one "Reconciliation finished" per round for ``--steady-rounds`` rounds (a round stands for a
  10-minute interval): the database's size after each quarter (flat: heartbeats add no
  history), its growth in bytes per cluster per day, and the hub's CPU per heartbeat;
- **pages** (``benchmarks/hub_pages.py``): ``/``, ``/environments/prod`` and ``/failing``, each
  p50 of 5 over HTTP, while rolling out with ``--failing`` clusters failing, then ``/`` and the
  environment's page once every cluster runs the new commit.

The last line sums up: ``engine=<e> clusters=<n> reports_s=<r> p50_ms=... p99_ms=...
server_cpu_ms_per_report=... reports_per_core_s=... database_cpu_ms_per_report=...
heartbeat_cpu_ms=... bytes_per_cluster_day=... gate_ms=... gate_query_ms=... overview_ms=...
environment_ms=... failing_ms=... overview_done_ms=... environment_done_ms=...
overview_kept_ms=... overview_cpu_ms=... environment_cpu_ms=... failing_cpu_ms=...``. The hub's CPU
is read from /proc for the hub's processes alone, apart from the load generator's.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import http.client
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests

from benchmarks import hub_pages
from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from promoter.hub.keys import digest
from promoter.hub.reads import read
from tests.support.hub_support import free_port, new_pg_database, pg_bin, postgres_server

OLD, NEW = "a" * 40, "b" * 40
TYPES = 20


def seed(db: Database, clusters: int, reconcilers: int) -> list[tuple[str, str]]:
    """Clusters (with their summaries), keys and every reconciler's latest report at OLD; (cluster,
    key) of each."""
    db.migrate()
    now = time.time()
    record_commit(db, CommitRecord("prod", OLD, "prod", None, "1" * 40, None, (), ("prod",)), now - 3600)
    record_commit(db, CommitRecord("prod", NEW, "prod", OLD, "2" * 40), now)
    senders = [(f"cluster-{i:05d}", f"phk_bench{i:05d}") for i in range(clusters)]
    with db.transaction() as tx:
        cursor: Any = tx.cursor
        mark = "%s" if db.dialect == "postgresql" else "?"

        def values(n: int) -> str:
            return ", ".join([mark] * n)

        cursor.executemany(
            "INSERT INTO clusters (name, environment, cluster_type, created_at, last_seen, platform_position,"
            f" platform_sha, platform_reconcilers, platform_ok) VALUES ({values(9)})",
            [
                (name, "prod", f"type-{i % TYPES:02d}", now, now, 0, OLD, reconcilers, reconcilers)
                for i, (name, _) in enumerate(senders)
            ],
        )
        cursor.executemany(
            f"INSERT INTO sender_keys (owner, role, digest, secret, created_at) VALUES ({values(5)})",
            [(name, "cluster", digest(key), key, now) for name, key in senders],
        )
        cursor.executemany(
            "INSERT INTO reconcilers (cluster, name, environment, role, source, state, revision, reason, message,"
            f" event_time, received_at, failing_since, last_report) VALUES ({values(13)})",
            [
                (
                    name,
                    f"Kustomization/flux-system/r{r:02d}",
                    "prod",
                    "apply",
                    "flux",
                    "success",
                    OLD,
                    "",
                    "",
                    now,
                    now,
                    None,
                    0,
                )
                for name, _ in senders
                for r in range(reconcilers)
            ],
        )
    return senders


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of process ``pid`` and its descendants, from /proc: the live
    ones', and the ended ones' their parents collected (a PostgreSQL backend whose client
    disconnected between two readings would otherwise take its CPU out of the difference)."""
    total = 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime, stime, cutime, cstime
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except (OSError, IndexError, ValueError):
        return total
    return total + sum(cpu_seconds(int(child)) for child in children)


@contextmanager
def server(url: str, workers: int) -> Iterator[tuple[str, int]]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "promoter",
            "hub",
            "serve",
            "--database",
            url,
            "--listen",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(400):
            try:
                if requests.get(f"{base}/healthz", timeout=1).ok:
                    break
            except requests.ConnectionError:
                time.sleep(0.05)
        yield base, proc.pid
    finally:
        proc.terminate()
        proc.wait(20)


def _event(rng: random.Random, name: str, reconcilers: int) -> bytes:
    event = {
        "involvedObject": {
            "kind": "Kustomization",
            "namespace": "flux-system",
            "name": f"r{rng.randrange(reconcilers):02d}",
        },
        "severity": "info",
        "reason": "ReconciliationSucceeded",
        "message": f"applied {rng.random()}",
        "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "metadata": {"revision": f"prod@sha1:{NEW}", "cluster": name},
    }
    return json.dumps(event).encode()


def deliveries(senders: list[tuple[str, str]], reconcilers: int, count: int, seed_value: int) -> list[bytes]:
    """``count`` whole HTTP/1.1 requests, each a signed Flux event of the new commit for a random
    (cluster, reconciler) pair, as notification-controller's generic-hmac provider posts it."""
    rng = random.Random(seed_value)
    out = []
    for _ in range(count):
        name, key = senders[rng.randrange(len(senders))]
        out.append(hub_pages.signed_request(name, key, _event(rng, name, reconcilers)))
    return out


async def _connection(
    port: int, requests: list[bytes], stop: float, latencies: list[float], statuses: list[int]
) -> None:
    """One keep-alive connection posting ``requests`` (taking each from the shared list) one after
    the other until ``stop`` or until none is left."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while requests and time.time() < stop:
            request = requests.pop()
            started = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            await reader.readexactly(length)
            latencies.append(time.perf_counter() - started)
            statuses.append(int(head.split(b" ", 2)[1]))
    finally:
        writer.close()


async def _post_all(
    port: int, requests: list[bytes], connections: int, seconds: float
) -> tuple[list[float], list[int]]:
    latencies: list[float] = []
    statuses: list[int] = []
    stop = time.time() + seconds
    await asyncio.gather(
        *(_connection(port, requests, stop, latencies, statuses) for _ in range(connections))
    )
    return latencies, statuses


@contextmanager
def pinned(hub_pid: int, pin: bool) -> Iterator[str]:
    """The hub process (each of its threads, and so the threads it starts) bound to one CPU and
    this process to the others, while inside: what was bound, to say with the figures. Without
    ``pin``, or with fewer than two CPUs for this process, nothing is bound."""
    cpus = set(os.sched_getaffinity(0))
    if not pin or len(cpus) < 2:
        yield "none"
        return
    hub_cpu = min(cpus)
    for task in Path(f"/proc/{hub_pid}/task").iterdir():
        os.sched_setaffinity(int(task.name), {hub_cpu})
    os.sched_setaffinity(0, cpus - {hub_cpu})
    try:
        yield f"hub on CPU {hub_cpu}, client on the other {len(cpus) - 1}"
    finally:
        os.sched_setaffinity(0, cpus)
        for task in Path(f"/proc/{hub_pid}/task").iterdir():
            os.sched_setaffinity(int(task.name), cpus)


def _heartbeats(
    port: int, owned: list[tuple[str, str]], reconcilers: int, rounds: int, first: int
) -> tuple[int, int]:
    """Each of ``owned`` clusters' reconcilers posts one "Reconciliation finished" per round
    (rounds stand for 10-minute intervals), in order: (reports, failures)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    sent = failures = 0
    for round_ in range(first, first + rounds):
        for name, key in owned:
            for r in range(reconcilers):
                body = _steady_event(name, r, round_)
                signature = "sha256=" + hmac.new(key.encode(), body, hashlib.sha256).hexdigest()
                conn.request(
                    "POST",
                    f"/v1/ingest/flux/{name}",
                    body,
                    {"Content-Type": "application/json", "X-Signature": signature},
                )
                answer = conn.getresponse()
                answer.read()
                sent += 1
                failures += answer.status not in (200, 201)
    return sent, failures


def _steady_event(name: str, reconciler: int, round_: int) -> bytes:
    event = {
        "involvedObject": {"kind": "Kustomization", "namespace": "flux-system", "name": f"r{reconciler:02d}"},
        "severity": "info",
        "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "message": f"Reconciliation finished in {1 + round_ % 7}.{round_ % 10}s, next run in 10m0s",
        "reason": "ReconciliationSucceeded",
        "metadata": {"cluster": name, "revision": f"prod@sha1:{NEW}"},
    }
    return json.dumps(event, separators=(",", ":")).encode()


def _heartbeat_process(
    port: int, owned: list[tuple[str, str]], reconcilers: int, rounds: int, first: int, threads: int
) -> tuple[int, int]:
    with ThreadPoolExecutor(threads) as pool:
        parts = list(
            pool.map(
                lambda i: _heartbeats(port, owned[i::threads], reconcilers, rounds, first), range(threads)
            )
        )
    return sum(p[0] for p in parts), sum(p[1] for p in parts)


def database_bytes(url: str) -> int:
    """The database's size on disk after a checkpoint (SQLite: pages in use and free; the WAL
    folded in), or PostgreSQL's ``pg_database_size`` after a VACUUM of the hot tables."""
    db = Database(url)
    try:
        if db.dialect == "sqlite":
            with db.transaction(write=False) as tx:
                tx.one("SELECT 1")
            conn = db._connection()
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return Path(db.path).stat().st_size
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            for table in ("reconcilers", "clusters", "reports"):
                conn.execute(f"VACUUM {table}")
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
            return int(row[0]) if row else 0
    finally:
        db.close()


def steady(
    base: str, pid: int, url: str, senders: list[tuple[str, str]], args: argparse.Namespace
) -> dict[str, Any]:
    """``--steady-clusters`` clusters at the new commit, every reconciler heartbeating once per
    round for ``--steady-rounds`` 10-minute rounds: the database's size after each quarter,
    the growth per cluster per day, and the hub's CPU per heartbeat."""
    port = int(base.rsplit(":", 1)[1])
    owned = senders[: args.steady_clusters]
    halves = [owned[0::2], owned[1::2]]

    def run(rounds: int, first: int) -> tuple[int, int]:
        with ProcessPoolExecutor(2) as pool:
            parts = list(
                pool.map(
                    _heartbeat_process,
                    [port] * 2,
                    halves,
                    [args.reconcilers] * 2,
                    [rounds] * 2,
                    [first] * 2,
                    [max(1, args.senders // 2)] * 2,
                )
            )
        return sum(p[0] for p in parts), sum(p[1] for p in parts)

    run(1, 0)  # every reconciler moves to the new commit: a transition each, then steady
    sizes = [database_bytes(url)]
    quarter = max(1, args.steady_rounds // 4)
    before = cpu_seconds(pid)
    sent = failed = 0
    for i in range(4):
        n, bad = run(quarter, 1 + i * quarter)
        sent, failed = sent + n, failed + bad
        sizes.append(database_bytes(url))
    used = cpu_seconds(pid) - before
    days = 4 * quarter * 600 / 86400
    return {
        "steady_reports": sent,
        "steady_failed": failed,
        "db_bytes": sizes,
        "bytes_per_cluster_day": round((sizes[-1] - sizes[0]) / len(owned) / days, 1),
        "heartbeat_cpu_ms": round(1000 * used / max(sent, 1), 3),
    }


#: Requests signed before the ingest phase, per second of it: more than one hub process takes.
DELIVERIES_PER_SECOND = 5000


def postmaster_pid(url: str) -> int | None:
    """The PostgreSQL server's main process, when it runs on this machine (its backends are its
    children), else None; None for SQLite."""
    if not url.startswith("postgresql://"):
        return None
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT setting FROM pg_settings WHERE name = 'data_directory'").fetchone()
    try:
        return int((Path(str(row[0])) / "postmaster.pid").read_text().split()[0]) if row else None
    except (OSError, ValueError, IndexError):
        return None


def ingest(
    base: str, pid: int, senders: list[tuple[str, str]], args: argparse.Namespace, db_pid: int | None = None
) -> dict[str, Any]:
    """``--connections`` connections posting signed events for ``--seconds``, with the hub's CPU
    over that time (its processes', from /proc) and the database server's (``db_pid``)."""
    port = int(base.rsplit(":", 1)[1])
    requests = deliveries(senders, args.reconcilers, int(args.seconds * DELIVERIES_PER_SECOND), 1)
    requests.reverse()  # taken from the end: in the order made
    with pinned(pid, args.pin) as binding:
        before, db_before = cpu_seconds(pid), cpu_seconds(db_pid) if db_pid else 0.0
        started = time.time()
        latencies, statuses = asyncio.run(_post_all(port, requests, args.connections, args.seconds))
        elapsed = time.time() - started
        used = cpu_seconds(pid) - before
        db_used = cpu_seconds(db_pid) - db_before if db_pid else None
    latencies.sort()

    def ms_each(seconds: float) -> float:
        return round(1000 * seconds / max(len(latencies), 1), 3)

    return {
        "reports": len(latencies),
        "failed": sum(status not in (200, 201) for status in statuses),
        "connections": args.connections,
        "pinned": binding,
        "reports_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(1000 * latencies[len(latencies) // 2], 2),
        "p99_ms": round(1000 * latencies[int(len(latencies) * 0.99)], 2),
        "server_cpu_ms_per_report": ms_each(used),
        "reports_per_core_s": round(len(latencies) / used) if used else None,
        "hub_cores_busy": round(used / elapsed, 2),
        "database_cpu_ms_per_report": ms_each(db_used) if db_used is not None else None,
        "ran_out": not requests,
    }


def timed(url: str, times: int) -> float:
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        requests.get(url, timeout=60).raise_for_status()
        spent.append(time.perf_counter() - started)
    return round(1000 * statistics.median(spent), 1)


def query_time(url: str, times: int) -> float:
    """The gate's query alone, in this process: one cluster type's rollout, median of ``times``."""
    db = Database(url)
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        read(
            db,
            "rollout",
            {"environment": "prod", "commit": NEW, "clusterType": ["type-00"], "times": "false"},
            time.time(),
            1800,
        )
        spent.append(time.perf_counter() - started)
    db.close()
    return round(1000 * statistics.median(spent), 1)


def run_engine(engine: str, db_url: str, args: argparse.Namespace) -> dict[str, Any]:
    db = Database(db_url)
    started = time.monotonic()
    senders = seed(db, args.clusters, args.reconcilers)
    db.close()
    seeded = round(time.monotonic() - started, 1)
    with server(db_url, args.workers) as (base, pid):
        figures = ingest(base, pid, senders, args, postmaster_pid(db_url))
        figures.update(steady(base, pid, db_url, senders, args))
        gate = timed(f"{base}/v1/rollout?environment=prod&commit={NEW}&clusterType=type-00&times=false", 20)
        gate_all = timed(f"{base}/v1/rollout?environment=prod&commit={NEW}&times=false", 20)
        query = query_time(db_url, 20)
        db_pid = postmaster_pid(db_url)

        def cpu() -> float:
            return cpu_seconds(pid) + (cpu_seconds(db_pid) if db_pid else 0.0)

        pages = hub_pages.measure(base, db_url, senders, args.reconcilers, args.failing, _post_all, cpu)
    return {
        "engine": engine,
        "clusters": args.clusters,
        "reconcilers": args.reconcilers,
        "seed_s": seeded,
        **figures,
        "gate_ms": gate,
        "gate_query_ms": query,
        "gate_all_types_ms": gate_all,
        **pages,
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hub")
    parser.add_argument("--engines", default="sqlite,postgresql")
    parser.add_argument("--clusters", type=int, default=10_000)
    parser.add_argument("--reconcilers", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--connections", type=int, default=256, help="keep-alive connections posting in the ingest phase"
    )
    parser.add_argument(
        "--no-pin",
        dest="pin",
        action="store_false",
        help="leave the hub and the client on every CPU (by default the hub gets one, the client the rest)",
    )
    parser.add_argument(
        "--senders", type=int, default=16, help="threads posting heartbeats in the steady phase"
    )
    parser.add_argument("--workers", type=int, default=1, help="hub processes (promoter hub serve --workers)")
    parser.add_argument(
        "--steady-clusters", type=int, default=20, help="clusters heartbeating in the steady run"
    )
    parser.add_argument(
        "--steady-rounds", type=int, default=72, help="10-minute rounds of heartbeats (72: half a day)"
    )
    parser.add_argument(
        "--failing", type=int, default=500, help="clusters failing the new commit while the pages are timed"
    )
    args = parser.parse_args()
    results = []
    with ExitStack() as stack:
        work = Path(tempfile.mkdtemp(prefix="promoter-hub-bench-"))
        stack.callback(shutil.rmtree, work, ignore_errors=True)
        for engine in args.engines.split(","):
            if engine == "sqlite":
                url = str(work / "hub.sqlite3")
            else:
                bin_dir = pg_bin()
                if bin_dir is None:
                    raise SystemExit("PostgreSQL is not installed: run scripts/deps/postgres.sh")
                url, _ = new_pg_database(stack.enter_context(postgres_server(bin_dir)))
            results.append(run_engine(engine, url, args))
            print(json.dumps(results[-1]), flush=True)
    for r in results:
        print(
            " ".join(
                f"{k}={r[k]}"
                for k in (
                    "engine",
                    "clusters",
                    "reconcilers",
                    "reports_s",
                    "p50_ms",
                    "p99_ms",
                    "server_cpu_ms_per_report",
                    "reports_per_core_s",
                    "database_cpu_ms_per_report",
                    "heartbeat_cpu_ms",
                    "bytes_per_cluster_day",
                    "gate_ms",
                    "gate_query_ms",
                    *hub_pages.PAGES,
                    *hub_pages.DONE,
                    *hub_pages.READS,
                    "overview_kept_ms",
                    "overview_cpu_ms",
                    "environment_cpu_ms",
                    "failing_cpu_ms",
                )
            )
        )


if __name__ == "__main__":
    main()
