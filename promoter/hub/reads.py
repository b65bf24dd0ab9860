"""Every read by name, for the JSON API, the pages and the CLI alike: one dispatcher, so the
three always answer the same."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from promoter.clock import parse_duration
from promoter.hub import attention, dora, holds, offcourse, queries, shown
from promoter.hub.db import Database, Tx
from promoter.hub.payloads import IngestError
from promoter.hub.rollout import rollout

DEFAULT_WINDOW = 30 * 86400.0
TREND = 6

READS = (
    "rollout",
    "environments",
    "environment",
    "clusters",
    "cluster",
    "history",
    "discrepancies",
    "drift",
    "stale",
    "failing",
    "delivery",
    "holds",
)


def read(db: Database, name: str, params: Mapping[str, Any], now: float, stale_after: float) -> Any:
    """The read ``name`` with ``params`` (query parameters; ``name`` for one environment or
    cluster; ``clusterType`` a list); NotFound or IngestError(400) when it cannot answer. With
    ``limit``, drift, stale and discrepancies answer their first ``limit`` (of each kind), as a
    ``shown.Listed`` that says how many there are in all."""
    q = query(params)
    with db.transaction(write=False) as tx:
        if name in _LISTS and isinstance(q.get("limit"), int):
            return _LISTS[name](tx, q.get("environment"), now, stale_after, q["limit"])
        return _readers(tx, q, now, stale_after)[name]()


def total_header(data: Any) -> dict[str, str] | None:
    """A bounded list's answer's header: how many there are in all (``X-Total-Count``)."""
    return {"X-Total-Count": str(data.total)} if isinstance(data, shown.Listed) else None


def read_page(db: Database, name: str, params: Mapping[str, Any], now: float, stale_after: float) -> Any:
    """The read behind page ``name``: ``read``'s answer, as much of it as the page shows
    (``promoter.hub.shown``): the overview, an environment's page, ``/failing``, ``/drift``,
    ``/stale`` and ``/discrepancies`` list their first clusters and say how many there are
    (``all=1``: every one of an environment's page or of a list)."""
    return read_page_and_repos(db, name, params, now, stale_after)[0]


def read_page_and_repos(
    db: Database, name: str, params: Mapping[str, Any], now: float, stale_after: float
) -> tuple[Any, dict[str, str]]:
    """``read_page`` and ``repo_urls`` (the page's links), in one transaction."""
    q = query(params)
    page = shown.Page(None if _flag(q.get("all")) else shown.ROWS, shown.FAILING)
    with db.transaction(write=False) as tx:
        bounded: dict[str, Callable[[], Any]] = {
            "environments": lambda: [
                _judged(tx, e, q, now) for e in queries.overview(tx, now, stale_after, page)
            ],
            "environment": lambda: _judged(
                tx, queries.environment_state(tx, q["name"], now, stale_after, page), q, now
            ),
            "failing": lambda: _failing_page(tx, q.get("environment"), now, stale_after, page),
            "drift": lambda: _drift_page(tx, q.get("environment"), now, stale_after, page.rows),
            "stale": lambda: _stale_page(tx, q.get("environment"), now, stale_after, page.rows),
            "discrepancies": lambda: _discrepancies_page(tx, now, stale_after, page.rows),
        }
        return (bounded.get(name) or _readers(tx, q, now, stale_after)[name])(), repo_urls(tx)


def _failing_page(
    tx: Tx, environment: str | None, now: float, stale_after: float, page: shown.Page
) -> shown.Listed:
    picked, totals = shown.first_failing(tx, now, environment, None, page.rows)
    rows = queries.failing(tx, now, stale_after, environment, picked)
    return shown.Listed(rows, sum(totals.values()), environment)


def _drift_page(
    tx: Tx, environment: str | None, now: float, stale_after: float, rows: int | None
) -> shown.Listed:
    picked, total = shown.first_drifting(tx, environment, rows)
    return shown.Listed(offcourse.drift(tx, now, stale_after, environment, picked), total, environment)


def _stale_page(
    tx: Tx, environment: str | None, now: float, stale_after: float, rows: int | None
) -> shown.Listed:
    picked, total = shown.first_stale(tx, now, stale_after, environment, rows)
    return shown.Listed(offcourse.stale(tx, now, stale_after, environment, picked), total, environment)


def _discrepancies_page(tx: Tx, now: float, stale_after: float, rows: int | None) -> shown.Listed:
    """The promotions due, the first ``rows`` clusters off their head and the ``rows`` failing
    longest (None: every one), with how many there are of each kind (``counts``)."""
    drifting, drifts = shown.first_drifting(tx, None, rows)
    failed, totals = shown.first_failing(tx, now, None, None, rows)
    items = offcourse.discrepancies(tx, now, stale_after, drifting, failed)
    counts = {"promotion": sum(i["kind"] == "promotion" for i in items), "drift": drifts}
    counts["failing"] = sum(totals.values())
    return shown.Listed(items, sum(counts.values()), None, counts)


#: The lists ``?limit=`` bounds in the JSON too: (tx, environment, now, stale_after, rows).
_LISTS: dict[str, Callable[[Tx, str | None, float, float, int], shown.Listed]] = {
    "drift": _drift_page,
    "stale": _stale_page,
    "discrepancies": lambda tx, _, now, stale_after, rows: _discrepancies_page(tx, now, stale_after, rows),
}


def _flag(value: Any) -> bool:
    return str(value or "").strip().lower() not in ("", "0", "false", "no")


def query(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` checked: ``env`` is ``environment``; ``limit`` a whole number from 1 to the
    most a read returns, ``window`` a duration; IngestError(400) naming the parameter else."""
    q = dict(params)
    if q.get("env") and not q.get("environment"):
        q["environment"] = q["env"]
    if q.get("limit") not in (None, ""):
        q["limit"] = _whole(q["limit"], "limit", 1, queries.HISTORY_LIMIT)
    if q.get("window") not in (None, ""):
        q["window"] = parse_window(str(q["window"]))
    q["stuckAfter"] = _seconds(q.get("stuckAfter"), "stuckAfter", attention.DEFAULT_STUCK_AFTER)
    return q


def _seconds(value: Any, name: str, default: float) -> float:
    """A duration parameter (``45m``, ``2h``), more than 0; IngestError(400) naming it else."""
    if value in (None, ""):
        return default
    try:
        seconds = parse_duration(str(value))
    except ValueError as err:
        raise IngestError(400, f"{name}: {err}") from err
    if not seconds > 0:
        raise IngestError(400, f"{name}: must be more than 0, got {str(value)!r}")
    return seconds


def parse_window(text: str) -> float:
    """A window of the delivery figures: days (``30d``) or a duration (``12h``, ``90m``); more than 0."""
    value = text.strip()
    try:
        seconds = float(value[:-1]) * 86400 if value.endswith("d") else parse_duration(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise IngestError(400, f"window: expected days such as 30d or a duration such as 12h, got {text!r}")
    return seconds


def _whole(value: Any, name: str, low: int, high: int) -> int:
    text = str(value).strip()
    if not text.isdigit() or not low <= int(text) <= high:
        raise IngestError(400, f"{name}: must be a whole number from {low} to {high}, got {text!r}")
    return int(text)


def repo_urls(tx: Tx) -> dict[str, str]:
    """Each environment's platform repo web page, where the promoter recorded one (page links)."""
    rows = tx.rows("SELECT name, repo_url FROM environments WHERE repo_url <> ''")
    return {str(name): str(url) for name, url in rows}


def _readers(tx: Tx, q: Mapping[str, Any], now: float, stale_after: float) -> dict[str, Callable[[], Any]]:
    return {
        "rollout": lambda: _rollout(tx, q, now, stale_after),
        "environments": lambda: [_judged(tx, e, q, now) for e in queries.overview(tx, now, stale_after)],
        "environment": lambda: _judged(
            tx, queries.environment_state(tx, q["name"], now, stale_after), q, now
        ),
        "clusters": lambda: queries.clusters(tx, now, stale_after, q.get("environment")),
        "cluster": lambda: queries.cluster_detail(
            tx, q["name"], now, stale_after, _limit(q.get("limit"), 50)
        ),
        "history": lambda: queries.history(
            tx, q.get("cluster"), q.get("environment"), _limit(q.get("limit"), 100)
        ),
        "discrepancies": lambda: offcourse.discrepancies(tx, now, stale_after),
        "drift": lambda: offcourse.drift(tx, now, stale_after, q.get("environment")),
        "stale": lambda: offcourse.stale(tx, now, stale_after, q.get("environment")),
        "failing": lambda: queries.failing(tx, now, stale_after, q.get("environment")),
        "delivery": lambda: _delivery(tx, q, now),
        "holds": lambda: holds.in_force(tx, now, q.get("environment")),
    }


def _judged(tx: Tx, entry: dict[str, Any], q: Mapping[str, Any], now: float) -> dict[str, Any]:
    """An environment with what a person acts on: stuck, behind, a failure's links and commands."""
    repo = str((entry.get("head") or {}).get("platformRepo") or "")
    return attention.judge(tx, entry, now, float(q["stuckAfter"]), repo)


def _delivery(tx: Tx, q: Mapping[str, Any], now: float) -> dict[str, Any]:
    """The DORA measures of each environment (or of ``environment``) over ``window``, with trend."""
    window = float(q.get("window") or DEFAULT_WINDOW)
    names = [q["environment"]] if q.get("environment") else queries.environment_names(tx)
    return {
        "window": window,
        "now": now,
        "environments": [dora.measures(tx, name, now, window, TREND) for name in names],
    }


def _rollout(tx: Tx, q: Mapping[str, Any], now: float, stale_after: float) -> dict[str, Any]:
    environment, commit = q.get("environment"), q.get("commit")
    if not environment or not commit:
        raise IngestError(400, "rollout needs environment and commit")
    with_times = str(q.get("times", "true")).lower() not in ("0", "false", "no")
    return rollout(
        tx, str(environment), str(commit), now, stale_after, tuple(q.get("clusterType") or ()), with_times
    )


def _limit(value: Any, default: int) -> int:
    return value if isinstance(value, int) else default
