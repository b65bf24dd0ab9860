"""Ingest through the real HTTP server, on SQLite and on PostgreSQL: Flux generic-hmac events,
Argo CD notifications and native reports; every refusal is a 4xx with a message, a log line
without a stack trace, and nothing stored."""

from __future__ import annotations

import json
import logging

import pytest
import requests

from promoter.hub import keys
from tests.support.hub_support import (
    LiveHub,
    argocd_body,
    flux_event,
    post_flux,
    register,
    report_count,
    sign,
)

M = "1" * 40
OLDER = "2" * 40


def _reconciler(db, cluster: str) -> list[tuple]:
    with db.transaction() as tx:
        return tx.rows(
            "SELECT name, role, state, revision FROM reconcilers WHERE cluster = ? ORDER BY name", (cluster,)
        )


def test_flux_event_is_stored_once_and_retries_are_idempotent(live_hub: LiveHub) -> None:
    key = register(live_hub.db, "edge-1")
    event = flux_event(
        f"dev@sha1:{M}", metadata={"cluster": "edge-1", "clusterType": "small", "environment": "dev"}
    )
    first = post_flux(live_hub.url, "edge-1", key, event)
    again = post_flux(live_hub.url, "edge-1", key, event)
    assert first.status_code == 201 and again.status_code == 200
    assert first.json()["id"] == again.json()["id"] and again.json()["duplicate"] is True
    assert report_count(live_hub.db) == 1
    assert _reconciler(live_hub.db, "edge-1") == [
        ("Kustomization/flux-system/platform", "apply", "success", M)
    ]


def test_flux_older_revision_key_and_failures_and_sources(live_hub: LiveHub) -> None:
    key = register(live_hub.db, "edge-1")
    old_key = flux_event(f"dev@sha1:{M}", revision_key="kustomize.toolkit.fluxcd.io/revision", name="apps")
    failed = flux_event(f"dev@sha1:{M}", severity="error", reason="HealthCheckFailed", name="infra")
    source = flux_event(f"dev@sha1:{M}", kind="GitRepository", reason="NewArtifact", name="flux-system")
    for event in (old_key, failed, source):
        assert post_flux(live_hub.url, "edge-1", key, event).status_code == 201
    assert _reconciler(live_hub.db, "edge-1") == [
        ("GitRepository/flux-system/flux-system", "source", "success", M),  # fetched: its job done
        ("Kustomization/flux-system/apps", "apply", "success", M),
        ("Kustomization/flux-system/infra", "apply", "failure", M),
    ]


def test_history_is_appended_never_rewritten(live_hub: LiveHub) -> None:
    key = register(live_hub.db, "edge-1")
    post_flux(live_hub.url, "edge-1", key, flux_event(f"dev@sha1:{OLDER}", offset=-5))
    post_flux(live_hub.url, "edge-1", key, flux_event(f"dev@sha1:{M}"))
    history = requests.get(f"{live_hub.url}/v1/history?cluster=edge-1", timeout=10).json()
    assert [h["revision"] for h in history] == [M, OLDER]
    # A late retry of the older event is history too, but does not move the latest state back.
    post_flux(live_hub.url, "edge-1", key, flux_event(f"dev@sha1:{OLDER}", offset=-4))
    assert report_count(live_hub.db) == 3
    assert _reconciler(live_hub.db, "edge-1")[0][3] == M


@pytest.mark.parametrize(
    ("case", "status", "words"),
    [
        ("bad signature", 401, "X-Signature does not match"),
        ("no signature", 401, "missing X-Signature"),
        ("unknown cluster", 404, "unknown cluster"),
        ("wrong content type", 415, "Content-Type must be application/json"),
        ("malformed JSON", 400, "not valid JSON"),
        ("oversized", 413, "over the limit"),
        ("contradicting metadata", 403, "contradicts the key"),
        ("replayed", 409, "older than the hub accepts"),
        ("missing field", 422, "missing 'involvedObject'"),
        ("revoked key", 401, "X-Signature does not match"),
    ],
)
def test_refusals_store_nothing_and_log_one_line(
    hub_db, case: str, status: int, words: str, caplog: pytest.LogCaptureFixture
) -> None:
    key = register(hub_db, "edge-1")
    event = flux_event(f"dev@sha1:{M}")
    body = json.dumps(event).encode()
    headers = {"Content-Type": "application/json", "X-Signature": sign(body, key)}
    path = "edge-1"
    if case == "bad signature":
        headers["X-Signature"] = sign(body, "not-the-key")
    elif case == "no signature":
        del headers["X-Signature"]
    elif case == "unknown cluster":
        path = "edge-9"
    elif case == "wrong content type":
        headers["Content-Type"] = "text/plain"
    elif case == "malformed JSON":
        body = b'{"involvedObject": '
        headers["X-Signature"] = sign(body, key)
    elif case == "oversized":
        body = json.dumps({**event, "message": "x" * 5000}).encode()
        headers["X-Signature"] = sign(body, key)
    elif case == "contradicting metadata":
        body = json.dumps(flux_event(f"dev@sha1:{M}", metadata={"clusterType": "large"})).encode()
        headers["X-Signature"] = sign(body, key)
    elif case == "replayed":
        body = json.dumps(flux_event(f"dev@sha1:{M}", offset=-7200)).encode()
        headers["X-Signature"] = sign(body, key)
    elif case == "missing field":
        body = json.dumps({k: v for k, v in event.items() if k != "involvedObject"}).encode()
        headers["X-Signature"] = sign(body, key)
    elif case == "revoked key":
        keys.revoke(hub_db, "edge-1")
        register(hub_db, "edge-1")  # a new key: the old one's signature no longer counts
    caplog.set_level(logging.WARNING, logger="promoter.hub")
    with LiveHub(hub_db, max_body=4096) as live:
        answer = requests.post(f"{live.url}/v1/ingest/flux/{path}", data=body, headers=headers, timeout=10)
    assert answer.status_code == status, answer.text
    assert words in answer.json()["error"]
    assert report_count(hub_db) == 0
    logged = [r for r in caplog.records if r.name == "promoter.hub"]
    assert logged and all(r.exc_info is None for r in logged)
    assert key not in caplog.text


def test_argocd_notification_with_bearer_key(live_hub: LiveHub) -> None:
    key = register(live_hub.db, "east-1", cluster_type="large")
    other = register(live_hub.db, "east-2", cluster_type="large")
    body = argocd_body(M)
    url = f"{live_hub.url}/v1/ingest/argocd/east-1"
    ok = requests.post(url, json=body, headers={"Authorization": f"Bearer {key}"}, timeout=10)
    assert ok.status_code == 201, ok.text
    assert _reconciler(live_hub.db, "east-1") == [
        ("Application/argocd/platform-small", "apply", "success", M)
    ]
    wrong = requests.post(url, json=body, headers={"Authorization": f"Bearer {other}"}, timeout=10)
    assert wrong.status_code == 403 and "the key is cluster 'east-2'" in wrong.json()["error"]
    none = requests.post(url, json=body, headers={"Authorization": "Bearer phk_nope"}, timeout=10)
    assert none.status_code == 401
    degraded = argocd_body(M, health="Degraded", phase="Succeeded")
    assert (
        requests.post(url, json=degraded, headers={"Authorization": f"Bearer {key}"}, timeout=10).status_code
        == 201
    )
    assert _reconciler(live_hub.db, "east-1")[0][2] == "failure"
    assert report_count(live_hub.db) == 2


def test_native_report_and_its_identity(live_hub: LiveHub) -> None:
    key = register(live_hub.db, "edge-1")
    body = {
        "reconciler": "custom/platform",
        "state": "success",
        "revision": f"dev@sha1:{M}",
        "timestamp": "2099-01-01T00:00:00Z",
    }
    headers = {"Authorization": f"Bearer {key}"}
    future = requests.post(f"{live_hub.url}/v1/reports", json=body, headers=headers, timeout=10)
    assert future.status_code == 422 and "in the future" in future.json()["error"]
    body["timestamp"] = 1.0e9
    assert (
        requests.post(f"{live_hub.url}/v1/reports", json=body, headers=headers, timeout=10).status_code == 409
    )
    body.pop("timestamp")
    missing = requests.post(f"{live_hub.url}/v1/reports", json=body, headers=headers, timeout=10)
    assert missing.status_code == 422 and "missing 'timestamp'" in missing.json()["error"]
    body.update(timestamp="2026-01-01T00:00:00+00:00", environment="prod")
    contradicts = requests.post(f"{live_hub.url}/v1/reports", json=body, headers=headers, timeout=10)
    assert contradicts.status_code == 403
    assert report_count(live_hub.db) == 0


def test_no_read_endpoint_or_page_shows_a_key(live_hub: LiveHub) -> None:
    key = register(live_hub.db, "edge-1")
    post_flux(live_hub.url, "edge-1", key, flux_event(f"dev@sha1:{M}"))
    token = keys.add_promoter_key(live_hub.db, "ci")[1]
    commit = {"environment": "dev", "sha": M, "branch": "dev", "mainCommit": "a" * 40}
    assert (
        requests.post(
            f"{live_hub.url}/v1/commits",
            json=commit,
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        ).status_code
        == 201
    )
    paths = [
        "/v1/environments",
        "/v1/environments/dev",
        "/v1/clusters",
        "/v1/clusters/edge-1",
        "/v1/history",
        "/v1/discrepancies",
        "/v1/drift",
        "/v1/stale",
        f"/v1/rollout?environment=dev&commit={M}",
        "/",
        "/environments/dev",
        "/clusters/edge-1",
        f"/rollout?environment=dev&commit={M}",
        "/history",
        "/discrepancies",
        "/drift",
        "/stale",
    ]
    for path in paths:
        answer = requests.get(live_hub.url + path, timeout=10)
        assert answer.status_code == 200, path
        assert key not in answer.text and token not in answer.text and "phk_" not in answer.text, path
    assert requests.get(f"{live_hub.url}/healthz", timeout=10).json()["ok"] is True


def test_a_path_cannot_forge_log_lines(live_hub: LiveHub, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="promoter.hub")
    answer = requests.post(
        f"{live_hub.url}/v1/ingest/flux/edge%0Aerror:%20forged",
        data=b"{}",
        headers={"Content-Type": "application/json", "X-Signature": "sha256=00"},
        timeout=10,
    )
    assert answer.status_code == 404
    assert all("\n" not in r.getMessage() for r in caplog.records)
    assert "edge\\nerror: forged" in caplog.text


def test_a_waved_commit_record_carries_each_folders_wave() -> None:
    """``POST /v1/commits`` from a waved environment: the wave that landed the commit and each
    cluster type's folder's wave and main commit, as ``hubapi.commit_record`` reads them from the
    tree's provenance; a malformed entry is refused naming it."""
    from promoter.gates.hubapi import _waves
    from promoter.hub.ingest import commit_from_json
    from promoter.hub.payloads import IngestError
    from promoter.platform.provenance import FolderProvenance, Provenance

    provenance = Provenance(
        environment="prod",
        main_commit="b" * 40,
        wave="canary",
        folders={
            "edge": FolderProvenance("b" * 40, "e" * 40, "canary"),
            "west": FolderProvenance("a" * 40, None, "fleet"),
        },
    )
    body = {"environment": "prod", "sha": "c" * 40, "branch": "prod", **_waves(provenance)}
    record = commit_from_json(body)
    assert record.wave == "canary"
    assert record.folders == (("edge", "canary", "b" * 40), ("west", "fleet", "a" * 40))
    assert _waves(Provenance(environment="dev", main_commit="b" * 40)) == {}
    with pytest.raises(IngestError) as refused:
        commit_from_json({**body, "folders": {"edge": "canary"}})
    assert refused.value.status == 422 and "'folders.edge'" in refused.value.message
