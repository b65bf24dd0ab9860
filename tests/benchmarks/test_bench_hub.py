"""``make bench-hub`` at a few clusters, so that it cannot rot: its load generator's requests are
accepted by the real server (signed, answered 201, parsed back), the figures it prints are all
there and consistent, never how fast they are."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks import hub as bench


def test_the_hub_benchmark_runs_end_to_end(tmp_path: Path) -> None:
    args = argparse.Namespace(
        clusters=12,
        reconcilers=3,
        seconds=0.5,
        connections=4,
        pin=True,
        senders=2,
        workers=1,
        steady_clusters=2,
        steady_rounds=4,
        failing=3,
    )
    figures = bench.run_engine("sqlite", str(tmp_path / "hub.sqlite3"), args)
    # every request made was answered (``ran_out`` says the hub took them all before the time was
    # up: on a quiet machine 0.5 s of requests can be served in less, a figure, not a fault)
    assert figures["reports"] > 0 and figures["failed"] == 0 and isinstance(figures["ran_out"], bool)
    assert figures["reports_per_core_s"] > 0 and figures["server_cpu_ms_per_report"] > 0
    assert figures["database_cpu_ms_per_report"] is None  # SQLite: the hub's own process
    assert figures["steady_reports"] == 2 * 3 * 4 and figures["steady_failed"] == 0
    # heartbeats add no history: at most a page or two that SQLite's b-tree balancing allocates
    assert figures["db_bytes"][-1] - figures["db_bytes"][0] <= 2 * 4096, figures["db_bytes"]
    # there and measured (a query of a dozen clusters can round to 0.0 ms on a quiet machine)
    pages = ("overview_ms", "environment_ms", "failing_ms", "overview_done_ms", "environment_done_ms")
    pages += (*(k.replace("_ms", "_cpu_ms") for k in pages), "overview_kept_ms")
    assert all(
        isinstance(figures[k], float) and figures[k] >= 0 for k in ("gate_ms", "gate_query_ms", *pages)
    )
    assert figures["failing_clusters"] == 3  # each failure posted was answered


def test_deliveries_are_whole_signed_requests() -> None:
    senders = [("cluster-00000", "phk_a"), ("cluster-00001", "phk_b")]
    first, *_ = bench.deliveries(senders, 2, 3, seed_value=7)
    head, _, body = first.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0].startswith("POST /v1/ingest/flux/cluster-0000")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    assert int(headers["Content-Length"]) == len(body)
    assert headers["X-Signature"].startswith("sha256=")
    assert bench.deliveries(senders, 2, 3, seed_value=7) == bench.deliveries(senders, 2, 3, seed_value=7)
