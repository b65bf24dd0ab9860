"""Event streams replayed as the controllers produce them, through the real server, on SQLite
and PostgreSQL: notification-controller's bodies (Go's JSON, its metadata processing, its header
names) in the orders its goroutines and retries deliver them, OCI and Helm sources, and Argo CD
notifications rendered from the documented template. Each ends in the rollout count a Flux or
Argo CD user expects."""

from __future__ import annotations

import time
from typing import Any

from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from promoter.hub.reads import read
from tests.support.hub_support import (
    LiveHub,
    argocd_app,
    argocd_template_body,
    flux_stream_event,
    post_argocd_body,
    post_flux_body,
    register,
    report_count,
    rfc3339,
)

OLD, M = "a" * 40, "b" * 40
ALERT = {"cluster": "edge-1", "clusterType": "small", "environment": "dev"}
FINISHED = "Reconciliation finished in 2.3s, next run in 10m0s"


def _commits(db: Database, at: float) -> None:
    record_commit(db, CommitRecord("dev", OLD, "dev", None, "1" * 40, None, (), ("dev",)), at - 600)
    record_commit(db, CommitRecord("dev", M, "dev", OLD, "2" * 40), at)


def _state(db: Database, cluster: str = "edge-1", stale_after: float = 1800, later: float = 0) -> str:
    counts = read(db, "rollout", {"environment": "dev", "commit": M}, time.time() + later, stale_after)
    mine = read(db, "clusters", {"environment": "dev"}, time.time() + later, stale_after)
    state = next(c["state"] for c in mine if c["name"] == cluster)
    small = counts["clusterTypes"]["small"]
    assert small[state if state != "success" else "success"] >= 1  # the read and the rollout agree
    return str(state)


def _kustomization(reason: str, message: str, at: float, **kwargs: Any) -> tuple[bytes, dict[str, str]]:
    kwargs.setdefault("revision", f"dev@sha1:{M}")
    return flux_stream_event(
        "Kustomization", "platform", reason, message, rfc3339(at), alert_metadata=ALERT, **kwargs
    )


def test_same_second_events_in_either_order_decide_the_reconcile(live_hub: LiveHub) -> None:
    """ "Health check passed" (Progressing) and "Reconciliation finished" (ReconciliationSucceeded)
    of one reconcile carry the same second; either arrival order ends in success at M, and a
    retry of the first event after the second changes nothing."""
    key = register(live_hub.db, "edge-1")
    now = time.time()
    _commits(live_hub.db, now - 30)
    changed = _kustomization("Progressing", "Deployment/apps/web configured", now - 2)
    health = _kustomization("Progressing", "Health check passed in 1.02s", now)
    finished = _kustomization("ReconciliationSucceeded", FINISHED, now)
    for body, header in (changed, finished, health):  # the goroutines' order, not the controller's
        assert post_flux_body(live_hub.url, "edge-1", key, body, header).status_code == 201
    assert _state(live_hub.db) == "success"
    retried = post_flux_body(live_hub.url, "edge-1", key, health[0], health[1])
    assert retried.status_code == 200 and retried.json()["duplicate"] is True
    assert _state(live_hub.db) == "success"
    assert report_count(live_hub.db) == 3


def test_a_failed_reconcile_then_recovery_on_the_same_commit(live_hub: LiveHub) -> None:
    key = register(live_hub.db, "edge-1")
    now = time.time()
    _commits(live_hub.db, now - 60)
    failed = _kustomization(
        "HealthCheckFailed",
        "Deployment/apps/web: timeout waiting for: [Deployment/apps/web status: 'InProgress']",
        now - 40,
        severity="error",
    )
    assert post_flux_body(live_hub.url, "edge-1", key, *failed).status_code == 201
    assert _state(live_hub.db) == "failed"
    detail = read(live_hub.db, "clusters", {"environment": "dev"}, time.time(), 1800)[0]
    assert detail["failingReconciler"] == "Kustomization/flux-system/platform"
    assert "timeout waiting for" in detail["failingMessage"] and detail["failingSince"] is not None
    for body, header in (
        _kustomization("ReconciliationSucceeded", FINISHED, now - 1),
        _kustomization("Progressing", "Health check passed in 3s", now - 1),
    ):
        assert post_flux_body(live_hub.url, "edge-1", key, body, header).status_code == 201
    assert _state(live_hub.db) == "success"


def test_heartbeats_move_last_seen_and_add_no_history(live_hub: LiveHub) -> None:
    key = register(live_hub.db, "edge-1")
    now = time.time()
    _commits(live_hub.db, now - 1000)
    for i in range(6):  # one "Reconciliation finished" per interval, each message different
        body = _kustomization(
            "ReconciliationSucceeded",
            f"Reconciliation finished in {i}.1s, next run in 10m0s",
            now - 50 + 10 * i,
        )
        answer = post_flux_body(live_hub.url, "edge-1", key, *body)
        assert answer.status_code == (201 if i == 0 else 200), answer.text
    assert report_count(live_hub.db) == 1
    seen = read(live_hub.db, "cluster", {"name": "edge-1"}, time.time(), 1800)
    assert seen["reconcilerStates"][0]["message"].startswith("Reconciliation finished in 5.1s")
    assert seen["lastSeen"] >= now - 5
    assert _state(live_hub.db) == "success"


def test_oci_fed_kustomization_counts_at_its_origin_commit(live_hub: LiveHub) -> None:
    key = register(live_hub.db, "edge-1")
    now = time.time()
    _commits(live_hub.db, now - 30)
    digest = "latest@sha256:" + "c" * 64
    body = _kustomization(
        "ReconciliationSucceeded", FINISHED, now, revision=digest, origin_revision=f"dev@sha1:{M}"
    )
    assert post_flux_body(live_hub.url, "edge-1", key, *body).status_code == 201
    assert _state(live_hub.db) == "success"
    source = flux_stream_event(
        "OCIRepository",
        "platform",
        "NewArtifact",
        f"stored artifact for digest '{digest}'",
        rfc3339(now),
        revision=digest,
        origin_revision=f"dev@sha1:{M}",
        alert_metadata=ALERT,
    )
    assert post_flux_body(live_hub.url, "edge-1", key, *source).status_code == 201
    states = read(live_hub.db, "cluster", {"name": "edge-1"}, time.time(), 1800)["reconcilerStates"]
    assert {(r["name"], r["role"], r["revision"]) for r in states} == {
        ("Kustomization/flux-system/platform", "apply", M),
        ("OCIRepository/flux-system/platform", "source", M),
    }


def test_pre_rfc_0008_prefixed_keys_still_read(live_hub: LiveHub) -> None:
    key = register(live_hub.db, "edge-1")
    now = time.time()
    _commits(live_hub.db, now - 30)
    body, header = _kustomization(
        "ReconciliationSucceeded", FINISHED, now, legacy=True, extra={"checksum": "x", "token": "t"}
    )
    assert b'"kustomize.toolkit.fluxcd.io/revision"' in body and b"token" not in body
    assert post_flux_body(live_hub.url, "edge-1", key, body, header).status_code == 201
    assert _state(live_hub.db) == "success"


def test_helm_release_counts_for_the_clusters_platform_commit(live_hub: LiveHub) -> None:
    """A HelmRelease's revision is its chart version: it never names a commit. It counts for the
    platform commit its cluster runs: a failure since M was recorded fails the cluster, an
    upgrade in progress keeps it pending, and its success leaves the platform's verdict."""
    key = register(live_hub.db, "edge-1")
    now = time.time()
    _commits(live_hub.db, now - 60)
    assert (
        post_flux_body(
            live_hub.url, "edge-1", key, *_kustomization("ReconciliationSucceeded", FINISHED, now - 50)
        ).status_code
        == 201
    )
    assert _state(live_hub.db) == "success"

    def helm(reason: str, message: str, at: float, severity: str = "info") -> tuple[bytes, dict[str, str]]:
        return flux_stream_event(
            "HelmRelease",
            "podinfo",
            reason,
            message,
            rfc3339(at),
            severity=severity,
            revision="6.5.4+a1b2c3d4e5f6",
            extra={"token": "x", "app-version": "6.5.4"},
            alert_metadata=ALERT,
        )

    progressing = helm("Progressing", "Running 'upgrade' action with timeout of 5m0s", now - 40)
    assert post_flux_body(live_hub.url, "edge-1", key, *progressing).status_code == 201
    assert _state(live_hub.db) == "pending"
    failed = helm(
        "UpgradeFailed",
        "Helm upgrade failed for release apps/podinfo with chart podinfo@6.5.4: context deadline exceeded",
        now - 30,
        "error",
    )
    assert post_flux_body(live_hub.url, "edge-1", key, *failed).status_code == 201
    assert _state(live_hub.db) == "failed"
    fixed = helm(
        "UpgradeSucceeded",
        "Helm upgrade succeeded for release apps/podinfo.v3 with chart podinfo@6.5.4",
        now - 20,
    )
    assert post_flux_body(live_hub.url, "edge-1", key, *fixed).status_code == 201
    assert _state(live_hub.db) == "success"
    helm_row = next(
        r
        for r in read(live_hub.db, "cluster", {"name": "edge-1"}, time.time(), 1800)["reconcilerStates"]
        if r["name"].startswith("HelmRelease/")
    )
    assert helm_row["revision"] == "6.5.4+a1b2c3d4e5f6" and helm_row["role"] == "apply"


def test_argocd_recovery_on_the_same_revision_and_the_degraded_reason(live_hub: LiveHub) -> None:
    key = register(live_hub.db, "edge-1")
    now = time.time()
    _commits(live_hub.db, now - 60)
    resources = [
        {
            "kind": "Deployment",
            "namespace": "apps",
            "name": "web",
            "status": "Synced",
            "health": {"status": "Degraded", "message": 'Deployment "web" exceeded its progress deadline'},
        },
        {
            "kind": "Service",
            "namespace": "apps",
            "name": "web",
            "status": "Synced",
            "health": {"status": "Healthy"},
        },
    ]
    degraded = argocd_app(M, health="Degraded", reconciled_at=rfc3339(now - 30), resources=resources)
    body = argocd_template_body(degraded)
    assert b"\\u003c" not in body or b"<" not in body
    assert post_argocd_body(live_hub.url, "edge-1", key, body).status_code == 201
    assert _state(live_hub.db) == "failed"
    mine = read(live_hub.db, "clusters", {"environment": "dev"}, time.time(), 1800)[0]
    assert mine["failingMessage"] == 'Deployment/apps/web: Deployment "web" exceeded its progress deadline'
    assert mine["senders"] == ["argocd"]
    healthy = argocd_app(
        M, reconciled_at=rfc3339(now - 10), resources=[{**resources[0], "health": {"status": "Healthy"}}]
    )
    assert post_argocd_body(live_hub.url, "edge-1", key, argocd_template_body(healthy)).status_code == 201
    assert _state(live_hub.db) == "success"


def test_a_silent_healthy_argocd_cluster(live_hub: LiveHub) -> None:
    """With the documented heartbeat (a notification per ``status.reconciledAt``), silence past
    staleAfter is stale; a transitions-only template (no ``reconciledAt``) cannot heartbeat, so
    its healthy silence stays counted."""
    beating, quiet = register(live_hub.db, "edge-1"), register(live_hub.db, "edge-2")
    now = time.time()
    _commits(live_hub.db, now - 60)
    with_beat = argocd_template_body(argocd_app(M, reconciled_at=rfc3339(now - 5)))
    assert post_argocd_body(live_hub.url, "edge-1", beating, with_beat).status_code == 201
    transitions_only = argocd_template_body(argocd_app(M))
    assert post_argocd_body(live_hub.url, "edge-2", quiet, transitions_only).status_code == 201
    assert _state(live_hub.db, "edge-1") == "success" and _state(live_hub.db, "edge-2") == "success"
    an_hour = 3600.0
    assert _state(live_hub.db, "edge-1", later=an_hour) == "stale"
    assert _state(live_hub.db, "edge-2", later=an_hour) == "success"
    counts = read(live_hub.db, "rollout", {"environment": "dev", "commit": M}, now + an_hour, 1800)
    assert counts["clusterTypes"]["small"]["success"] == 1 and counts["clusterTypes"]["small"]["stale"] == 1


def test_a_late_retry_from_an_earlier_reconcile_does_not_move_the_state_back(live_hub: LiveHub) -> None:
    """notification-controller retries a post that failed (5xx, a reset connection): the retry of
    the previous reconcile's Progressing event at the older commit lands after the new
    reconcile's outcome. It is history; the reconciler stays at M, successful."""
    key = register(live_hub.db, "edge-1")
    now = time.time()
    _commits(live_hub.db, now - 60)
    earlier = _kustomization("Progressing", "Health check passed in 2s", now - 30, revision=f"dev@sha1:{OLD}")
    for body, header in (
        _kustomization("ReconciliationSucceeded", FINISHED, now - 30, revision=f"dev@sha1:{OLD}"),
        _kustomization("Progressing", "Deployment/apps/web configured", now - 5),
        _kustomization("ReconciliationSucceeded", FINISHED.replace("2.3s", "4.1s"), now - 4),
        earlier,  # the retry, last
    ):
        assert post_flux_body(live_hub.url, "edge-1", key, body, header).status_code == 201
    assert _state(live_hub.db) == "success"
    states = read(live_hub.db, "cluster", {"name": "edge-1"}, time.time(), 1800)["reconcilerStates"]
    assert [(r["state"], r["revision"]) for r in states] == [("success", M)]
