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
FLUX_SUCCESS = {"ReconciliationSucceeded", "UpgradeSucceeded", "InstallSucceeded", "TestSucceeded"}
#: The metadata keys that say who sent a report; a value that contradicts the key's cluster is refused.
IDENTITY_KEYS = {"cluster": "name", "clusterType": "cluster_type", "environment": "environment"}
_REVISION = re.compile(r"(?P<branch>.*)@sha1:(?P<sha>[0-9a-f]{40})")
_OLD_REVISION = re.compile(r"(?P<branch>.+)/(?P<sha>[0-9a-f]{40})")
_SHA = re.compile(r"[0-9a-f]{40}")
MAX_TEXT = 2000


class IngestError(Exception):
    """A report refused: ``status`` is the HTTP status to answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Report:
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
            return found["sha"], found["branch"]
    return text[:200], ""


def flux_event(body: dict[str, Any]) -> Report:
    """A Flux notification-controller event (the generic/generic-hmac provider's body)."""
    obj = _mapping(body, "involvedObject")
    kind, name = _text(obj, "kind", "involvedObject.kind"), _text(obj, "name", "involvedObject.name")
    namespace = str(obj.get("namespace") or "")
    severity = _text(body, "severity")
    if severity not in ("info", "error", "trace"):
        raise IngestError(422, f"'severity' must be info or error, got {severity!r}")
    reason = _text(body, "reason")
    metadata = body.get("metadata") or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise IngestError(422, "'metadata' must be an object of strings")
    raw = metadata.get("revision") or next(
        (v for k, v in sorted(metadata.items()) if k.endswith("/revision")), ""
    )
    sha, branch = split_revision(raw)
    if severity == "error":
        state: State = "failure"
    elif reason in FLUX_SUCCESS:
        state = "success"
    else:
        state = "progressing"
    return Report(
        source="flux",
        reconciler=f"{kind}/{namespace}/{name}",
        role="source" if kind in FLUX_SOURCES else "apply",
        state=state,
        revision=sha,
        branch=branch,
        reason=reason,
        message=str(body.get("message") or "")[:MAX_TEXT],
        event_time=timestamp(body.get("timestamp"), "timestamp", required=True),
        claimed={k: metadata[k] for k in IDENTITY_KEYS if k in metadata},
    )


def argocd_notification(body: dict[str, Any]) -> Report:
    """An Argo CD notification: ``{"app": <Application>, ...}`` or the Application itself."""
    app = body.get("app") if "app" in body else body
    if not isinstance(app, dict):
        raise IngestError(422, "'app' must be the Application object (use toJson .app in the template)")
    meta = _mapping(app, "metadata", "app.metadata")
    name = _text(meta, "name", "app.metadata.name")
    status = _obj(app, "status")
    sync, health_block, operation = (
        _obj(status, "sync"),
        _obj(status, "health"),
        _obj(status, "operationState"),
    )
    health = str(health_block.get("status") or "Unknown")
    sync_status = str(sync.get("status") or "Unknown")
    phase = str(operation.get("phase") or "")
    message = str(operation.get("message") or health_block.get("message") or "")
    return Report(
        source="argocd",
        reconciler=f"Application/{meta.get('namespace') or ''}/{name}",
        role="apply",
        state=_argocd_state(sync_status, health, phase),
        revision=(_first(sync) or _first(_obj(operation, "syncResult")))[:200],
        branch=str(_obj(_obj(app, "spec"), "source").get("targetRevision") or ""),
        reason=f"{sync_status}/{health}" + (f"/{phase}" if phase else ""),
        message=message[:MAX_TEXT],
        # Not finishedAt: a health notification may come long after the sync finished.
        event_time=timestamp(body.get("timestamp"), "timestamp"),
        claimed={k: str(body[k]) for k in IDENTITY_KEYS if isinstance(body.get(k), str)},
    )


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
    state = _text(body, "state")
    if state not in STATES:
        raise IngestError(422, f"'state' must be one of {', '.join(STATES)}, got {state!r}")
    role = str(body.get("role") or "apply")
    if role not in ("apply", "source"):
        raise IngestError(422, f"'role' must be apply or source, got {role!r}")
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


def timestamp(value: Any, name: str, *, required: bool = False) -> float | None:
    """Seconds since the epoch from an RFC 3339 time (or a number of seconds)."""
    if value is None or value == "":
        if required:
            raise IngestError(422, f"missing '{name}'")
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            if when.tzinfo is not None:
                return when.timestamp()
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
