"""What senders post, read into one ``Report``: Flux notification-controller events
(``generic-hmac``), Argo CD notifications (a webhook body made with ``toJson``), and the
promoter's native form. Pure: no database, no clock. A body that cannot be read is an
``IngestError`` with the HTTP status to answer and a message naming the field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

State = Literal["success", "failure", "progressing"]
STATES: tuple[State, ...] = ("success", "failure", "progressing")
#: Flux kinds that fetch sources: their success says an artifact was fetched, not applied.
FLUX_SOURCES = {"GitRepository", "OCIRepository", "Bucket", "HelmRepository", "HelmChart", "ExternalArtifact"}
FLUX_SUCCESS = {
    "ReconciliationSucceeded",
    "UpgradeSucceeded",
    "InstallSucceeded",
    "TestSucceeded",
    "RollbackSucceeded",
    "UninstallSucceeded",
}
#: Flux kinds whose controller posts an event at every reconcile, changed or not (kustomize-
#: controller's "Reconciliation finished in X, next run in Y"): their silence means the cluster is
#: silent. helm-controller and the source controllers post only when something happens.
FLUX_HEARTBEATS = {"Kustomization"}
#: Flux's own order for the commit an event is about (notification-controller's commit status
#: providers): the commit key, else the origin revision (an OCI artifact built from a commit),
#: else the revision.
FLUX_REVISION_KEYS = ("commit", "originRevision", "revision")
#: The metadata keys that say who sent a report; a value that contradicts the key's cluster is refused.
IDENTITY_KEYS = {"cluster": "name", "clusterType": "cluster_type", "environment": "environment"}
_REVISION = re.compile(r"(?:(?P<branch>.*)@)?sha1:(?P<sha>[0-9a-f]{40})")
_OLD_REVISION = re.compile(r"(?P<branch>.+)/(?P<sha>[0-9a-f]{40})")
_SHA = re.compile(r"[0-9a-f]{40}")
MAX_TEXT = 2000


class IngestError(Exception):
    """A report refused: ``status`` is the HTTP status to answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(slots=True)
class Report:
    """One report, as read from a delivery. Not frozen (nothing changes one once built): one is
    built per delivery in the event loop, where a frozen dataclass's ``__init__`` costs three
    times a plain one's."""

    source: str
    reconciler: str
    role: str
    state: State
    revision: str
    branch: str
    reason: str
    message: str
    event_time: float | None
    claimed: dict[str, str] = field(default_factory=dict)
    #: Whether this reconciler's sender reports at every reconcile even when nothing changed, so
    #: that its silence can mark its cluster stale.
    heartbeat: bool = True


def decode(body: bytes) -> dict[str, Any]:
    """The JSON object in ``body``, or a 400 saying why not."""
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError) as err:
        raise IngestError(400, f"the body is not valid JSON: {err}") from err
    if not isinstance(value, dict):
        raise IngestError(400, "the body must be a JSON object")
    return value


def split_revision(text: str) -> tuple[str, str]:
    """(sha, branch) of a reconciler's revision: ``main@sha1:<sha>``, the older ``main/<sha>``,
    or a bare sha; anything else (an OCI digest, a chart version) is kept whole, with no branch."""
    text = text.strip()
    for pattern in (_REVISION, _OLD_REVISION):
        found = pattern.fullmatch(text)
        if found:
            return found["sha"], found["branch"] or ""
    return text[:200], ""


def flux_event(body: dict[str, Any]) -> Report:
    """A Flux notification-controller event (the generic/generic-hmac provider's body)."""
    obj = _mapping(body, "involvedObject")
    kind, name = _text(obj, "kind", "involvedObject.kind"), _text(obj, "name", "involvedObject.name")
    namespace = str(obj.get("namespace") or "")
    severity = _severity(body)
    reason = _text(body, "reason")
    metadata = _flux_metadata(body)
    _, sha, branch = _flux_revision(metadata)
    return Report(
        source="flux",
        reconciler=f"{kind}/{namespace}/{name}",
        role="source" if kind in FLUX_SOURCES else "apply",
        state=_flux_state(severity, reason, kind),
        revision=sha,
        branch=branch,
        reason=reason,
        message=str(body.get("message") or "")[:MAX_TEXT],
        event_time=timestamp(body.get("timestamp"), "timestamp", required=True),
        claimed={k: metadata[k] for k in IDENTITY_KEYS if k in metadata},
        heartbeat=kind in FLUX_HEARTBEATS,
    )


def _severity(body: dict[str, Any]) -> str:
    severity = _text(body, "severity")
    if severity not in ("info", "error", "trace"):
        raise IngestError(422, f"'severity' must be info or error, got {severity!r}")
    return severity


def _flux_metadata(body: dict[str, Any]) -> dict[str, str]:
    metadata = body.get("metadata") or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise IngestError(422, "'metadata' must be an object of strings")
    return metadata


def _flux_state(severity: str, reason: str, kind: str) -> State:
    """An error fails; a success reason, or any event of a source that fetched (NewArtifact,
    ArtifactUpToDate, ...), succeeds (a source's success never puts a cluster at a commit: its
    role is "source"); anything else is progress."""
    if severity == "error":
        return "failure"
    if reason in FLUX_SUCCESS or kind in FLUX_SOURCES:
        return "success"
    return "progressing"


def flux_revision(metadata: dict[str, str]) -> str:
    """The revision an event is about, in Flux's order (commit, originRevision, revision), read
    from the plain keys of notification-controller 1.5 and later or the API-group-prefixed keys
    (``kustomize.toolkit.fluxcd.io/revision``) older ones forwarded as the controller wrote them.
    A value that names no git commit (an OCI digest, a chart version) gives way to the next key
    that does, and is kept only when no key names one."""
    return _flux_revision(metadata)[0]


def _flux_revision(metadata: dict[str, str]) -> tuple[str, str, str]:
    """``flux_revision`` with its (sha, branch), each key read only until one names a commit."""
    fallback = ""
    prefixed: dict[str, str] | None = None
    for key in FLUX_REVISION_KEYS:
        value = metadata.get(key)
        if not value:
            prefixed = _prefixed(metadata) if prefixed is None else prefixed
            value = prefixed.get(key)
        if value:
            sha, branch = split_revision(value)
            if _SHA.fullmatch(sha):
                return value, sha, branch
            fallback = fallback or value
    return (fallback, *split_revision(fallback))


def _prefixed(metadata: dict[str, str]) -> dict[str, str]:
    """The values of API-group-prefixed keys (``kustomize.toolkit.fluxcd.io/revision``) by the
    name after the last ``/``; of two keys with one name, the first in sorted order."""
    found: dict[str, tuple[str, str]] = {}
    for key, value in metadata.items():
        _, slash, name = key.rpartition("/")
        if slash and value and (name not in found or key < found[name][0]):
            found[name] = (key, value)
    return {name: value for name, (_, value) in found.items()}


def argocd_notification(body: dict[str, Any]) -> Report:
    """An Argo CD notification: ``{"app": <Application>, ...}`` or the Application itself."""
    app = _application(body)
    meta = _mapping(app, "metadata", "app.metadata")
    name = _text(meta, "name", "app.metadata.name")
    status = _obj(app, "status")
    sync, operation = _obj(status, "sync"), _obj(status, "operationState")
    sync_status, health, phase = _argocd_statuses(status)
    state = _argocd_state(sync_status, health, phase)
    return Report(
        source="argocd",
        reconciler=f"Application/{meta.get('namespace') or ''}/{name}",
        role="apply",
        state=state,
        revision=(_first(sync) or _first(_obj(operation, "syncResult")))[:200],
        branch=str(_obj(_obj(app, "spec"), "source").get("targetRevision") or ""),
        reason="/".join(filter(None, (sync_status, health, phase))),
        message=_argocd_message(status, state)[:MAX_TEXT],
        # Not finishedAt: a health notification may come long after the sync finished.
        event_time=timestamp(body.get("timestamp"), "timestamp"),
        claimed={k: str(body[k]) for k in IDENTITY_KEYS if isinstance(body.get(k), str)},
        # The documented template sends status.reconciledAt, with a trigger that fires once per
        # value of it: a notification at every reconciliation, a heartbeat. Without it Argo CD
        # notifies only on transitions, and silence says nothing.
        heartbeat=status.get("reconciledAt") is not None,
    )


def _application(body: dict[str, Any]) -> dict[str, Any]:
    """The Application: the body's ``app``, or the body itself."""
    app = body.get("app") if "app" in body else body
    if not isinstance(app, dict):
        raise IngestError(422, "'app' must be the Application object (use toJson .app in the template)")
    return app


def _argocd_statuses(status: dict[str, Any]) -> tuple[str, str, str]:
    """(sync status, health status, operation phase) of an app, Unknown when not said (the
    phase: empty)."""
    sync_status = str(_obj(status, "sync").get("status") or "Unknown")
    health = str(_obj(status, "health").get("status") or "Unknown")
    return sync_status, health, str(_obj(status, "operationState").get("phase") or "")


def _zoned_time(text: str) -> float | None:
    """An RFC 3339 time with a zone, in seconds since the epoch; None for anything else."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when.timestamp() if when.tzinfo is not None else None


def _argocd_message(status: dict[str, Any], state: State) -> str:
    """Why an app is where it is: a failed operation's message; for a Degraded app (whose
    ``status.health`` has no message since Argo CD 3) its unhealthy resources' messages and its
    error conditions; else the operation's message."""
    operation = _obj(status, "operationState")
    phase = str(operation.get("phase") or "")
    if phase in ("Failed", "Error") and operation.get("message"):
        return str(operation["message"])
    if state != "failure":
        return str(operation.get("message") or "")
    return "; ".join(_degraded_reasons(status)) or str(operation.get("message") or "")


def _degraded_reasons(status: dict[str, Any]) -> list[str]:
    """Why an app is Degraded: its health's message, its unhealthy resources', its error conditions'."""
    reasons = [str(m) for m in (_obj(status, "health").get("message"),) if m]
    return reasons + _unhealthy_resources(status) + _error_conditions(status)


def _unhealthy_resources(status: dict[str, Any]) -> list[str]:
    """``Kind/namespace/name: message`` of each Degraded or Missing resource of an app."""
    found = []
    for resource in status.get("resources") or []:
        health = _obj(resource, "health") if isinstance(resource, dict) else {}
        if health.get("status") in ("Degraded", "Missing"):
            what = "/".join(str(resource.get(k) or "") for k in ("kind", "namespace", "name"))
            found.append(f"{what}: {health.get('message') or health.get('status')}")
    return found


def _error_conditions(status: dict[str, Any]) -> list[str]:
    """``Type: message`` of each of an app's ``...Error`` conditions."""
    return [
        f"{c.get('type')}: {c.get('message') or ''}"
        for c in status.get("conditions") or []
        if isinstance(c, dict) and str(c.get("type", "")).endswith("Error")
    ]


def _obj(holder: dict[str, Any], key: str) -> dict[str, Any]:
    """A nested object, or an empty one when it is absent or not an object."""
    value = holder.get(key)
    return value if isinstance(value, dict) else {}


def _argocd_state(sync: str, health: str, phase: str) -> State:
    if health == "Degraded" or phase in ("Failed", "Error"):
        return "failure"
    if sync == "Synced" and health == "Healthy" and phase not in ("Running", "Terminating"):
        return "success"
    return "progressing"


def native_report(body: dict[str, Any]) -> Report:
    """The promoter's own form (``promoter hub report``, docs/hub.md)."""
    known = {"reconciler", "state", "revision", "reason", "message", "timestamp", "role", *IDENTITY_KEYS}
    unknown = sorted(set(body) - known)
    if unknown:
        raise IngestError(422, f"unknown field '{unknown[0]}'")
    state, role = _native_state(body), _native_role(body)
    sha, branch = split_revision(str(body.get("revision") or ""))
    return Report(
        source="native",
        reconciler=_text(body, "reconciler")[:200],
        role=role,
        state=state,  # checked against STATES above
        revision=sha,
        branch=branch,
        reason=str(body.get("reason") or state)[:200],
        message=str(body.get("message") or "")[:MAX_TEXT],
        event_time=timestamp(body.get("timestamp"), "timestamp", required=True),
        claimed={k: str(body[k]) for k in IDENTITY_KEYS if k in body},
    )


def _native_state(body: dict[str, Any]) -> State:
    state = _text(body, "state")
    if state not in STATES:
        raise IngestError(422, f"'state' must be one of {', '.join(STATES)}, got {state!r}")
    return state


def _native_role(body: dict[str, Any]) -> str:
    role = str(body.get("role") or "apply")
    if role not in ("apply", "source"):
        raise IngestError(422, f"'role' must be apply or source, got {role!r}")
    return role


def timestamp(value: Any, name: str, *, required: bool = False) -> float | None:
    """Seconds since the epoch from an RFC 3339 time (or a number of seconds)."""
    if value is None or value == "":
        if required:
            raise IngestError(422, f"missing '{name}'")
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    when = _zoned_time(value) if isinstance(value, str) else None
    if when is not None:
        return when
    raise IngestError(422, f"'{name}' must be an RFC 3339 time with a zone, got {str(value)[:40]!r}")


def _mapping(body: dict[str, Any], key: str, name: str | None = None) -> dict[str, Any]:
    value = body.get(key)
    if not isinstance(value, dict):
        raise IngestError(422, f"missing '{name or key}' (an object)")
    return value


def _text(body: dict[str, Any], key: str, name: str | None = None) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value.strip():
        raise IngestError(422, f"missing '{name or key}' (a non-empty string)")
    return value


def _first(holder: dict[str, Any]) -> str:
    """``revision`` of a single-source app, else the first of ``revisions`` (a multi-source app)."""
    one = holder.get("revision")
    if isinstance(one, str) and one:
        return one
    many = holder.get("revisions")
    if isinstance(many, list) and many and isinstance(many[0], str):
        return many[0]
    return ""
