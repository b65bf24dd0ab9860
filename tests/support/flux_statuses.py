"""A stand-in for Flux's commit-status path, by release, to replay event streams through the
``commitStatus`` gate.

The streams (``tests/fixtures/flux/*.json``) are what kustomize-controller sends
notification-controller during one rollout on three clusters: each entry is the event body (the
fields of fluxcd/pkg's ``eventv1.Event``, which the ``generic-hmac`` provider forwards as they
are; metadata keys still prefixed with the API group, as the controller sends them) and when it
is sent, in seconds after the merge. They are written
from kustomize-controller's code (186fb3b, ``internal/controller/kustomization_controller.go``):
the change set and "Health check passed" with ``Progressing``; "Reconciliation finished" with
``ReconciliationSucceeded`` and ``commit_status: update``; a health check that times out with
``severity: error`` and ``HealthCheckFailed``; a Kustomization whose dependencies are not ready
yet with an info ``DependencyNotReady`` event on the revision it has not applied.

``NotificationController`` turns each event into the commit status the ``github`` provider
posts, or none, as notification-controller's code does (2e46958 and the tags named):

- kustomize-controller 1.9 with ``DisableCommitStatusEvent`` does not send the success event
  (fluxcd/kustomize-controller#1755);
- 2.8 (notification-controller v1.8.1 to v1.8.4, ``internal/server/event_handlers.go``): an
  event with neither the ``commit`` key nor ``commit_status: update`` is dropped, so failures
  are (#1373); 2.9 (v1.9.0, #1317) lets ``severity: error`` through again; up to 2.7 nothing is
  dropped here;
- the github notifier (``internal/notifier/github.go``) skips ``Progressing``, needs a revision,
  posts ``success`` for info and ``failure`` for error, the reason split at capitals and lowered
  as the description, and nothing when the context's latest status there says the same;
- the context is ``spec.commitStatusExpr`` (CEL over ``event``, ``provider``, ``alert``; a
  Python function here) or ``<kind>/<name>/<first part of the Provider's UID>``, lowered
  (``provider_commit_status.go``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from promoter.clock import FakeClock
from promoter.model import Release, Status
from tests.support.paths import TESTS

GROUP = "kustomize.toolkit.fluxcd.io"
#: CEL's view of a commitStatusExpr: (event, provider, alert) as maps -> the context.
StatusExpr = Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], str]


@dataclass(frozen=True)
class Sent:
    """One event as kustomize-controller sends it: when (seconds after the merge), from which
    cluster, and its body."""

    at: float
    cluster: str
    body: dict[str, Any]


def stream(name: str, branch: str, sha: str) -> list[Sent]:
    """The events of ``tests/fixtures/flux/<name>.json``, about ``<branch>@sha1:<sha>``."""
    text = (TESTS / "fixtures" / "flux" / f"{name}.json").read_text()
    entries = json.loads(text.replace("{revision}", f"{branch}@sha1:{sha}"))
    return [Sent(float(e["at"]), e["cluster"], e["event"]) for e in entries]


@dataclass(frozen=True)
class Cluster:
    """One cluster's Flux: its github Provider's UID, its ``commitStatusExpr`` if any, the
    Alert's ``eventMetadata``, and kustomize-controller's feature gate."""

    name: str
    provider_uid: str
    status_expr: StatusExpr | None = None
    disable_commit_status_event: bool = False

    @property
    def alert_metadata(self) -> dict[str, str]:
        return {"cluster": self.name}


def per_cluster(event: dict[str, Any], provider: dict[str, Any], alert: dict[str, Any]) -> str:
    """The docs' expression: ``"kustomization/" + event.involvedObject.name + "/" +
    event.metadata.cluster`` (the Alert's eventMetadata is merged into the event's metadata)."""
    return "kustomization/" + event["involvedObject"]["name"] + "/" + event["metadata"]["cluster"]


@dataclass
class NotificationController:
    """What a commit-status provider posts for each event, by Flux release (major, minor)."""

    release: Release
    clusters: dict[str, Cluster]
    posted: dict[tuple[str, str], Status] = field(default_factory=dict)  # (sha, context) -> latest

    def status_for(self, sent: Sent) -> tuple[str, Status] | None:
        """The commit and the status the provider posts for ``sent``; None when it posts none."""
        cluster = self.clusters[sent.cluster]
        event, metadata = sent.body, sent.body.get("metadata", {})
        success_event = metadata.get(f"{GROUP}/commit_status") == "update"
        if success_event and cluster.disable_commit_status_event and self.release >= (2, 9):
            return None  # kustomize-controller does not send it at all
        if self._dropped(event, success_event) or event["reason"] == "Progressing":
            return None
        revision = metadata.get(f"{GROUP}/revision", "")
        if "@sha1:" not in revision:
            return None  # "missing revision metadata": nothing is posted
        sha = revision.rsplit("@sha1:", 1)[1]
        state = {"info": "success", "error": "failure"}[event["severity"]]
        status = Status(self._context(cluster, event), state, _description(event["reason"]))
        latest = self.posted.get((sha, status.context))
        if latest and (latest.state, latest.description) == (status.state, status.description):
            return None  # the github notifier's duplicate check
        self.posted[(sha, status.context)] = status
        return sha, status

    def _dropped(self, event: dict[str, Any], success_event: bool) -> bool:
        if self.release < (2, 8):
            return False
        has_commit = bool(event.get("metadata", {}).get("event.toolkit.fluxcd.io/commit"))
        if has_commit or success_event:
            return False
        return self.release < (2, 9) or event["severity"] != "error"

    def _context(self, cluster: Cluster, event: dict[str, Any]) -> str:
        if cluster.status_expr is None:
            kind, name = event["involvedObject"]["kind"], event["involvedObject"]["name"]
            return f"{kind}/{name}/{cluster.provider_uid.split('-')[0]}".lower()
        combined = {_strip(k): v for k, v in event.get("metadata", {}).items()} | cluster.alert_metadata
        provider = {
            "metadata": {"name": "platform-repo", "namespace": "flux-system", "uid": cluster.provider_uid}
        }
        alert = {"spec": {"eventMetadata": cluster.alert_metadata}}
        return cluster.status_expr({**event, "metadata": combined}, provider, alert)


def _strip(key: str) -> str:
    return key.removeprefix(f"{GROUP}/")


def _description(reason: str) -> str:
    """``HealthCheckFailed`` -> ``health check failed``, as ``formatNameAndDescription`` does."""
    return " ".join(re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", reason)).lower()


class Replay(FakeClock):
    """A clock on which the clusters' events arrive as the gate waits: at each sleep, every event
    due by then goes through ``controller``, and what it posts is handed to ``post``."""

    def __init__(
        self,
        events: list[Sent],
        controller: NotificationController,
        post: Callable[[str, Status], None],
    ) -> None:
        super().__init__(0)
        self.pending = sorted(events, key=lambda e: e.at)
        self.controller, self.post = controller, post
        self.deliver()

    def deliver(self) -> None:
        while self.pending and self.pending[0].at <= self.t:
            posted = self.controller.status_for(self.pending.pop(0))
            if posted:
                self.post(*posted)

    def sleep(self, seconds: float) -> None:
        super().sleep(seconds)
        self.deliver()


def clusters(
    *, expr: StatusExpr | None = None, disable_commit_status_event: bool = False
) -> dict[str, Cluster]:
    """The three qa clusters of the streams, each with its own Provider."""
    uids = {
        "qa-east-1": "5f3c9a1e-2b7d-4c1e-8f0a-6d2e9b4c7a11",
        "qa-west-1": "a81d44c2-93f0-4b5e-b7c8-1e2f3a4b5c6d",
        "qa-west-2": "0c9c2e41-7f6a-4d3b-9e8c-5a4b3c2d1e0f",
    }
    return {n: Cluster(n, uid, expr, disable_commit_status_event) for n, uid in uids.items()}
