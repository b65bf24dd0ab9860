"""The rows a report writes: its line of history, its reconciler's latest state and the
reconciler's times at its revision (store.py writes them, one statement each per batch)."""

from __future__ import annotations

from typing import Any

from promoter.hub.keys import Cluster
from promoter.hub.payloads import Report
from promoter.hub.sqlrows import FLOAT, TEXT

REPORT_TYPES = (*(TEXT,) * 11, FLOAT, FLOAT, TEXT)


INSERT_REPORT = (
    "INSERT INTO reports (cluster, environment, cluster_type, source, reconciler, role, state,"
    " revision, branch, reason, message, event_time, received_at, digest)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING RETURNING id"
)


def report_row(cluster: Cluster, report: Report, digest: str, now: float) -> tuple[Any, ...]:
    return (
        cluster.name,
        cluster.environment,
        cluster.cluster_type,
        report.source,
        report.reconciler,
        report.role,
        report.state,
        report.revision,
        report.branch,
        report.reason,
        report.message,
        report.event_time,
        now,
        digest,
    )


#: A reconciler's latest state; an event older than the one held (a late retry) leaves it.
LATEST = (
    "INSERT INTO reconcilers (cluster, name, environment, role, source, state, revision, reason,"
    " message, event_time, received_at, failing_since, last_report, heartbeat, failing_received)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (cluster, name) DO UPDATE SET role = excluded.role, source = excluded.source,"
    " heartbeat = excluded.heartbeat,"
    " state = excluded.state,"
    " revision = CASE WHEN excluded.revision = '' THEN reconcilers.revision ELSE excluded.revision END,"
    " reason = excluded.reason, message = excluded.message, event_time = excluded.event_time,"
    " received_at = excluded.received_at,"
    " failing_since = CASE WHEN excluded.state = 'failure'"
    " THEN COALESCE(reconcilers.failing_since, excluded.failing_since) ELSE NULL END,"
    " failing_received = CASE WHEN excluded.state = 'failure'"
    " THEN COALESCE(reconcilers.failing_received, excluded.failing_received) ELSE NULL END,"
    " last_report = excluded.last_report"
    # The guard of _supersedes, again: two PostgreSQL writers may insert the first row at once.
    " WHERE COALESCE(excluded.event_time, excluded.received_at)"
    " > COALESCE(reconcilers.event_time, reconcilers.received_at)"
    " OR (COALESCE(excluded.event_time, excluded.received_at)"
    " = COALESCE(reconcilers.event_time, reconcilers.received_at)"
    " AND (excluded.state <> 'progressing' OR reconcilers.state = 'progressing'))"
)


LATEST_TYPES = (*(TEXT,) * 9, FLOAT, FLOAT, FLOAT, "int8", "int4", FLOAT)


def latest_row(cluster: Cluster, report: Report, report_id: int, now: float) -> tuple[Any, ...]:
    """The parameters of ``LATEST``."""
    # When the failure began, on the cluster's clock (the event's own time: a delivery may come
    # late) and on the hub's (when the hub first heard of it).
    failing = (
        (report.event_time if report.event_time is not None else now) if report.state == "failure" else None
    )
    noticed = now if report.state == "failure" else None
    return (
        cluster.name,
        report.reconciler,
        cluster.environment,
        report.role,
        report.source,
        report.state,
        report.revision,
        report.reason,
        report.message,
        report.event_time,
        now,
        failing,
        report_id,
        1 if report.heartbeat else 0,
        noticed,
    )


#: The reconciler's times at a revision: on the cluster's clock, and (the ``_received``
#: columns) on the hub's.
DEPLOYMENT = (
    "INSERT INTO deployments (cluster, reconciler, revision, environment, first_seen,"
    " first_success, last_success, first_failure, last_failure, first_success_received,"
    " last_success_received, first_failure_received) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (cluster, reconciler, revision) DO UPDATE SET"
    " first_seen = CASE WHEN excluded.first_seen < deployments.first_seen"
    " THEN excluded.first_seen ELSE deployments.first_seen END,"
    " first_success = COALESCE(deployments.first_success, excluded.first_success),"
    " last_success = COALESCE(excluded.last_success, deployments.last_success),"
    " first_failure = COALESCE(deployments.first_failure, excluded.first_failure),"
    " last_failure = COALESCE(excluded.last_failure, deployments.last_failure),"
    " first_success_received = COALESCE(deployments.first_success_received, excluded.first_success_received),"
    " last_success_received = COALESCE(excluded.last_success_received, deployments.last_success_received),"
    " first_failure_received = COALESCE(deployments.first_failure_received, excluded.first_failure_received)"
)


DEPLOYMENT_TYPES = (*(TEXT,) * 4, *(FLOAT,) * 8)


def deployment_row(cluster: Cluster, report: Report, when: float, now: float) -> tuple[Any, ...]:
    """The parameters of ``DEPLOYMENT``: ``when`` on the cluster's clock, ``now`` on the hub's."""
    ok = when if report.state == "success" else None
    bad = when if report.state == "failure" else None
    ok_now = now if report.state == "success" else None
    bad_now = now if report.state == "failure" else None
    return (
        cluster.name,
        report.reconciler,
        report.revision,
        cluster.environment,
        when,
        ok,
        ok,
        bad,
        bad,
        ok_now,
        ok_now,
        bad_now,
    )
