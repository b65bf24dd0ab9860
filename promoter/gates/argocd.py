"""The ``argocd`` gate: Argo CD's REST API says the applications run the merged revision, healthy.

Applications are named (``GET /api/v1/applications/<name>``) or selected by labels
(``GET /api/v1/applications?selector=...``), with a bearer token from an environment variable.
For each application:

- **success** when ``status.sync.status`` is ``Synced`` at the merged revision M
  (``status.sync.revision``, or any of ``status.sync.revisions`` for a multi-source app),
  ``status.health.status`` is ``Healthy`` and no sync operation is still running;
- **failure** when it is ``Degraded`` at M, or when the last sync operation, for M, ended
  ``Failed`` or ``Error``;
- **waiting** otherwise: still at an older revision (whatever its health: an older revision's
  trouble is not this rollout's), OutOfSync, Progressing, Missing, or syncing.

With ``revision: descendants``, a later commit of the environment branch counts as M too (Argo
CD follows the branch head, so another merge may land before it syncs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from promoter.controlplane.fields import GateFields
from promoter.gates.base import Gate, GateContext, Observation
from promoter.gates.commit_status import rollout_commits
from promoter.gates.http import Endpoint, HttpProblem, check_base_url
from promoter.masking import mask
from promoter.model import Source

DEFAULT_TOKEN_ENV = "ARGOCD_AUTH_TOKEN"
Verdict = Literal["success", "failure", "pending"]


@dataclass(frozen=True)
class AppState:
    name: str
    verdict: Verdict
    message: str


class ArgoCDGate(Gate):
    type = "argocd"

    def __init__(
        self,
        endpoint: Endpoint,
        names: list[str],
        selector: str | None,
        app_namespace: str | None,
        descendants: bool,
        interval: float,
        source: Source,
    ) -> None:
        super().__init__(source, interval)
        self.endpoint = endpoint
        self.names = names
        self.selector = selector
        self.app_namespace = app_namespace
        self.descendants = descendants

    @classmethod
    def from_spec(cls, spec: Any, source: Source) -> ArgoCDGate:
        f = GateFields(cls.type, spec, source)
        server = f.any("server")
        problem = check_base_url(server)
        if problem:
            f.problem("server", problem)
        names = f.strings("applications") or []
        selector = f.text("selector")
        if not names and not selector:
            f.fail("needs 'applications' (names) or 'selector' (labels, e.g. env=qa)")
        endpoint = Endpoint(
            server.strip(),
            token_env=f.text("tokenEnv", DEFAULT_TOKEN_ENV),
            ca_file=f.text("caFile"),
            insecure=f.flag("insecure", False),
            timeout=f.duration("timeout", "30s"),
        )
        app_namespace = f.text("appNamespace")
        revision = f.choice("revision", ("merge", "descendants"), "merge")
        interval = f.duration("interval", "15s")
        f.done()
        return cls(endpoint, names, selector, app_namespace, revision == "descendants", interval, source)

    def describe(self) -> str:
        what = ",".join(self.names) + (" " if self.names and self.selector else "")
        return f"argocd {what}{self.selector or ''}"

    def check(self, ctx: GateContext) -> Observation:
        token = self.endpoint.token()
        if not token:
            return Observation(
                "failure", f"environment variable {self.endpoint.token_env} is not set (an Argo CD API token)"
            )
        try:
            apps, missing = self._applications(token)
        except HttpProblem as err:
            if err.status == 401:
                return Observation(
                    "failure", f"Argo CD refused the token in {self.endpoint.token_env}: {err}"
                )
            return Observation("pending", str(err))
        revisions = rollout_commits(ctx, self.descendants)
        states = [judge(app, revisions) for app in apps]
        states += [AppState(name, "pending", why) for name, why in missing]
        return summarize(states, ctx.platform_sha)

    def _applications(self, token: str) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
        """The applications found, and (name, why) for the named ones not found (yet)."""
        params = {"appNamespace": self.app_namespace} if self.app_namespace else {}
        apps, missing = self._named(token, params)
        if self.selector:
            found, items = self._selected(token, params, self.selector)
            if not found and not items:
                missing.append((f"selector {self.selector}", "no application matches"))
            apps += found
        return apps, missing

    def _named(
        self, token: str, params: dict[str, str]
    ) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
        """The applications named, and (name, why) for those not found (yet)."""
        apps: list[dict[str, Any]] = []
        missing: list[tuple[str, str]] = []
        for name in self.names:
            try:
                apps.append(self.endpoint.get(f"/api/v1/applications/{quote(name, safe='')}", params, token))
            except HttpProblem as err:
                if err.status not in (403, 404):
                    raise
                # Argo CD answers 403 for an app that does not exist, so as not to reveal it.
                missing.append((name, "not found (or no permission to read it)"))
        return apps, missing

    def _selected(
        self, token: str, params: dict[str, str], selector: str
    ) -> tuple[list[dict[str, Any]], list[Any]]:
        """The applications ``selector`` matches that are not also named, and every one it matches."""
        listing = self.endpoint.get("/api/v1/applications", {**params, "selector": selector}, token)
        items = (listing.get("items") if isinstance(listing, dict) else None) or []
        return [a for a in items if _name(a) not in self.names], items


def judge(app: dict[str, Any], revisions: list[str]) -> AppState:
    """One application's verdict for a rollout whose commits are ``revisions`` (M first)."""
    name = _name(app)
    status = app.get("status") or {}
    sync = status.get("sync") or {}
    health_block = status.get("health") or {}
    health = health_block.get("status") or "Unknown"
    operation = status.get("operationState") or {}
    failed = _failed_sync(operation, revisions)
    if failed:
        return AppState(name, "failure", failed)
    at = _revisions(sync)
    where = _short(at)
    if not any(r in revisions for r in at):
        return AppState(name, "pending", f"at {where} (not this rollout yet), {sync.get('status')}, {health}")
    return _at_rollout(name, sync, health, health_block.get("message") or "", operation, where)


def _failed_sync(operation: dict[str, Any], revisions: list[str]) -> str | None:
    """The failure of a sync of this rollout, if its operation failed."""
    phase = operation.get("phase")
    op_revisions = _revisions(operation.get("syncResult") or {}) or _revisions(
        (operation.get("operation") or {}).get("sync") or {}
    )
    if phase in ("Failed", "Error") and any(r in revisions for r in op_revisions):
        return f"sync {phase.lower()}: {operation.get('message') or 'no message'}"
    return None


def _at_rollout(
    name: str, sync: dict[str, Any], health: str, health_message: str, operation: dict[str, Any], where: str
) -> AppState:
    """The verdict of an application whose sync revision is this rollout's."""
    phase = operation.get("phase")
    if health == "Degraded":
        return AppState(
            name, "failure", f"Degraded at {where}" + (f": {health_message}" if health_message else "")
        )
    if phase in ("Running", "Terminating"):
        return AppState(name, "pending", f"sync {phase.lower()} at {where}: {operation.get('message') or ''}")
    if sync.get("status") == "Synced" and health == "Healthy":
        return AppState(name, "success", f"Synced at {where}, Healthy")
    return AppState(name, "pending", f"{sync.get('status') or 'Unknown'} at {where}, {health}")


def summarize(states: list[AppState], merge: str) -> Observation:
    failed = [s for s in states if s.verdict == "failure"]
    if failed:
        more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
        return Observation("failure", mask(f"{failed[0].name}: {failed[0].message}{more}"))
    waiting = [s for s in states if s.verdict == "pending"]
    if not waiting:
        return Observation(
            "success", f"{_count(len(states), 'application')} Synced at {merge[:12]} and Healthy"
        )
    return Observation(
        "pending", mask(f"{len(states) - len(waiting)} of {len(states)} ready; {_first_two(waiting)}")
    )


def _first_two(waiting: list[AppState]) -> str:
    """What the first two applications wait for (and how many more do)."""
    shown = "; ".join(f"{s.name}: {s.message}" for s in waiting[:2])
    return shown + (f"; +{len(waiting) - 2} more" if len(waiting) > 2 else "")


def _name(app: Any) -> str:
    return str(((app or {}).get("metadata") or {}).get("name") or "?")


def _revisions(holder: dict[str, Any]) -> list[str]:
    """``revision`` of a single-source app, or ``revisions`` of a multi-source one."""
    many = holder.get("revisions")
    if isinstance(many, list):
        return [r for r in many if isinstance(r, str)]
    one = holder.get("revision")
    return [one] if isinstance(one, str) and one else []


def _short(revisions: list[str]) -> str:
    return ",".join(r[:12] for r in revisions) or "no revision"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
