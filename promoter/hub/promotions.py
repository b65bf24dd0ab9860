"""What the promoter says of the promotion that landed a platform commit, beside the commit
itself (``POST /v1/commits``, docs/hub.md#desired-state-what-the-promoter-merged): its pull
request, its run, the control plane's web page (links to main commits), what it does when its
gates fail (``onFailure``) and its gates' ``timeout``. All optional: a record without them is
a commit as before, and the pages say less. Sent again (the ``hub`` gate records the commit it
waits on), what was said is kept and what is new is added.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from promoter.gates.hub import Thresholds
from promoter.hub.db import Tx
from promoter.hub.payloads import IngestError

FIELDS = ("pullRequest", "run", "controlPlaneRepo", "onFailure", "timeout", "failureBudget")
FAILURE_POLICIES = ("stop", "rollback")


@dataclass(frozen=True)
class Promotion:
    pull_request: str = ""  # the promotion PR's web page
    run: str = ""  # the run's web page (a GitHub Actions run)
    control_plane: str = ""  # the control-plane repo's web page
    on_failure: str = ""  # stop or rollback; '' not said
    timeout: float | None = None  # seconds the gates wait on the commit
    budget: str = ""  # the hub gate's maxFailures, as JSON: {"maxFailures", "clusterTypes"}


def web_url(value: Any, field: str) -> str:
    """A web page to link, kept only when it is a plain http(s) URL without credentials."""
    if value in (None, ""):
        return ""
    if (
        not isinstance(value, str)
        or not value.startswith(("https://", "http://"))
        or any(c in value for c in "\"'<> @")
    ):
        raise IngestError(422, f"'{field}' must be an http(s) web address, without credentials")
    return value.rstrip("/")[:500]


def from_json(body: dict[str, Any]) -> Promotion:
    """The promotion fields of a ``POST /v1/commits`` body; IngestError(422) naming a bad one."""
    policy = body.get("onFailure") or ""
    if policy not in ("", *FAILURE_POLICIES):
        raise IngestError(422, f"'onFailure' must be stop or rollback, got {str(policy)[:40]!r}")
    timeout = body.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise IngestError(422, "'timeout' must be the gates' timeout in seconds, more than 0")
    return Promotion(
        budget=_budget(body.get("failureBudget")),
        pull_request=web_url(body.get("pullRequest"), "pullRequest"),
        run=web_url(body.get("run"), "run"),
        control_plane=web_url(body.get("controlPlaneRepo"), "controlPlaneRepo"),
        on_failure=str(policy),
        timeout=float(timeout) if timeout is not None else None,
    )


def _budget(value: Any) -> str:
    """``failureBudget``: ``{"maxFailures": 2 or "10%", "clusterTypes": {type: ...}}``, kept as JSON."""
    if value in (None, {}):
        return ""
    types = value.get("clusterTypes", {}) if isinstance(value, dict) else None
    limits = [value.get("maxFailures", 0), *types.values()] if isinstance(types, dict) else [None]
    if (
        not isinstance(value, dict)
        or set(value) - {"maxFailures", "clusterTypes"}
        or not all(map(_limit, limits))
    ):
        raise IngestError(
            422,
            "'failureBudget' must be {maxFailures: a count or a percent such as '10%', clusterTypes: {...}}",
        )
    return json.dumps({"maxFailures": value.get("maxFailures", 0), "clusterTypes": types}, sort_keys=True)


def _limit(value: Any) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        return value >= 0
    text = str(value).strip()
    try:
        return isinstance(value, str) and text.endswith("%") and 0 <= float(text[:-1]) <= 100
    except ValueError:
        return False


def allowed(budget: Mapping[str, Any], cluster_type: str, fresh: int) -> int:
    """The failures ``cluster_type`` may have over ``fresh`` clusters under ``budget`` (as
    ``of_commit`` gives it), counted by the hub gate's own ``Thresholds``."""
    limit = budget.get("clusterTypes", {}).get(cluster_type, budget.get("maxFailures", 0))
    if isinstance(limit, int):
        return Thresholds(max_failures=limit).allowed_failures(fresh)
    return Thresholds(max_failures_percent=float(str(limit).strip()[:-1])).allowed_failures(fresh)


def record(tx: Tx, environment: str, sha: str, promotion: Promotion) -> None:
    """Keep what ``promotion`` says of commit ``sha`` (what it leaves out stays as it was)."""
    p = promotion
    tx.run(
        "UPDATE platform_commits SET pull_request = CASE WHEN ? <> '' THEN ? ELSE pull_request END,"
        " run_url = CASE WHEN ? <> '' THEN ? ELSE run_url END,"
        " on_failure = CASE WHEN ? <> '' THEN ? ELSE on_failure END,"
        " gate_timeout = COALESCE(?, gate_timeout),"
        " failure_budget = CASE WHEN ? <> '' THEN ? ELSE failure_budget END WHERE environment = ? AND sha = ?",
        (
            p.pull_request,
            p.pull_request,
            p.run,
            p.run,
            p.on_failure,
            p.on_failure,
            p.timeout,
            p.budget,
            p.budget,
            environment,
            sha,
        ),
    )
    if p.control_plane:
        tx.run("UPDATE environments SET control_plane_url = ? WHERE name = ?", (p.control_plane, environment))


def of_commit(tx: Tx, environment: str, sha: str) -> dict[str, Any]:
    """What is known of the promotion of ``sha`` (JSON-ready; empty strings for what was not said)."""
    row = tx.one(
        "SELECT p.pull_request, p.run_url, p.on_failure, p.gate_timeout, e.control_plane_url, p.failure_budget"
        " FROM platform_commits p LEFT JOIN environments e ON e.name = p.environment"
        " WHERE p.environment = ? AND p.sha = ?",
        (environment, sha),
    )
    if row is None:
        return {}
    return {
        "pullRequest": row[0] or None,
        "run": row[1] or None,
        "onFailure": row[2] or None,
        "timeout": float(row[3]) if row[3] is not None else None,
        "controlPlaneRepo": row[4] or None,
        "failureBudget": json.loads(row[5]) if row[5] else None,
    }
