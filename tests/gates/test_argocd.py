"""The argocd gate against Argo CD's REST API, faked with ``responses`` using the shapes Argo CD
returns (``GET /api/v1/applications/<name>``, ``GET /api/v1/applications?selector=``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import responses

from promoter.clock import FakeClock
from promoter.errors import ConfigError, GateFailed, GateTimedOut
from promoter.forges.local import LocalForge
from promoter.gates import GateContext, build_gate
from promoter.gates.argocd import ArgoCDGate
from promoter.gates.runner import run_gates
from promoter.gitcmd import Git
from promoter.model import GateSpec, Source
from promoter.platform.repo import PlatformRepo
from tests.support.helpers import ControlPlaneFactory

SRC = Source("promoter.yaml", 30)
SERVER = "https://argocd.example.com"
TOKEN = "argocd-api-token-0123456789"
MERGE = "8f14e45fceea167a5a36dedd4bea2543" + "a1b2c3d4"
OLDER = "c9f0f895fb98ab9159f51fd0297e236d" + "11223344"
REPO = "https://github.com/org/platform-gitops.git"


def application(
    name: str,
    revision: str,
    *,
    sync: str = "Synced",
    health: str = "Healthy",
    health_message: str | None = None,
    phase: str = "Succeeded",
    operation_revision: str | None = None,
    operation_message: str = "successfully synced (all tasks run)",
) -> dict[str, Any]:
    """An Application as Argo CD's API returns it (v2.x), trimmed of managedFields."""
    op_rev = operation_revision or revision
    source = {"repoURL": REPO, "path": "qa/large", "targetRevision": "qa"}
    destination = {"server": "https://kubernetes.default.svc", "namespace": "apps"}
    app_health: dict[str, Any] = {"status": health}
    if health_message:
        app_health["message"] = health_message
    return {
        "metadata": {
            "name": name,
            "namespace": "argocd",
            "uid": "0b3c1c5e-9a57-4a8e-a9f5-3c0f4f1f0e21",
            "resourceVersion": "184467",
            "generation": 311,
            "creationTimestamp": "2024-05-02T09:14:55Z",
            "labels": {"promoter.dev/environment": "qa"},
        },
        "spec": {
            "source": source,
            "destination": destination,
            "project": "platform",
            "syncPolicy": {"automated": {"prune": True, "selfHeal": True}, "retry": {"limit": 5}},
        },
        "status": {
            "resources": [
                {
                    "group": "apps",
                    "version": "v1",
                    "kind": "Deployment",
                    "namespace": "apps",
                    "name": "api",
                    "status": sync,
                    "health": {"status": health},
                }
            ],
            "sync": {
                "status": sync,
                "comparedTo": {"source": source, "destination": destination},
                "revision": revision,
            },
            "health": app_health,
            "history": [
                {
                    "revision": op_rev,
                    "deployedAt": "2024-05-06T10:02:11Z",
                    "id": 41,
                    "source": source,
                    "deployStartedAt": "2024-05-06T10:02:08Z",
                    "initiatedBy": {"automated": True},
                }
            ],
            "reconciledAt": "2024-05-06T10:03:00Z",
            "operationState": {
                "operation": {
                    "sync": {"revision": op_rev, "syncStrategy": {"hook": {}}},
                    "initiatedBy": {"automated": True},
                    "retry": {"limit": 5},
                },
                "phase": phase,
                "message": operation_message,
                "syncResult": {"resources": [], "revision": op_rev, "source": source},
                "startedAt": "2024-05-06T10:02:08Z",
                "finishedAt": "2024-05-06T10:02:11Z",
            },
            "sourceType": "Directory",
            "summary": {"images": ["ghcr.io/org/api:1.4.2"]},
            "controllerNamespace": "argocd",
        },
    }


def app_url(name: str) -> str:
    return f"{SERVER}/api/v1/applications/{name}"


def error(message: str, code: int) -> dict[str, Any]:
    """Argo CD's (grpc-gateway) error body."""
    return {"error": message, "code": code, "message": message}


@pytest.fixture(autouse=True)
def token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGOCD_AUTH_TOKEN", TOKEN)


@pytest.fixture
def api() -> Any:
    with responses.RequestsMock() as mock:
        yield mock


def ctx(clock: FakeClock | None = None, **kw: Any) -> GateContext:
    return GateContext("qa", "c" * 40, kw.pop("merge", MERGE), "/platform", "qa", clock or FakeClock(0), **kw)


def run(spec: dict[str, Any], timeout: float = 600, context: GateContext | None = None) -> Any:
    gate = build_gate(GateSpec("argocd", {"server": SERVER, **spec}, SRC))
    context = context or ctx()
    return run_gates([gate], context, context.clock.now() + timeout, lambda _: None, 3600)


def test_success_when_every_application_is_synced_at_the_merge_commit_and_healthy(api: Any) -> None:
    api.get(app_url("qa-apps"), json=application("qa-apps", MERGE))
    api.get(app_url("qa-infra"), json=application("qa-infra", MERGE))
    [outcome] = run({"applications": ["qa-apps", "qa-infra"]})
    assert (outcome.gate, outcome.state) == ("argocd qa-apps,qa-infra", "success")
    assert outcome.message == f"2 applications Synced at {MERGE[:12]} and Healthy"
    assert [c.request.headers["Authorization"] for c in api.calls] == [f"Bearer {TOKEN}"] * 2


def test_applications_by_label_selector(api: Any) -> None:
    listing = {
        "metadata": {"resourceVersion": "184470"},
        "items": [application("qa-apps", MERGE), application("qa-infra", MERGE)],
    }
    api.get(
        f"{SERVER}/api/v1/applications",
        json=listing,
        match=[responses.matchers.query_param_matcher({"selector": "promoter.dev/environment=qa"})],
    )
    [outcome] = run({"selector": "promoter.dev/environment=qa"})
    assert outcome.message == f"2 applications Synced at {MERGE[:12]} and Healthy"


def test_degraded_at_the_merged_revision_fails_at_once(api: Any) -> None:
    api.get(app_url("qa-apps"), json=application("qa-apps", MERGE))
    degraded = application(
        "qa-infra",
        MERGE,
        health="Degraded",
        health_message='Deployment "api" exceeded its progress deadline',
    )
    api.get(app_url("qa-infra"), json=degraded)
    with pytest.raises(GateFailed) as err:
        run({"applications": ["qa-apps", "qa-infra"]})
    assert str(err.value) == (
        "qa: gate argocd qa-apps,qa-infra failed: qa-infra: Degraded at "
        f'{MERGE[:12]}: Deployment "api" exceeded its progress deadline'
    )


def test_a_failed_sync_of_the_merged_revision_fails(api: Any) -> None:
    failed = application(
        "qa-apps",
        OLDER,  # still running the older revision: the sync to M did not get through
        sync="OutOfSync",
        phase="Failed",
        operation_revision=MERGE,
        operation_message='one or more objects failed to apply, reason: Deployment.apps "api" is invalid',
    )
    api.get(app_url("qa-apps"), json=failed)
    with pytest.raises(GateFailed) as err:
        run({"applications": ["qa-apps"]})
    assert str(err.value).endswith(
        'qa-apps: sync failed: one or more objects failed to apply, reason: Deployment.apps "api" is invalid'
    )


def test_an_older_revisions_trouble_is_ignored_while_waiting_for_the_merged_one(api: Any) -> None:
    older = application(
        "qa-apps",
        OLDER,
        sync="OutOfSync",
        health="Degraded",
        phase="Failed",
        operation_message="older failure",
    )
    syncing = application(
        "qa-apps", MERGE, health="Progressing", phase="Running", operation_message="waiting for healthy state"
    )
    for body in (older, older, syncing, application("qa-apps", MERGE)):
        api.get(app_url("qa-apps"), json=body)
    clock = FakeClock(0)
    [outcome] = run({"applications": ["qa-apps"], "interval": "30s"}, context=ctx(clock))
    assert outcome.state == "success"
    assert clock.now() == 90  # pending at 0 and 30 (older revision), 60 (syncing), success at 90
    assert len(api.calls) == 4


def test_timeout_reports_what_each_application_showed_last(api: Any) -> None:
    api.get(app_url("qa-apps"), json=application("qa-apps", OLDER, sync="OutOfSync"))
    api.get(app_url("qa-infra"), json=application("qa-infra", MERGE, health="Progressing", phase="Succeeded"))
    with pytest.raises(GateTimedOut) as err:
        run({"applications": ["qa-apps", "qa-infra"]}, timeout=60)
    assert str(err.value) == (
        "qa: gates did not pass within the timeout: argocd qa-apps,qa-infra: pending (0 of 2 ready; "
        f"qa-apps: at {OLDER[:12]} (not this rollout yet), OutOfSync, Healthy; "
        f"qa-infra: Synced at {MERGE[:12]}, Progressing)"
    )


def test_a_multi_source_application_is_at_the_merge_when_one_of_its_revisions_is(api: Any) -> None:
    app = application("qa-apps", MERGE)
    sync = app["status"]["sync"]
    del sync["revision"]
    sync["revisions"] = ["4.2.0", MERGE]  # a Helm chart version, then the platform repo
    app["status"]["operationState"]["syncResult"]["revisions"] = ["4.2.0", MERGE]
    api.get(app_url("qa-apps"), json=app)
    [outcome] = run({"applications": ["qa-apps"]})
    assert outcome.state == "success"


def test_a_refused_token_fails_and_is_never_shown(api: Any) -> None:
    api.get(app_url("qa-apps"), json=error(f"invalid session: token {TOKEN} is expired", 16), status=401)
    with pytest.raises(GateFailed) as err:
        run({"applications": ["qa-apps"]})
    assert str(err.value) == (
        "qa: gate argocd qa-apps failed: Argo CD refused the token in ARGOCD_AUTH_TOKEN: "
        f"HTTP 401 from {SERVER}/api/v1/applications/qa-apps: invalid session: token *** is expired"
    )


def test_a_missing_token_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARGOCD_AUTH_TOKEN")
    gate = ArgoCDGate.from_spec({"server": SERVER, "applications": ["a"], "tokenEnv": "QA_ARGOCD_TOKEN"}, SRC)
    observation = gate.check(ctx())
    assert (observation.state, observation.message) == (
        "failure",
        "environment variable QA_ARGOCD_TOKEN is not set (an Argo CD API token)",
    )


def test_applications_not_found_yet_are_waited_for(api: Any) -> None:
    api.get(app_url("qa-new"), json=error('applications.argoproj.io "qa-new" not found', 5), status=404)
    api.get(app_url("qa-hidden"), json=error("permission denied", 7), status=403)
    api.get(f"{SERVER}/api/v1/applications", json={"metadata": {"resourceVersion": "184470"}, "items": None})
    gate = ArgoCDGate.from_spec(
        {
            "server": SERVER,
            "applications": ["qa-new", "qa-hidden"],
            "selector": "team=qa",
            "appNamespace": "qa",
        },
        SRC,
    )
    observation = gate.check(ctx())
    assert (observation.state, observation.message) == (
        "pending",
        "0 of 3 ready; qa-new: not found (or no permission to read it); "
        "qa-hidden: not found (or no permission to read it); +1 more",
    )
    assert [c.request.params for c in api.calls] == [
        {"appNamespace": "qa"},
        {"appNamespace": "qa"},
        {"appNamespace": "qa", "selector": "team=qa"},
    ]


def test_a_server_error_is_waited_out(api: Any) -> None:
    api.get(app_url("qa-apps"), body="upstream connect error", status=503)
    gate = ArgoCDGate.from_spec({"server": SERVER, "applications": ["qa-apps"]}, SRC)
    observation = gate.check(ctx())
    assert (observation.state, observation.message) == (
        "pending",
        f"HTTP 503 from {SERVER}/api/v1/applications/qa-apps: Service Unavailable",
    )


def test_revision_descendants_accepts_a_later_commit_of_the_environment_branch(
    api: Any, factory: ControlPlaneFactory
) -> None:
    Git(factory.root).run("init", "-q", "--bare", str(factory.platform))
    factory.commit_platform("qa", {"a.yaml": "1\n"})
    merge = factory.commit_platform("qa", {"a.yaml": "2\n"})
    later = factory.commit_platform("qa", {"a.yaml": "3\n"})
    platform = PlatformRepo(str(factory.platform))
    context = ctx(merge=merge, forge=LocalForge(Git(factory.platform), platform), platform=platform)
    api.get(app_url("qa-apps"), json=application("qa-apps", later))
    [outcome] = run({"applications": ["qa-apps"], "revision": "descendants"}, context=context)
    assert outcome.message == f"1 application Synced at {merge[:12]} and Healthy"
    with pytest.raises(GateTimedOut, match=r"at [0-9a-f]{12} \(not this rollout yet\)"):
        run({"applications": ["qa-apps"]}, timeout=30, context=copy.copy(context))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"applications": ["a"]}, "'server' must be a URL such as https://server.example.com"),
        (
            {"server": "argocd.example.com", "applications": ["a"]},
            "'server' must be an http:// or https:// URL with a host, got 'argocd.example.com'",
        ),
        ({"server": SERVER}, "needs 'applications' (names) or 'selector' (labels, e.g. env=qa)"),
        (
            {"server": SERVER, "applications": "a", "revision": "HEAD"},
            "'revision' must be one of merge, descendants, got 'HEAD'",
        ),
        (
            {"server": SERVER, "applications": "a", "token": "x"},
            "unknown field 'token', did you mean 'tokenEnv'?",
        ),
        (
            {"server": SERVER, "applications": "a", "insecure": "yes"},
            "'insecure' must be true or false, got a string",
        ),
        (["a"], "expects a mapping, got a list"),
    ],
)
def test_bad_specs_are_config_errors_naming_the_line(spec: Any, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        ArgoCDGate.from_spec(spec, SRC)
    assert str(err.value) == f"promoter.yaml:30: gate argocd: {message}"
