"""Reading senders' bodies (pure): Flux's revision formats, Argo CD's single- and multi-source
applications, the native form's strictness; and the test harness's own rule that under CI a
missing PostgreSQL or chromium fails instead of skipping."""

from __future__ import annotations

import pytest

from promoter.hub.payloads import (
    IngestError,
    argocd_notification,
    flux_event,
    flux_revision,
    native_report,
    split_revision,
)
from tests.support.hub_support import argocd_body, missing
from tests.support.hub_support import flux_event as make_flux_event

SHA = "731f7eaddfb6af01cb2173e18f0f75b0ba780ef1"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"main@sha1:{SHA}", (SHA, "main")),
        (f"release/v2@sha1:{SHA}", (SHA, "release/v2")),
        (f"main/{SHA}", (SHA, "main")),  # before Flux 2.0
        (SHA, (SHA, "")),
        ("latest@sha256:0123", ("latest@sha256:0123", "")),  # an OCI artifact: kept whole
    ],
)
def test_revisions(text: str, expected: tuple[str, str]) -> None:
    assert split_revision(text) == expected


OTHER = "0123456789abcdef0123456789abcdef01234567"
KUSTOMIZE = "kustomize.toolkit.fluxcd.io"


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"revision": f"main@sha1:{SHA}"}, f"main@sha1:{SHA}"),
        # Flux's order: commit, then originRevision, then revision.
        ({"revision": f"main@sha1:{OTHER}", "commit": SHA}, SHA),
        ({"revision": f"main@sha1:{OTHER}", "originRevision": f"main@sha1:{SHA}"}, f"main@sha1:{SHA}"),
        # Older controllers' keys carry the API group, at the same rank as the plain ones.
        ({f"{KUSTOMIZE}/revision": f"main@sha1:{SHA}"}, f"main@sha1:{SHA}"),
        ({"revision": f"main@sha1:{OTHER}", f"{KUSTOMIZE}/originRevision": SHA}, SHA),
        # Of two keys with one name, the first in sorted order.
        ({"b.io/revision": OTHER, "a.io/revision": SHA}, SHA),
        # A value that names no commit gives way to one that does, and is kept when none does.
        ({"originRevision": "latest@sha256:0123", "revision": f"main@sha1:{SHA}"}, f"main@sha1:{SHA}"),
        ({"originRevision": "latest@sha256:0123", "revision": "6.2.1"}, "latest@sha256:0123"),
        ({"summary": "x", "cluster": "edge-1"}, ""),
    ],
)
def test_flux_revision(metadata: dict[str, str], expected: str) -> None:
    assert flux_revision(metadata) == expected
    report = flux_event(make_flux_event(None, metadata=metadata))
    assert (report.revision, report.branch) == split_revision(expected)


def test_flux_states_and_identity() -> None:
    event = make_flux_event(f"dev@sha1:{SHA}", metadata={"cluster": "edge-1", "summary": "x"})
    report = flux_event(event)
    assert (report.state, report.role, report.reconciler) == (
        "success",
        "apply",
        "Kustomization/flux-system/platform",
    )
    assert report.claimed == {"cluster": "edge-1"}
    assert flux_event(make_flux_event(None, reason="Progressing")).state == "progressing"
    assert flux_event(make_flux_event(None, severity="error", reason="BuildFailed")).revision == ""
    helm = flux_event(make_flux_event(f"dev@sha1:{SHA}", kind="HelmRelease", reason="UpgradeSucceeded"))
    assert (helm.state, helm.role) == ("success", "apply")
    with pytest.raises(IngestError, match="'severity' must be info or error"):
        flux_event({**event, "severity": "fatal"})
    with pytest.raises(IngestError, match="'timestamp' must be an RFC 3339 time with a zone"):
        flux_event({**event, "timestamp": "yesterday"})
    with pytest.raises(IngestError, match="'metadata' must be an object of strings"):
        flux_event({**event, "metadata": {"revision": 7}})


def test_argocd_single_and_multi_source() -> None:
    report = argocd_notification(argocd_body(SHA))
    assert (report.state, report.revision, report.branch, report.reason) == (
        "success",
        SHA,
        "dev",
        "Synced/Healthy/Succeeded",
    )
    body = argocd_body(SHA)
    app = body["app"]
    del app["status"]["sync"]["revision"]
    app["status"]["sync"]["revisions"] = [SHA, "f" * 40]
    assert argocd_notification(app).revision == SHA  # the Application itself, multi-source
    running = argocd_notification(argocd_body(SHA, phase="Running"))
    assert running.state == "progressing"
    failed = argocd_notification(argocd_body(SHA, phase="Failed"))
    assert failed.state == "failure"
    app["status"] = "not an object"
    assert argocd_notification(app).state == "progressing"
    with pytest.raises(IngestError, match=r"missing 'app\.metadata\.name'"):
        argocd_notification({"app": {"metadata": {}}})


def test_native_form_is_strict() -> None:
    good = {"reconciler": "x", "state": "failure", "timestamp": "2026-11-23T17:00:00+01:00", "revision": SHA}
    assert native_report(good).event_time == 1795449600.0
    with pytest.raises(IngestError, match="unknown field 'sate'"):
        native_report({**good, "sate": "success"})
    with pytest.raises(IngestError, match="'state' must be one of success, failure, progressing"):
        native_report({**good, "state": "ok"})
    with pytest.raises(IngestError, match="'role' must be apply or source"):
        native_report({**good, "role": "both"})


def test_missing_tools_fail_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set and PostgreSQL"):
        missing("PostgreSQL's binaries are not installed")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        missing("PostgreSQL's binaries are not installed")
