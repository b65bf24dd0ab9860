"""Holds at the hub: what stops an environment (or one wave of it) on purpose, as the promoter
last told it (``POST /v1/holds``), shown as the ``held`` badge with who, since when, until when
and why (docs/hub.md#holds).

The holds themselves live in the control plane (``refs/promoter/holds``, or the label
``promoter/hold`` on an open promotion PR); the promoter sends an environment's whole set each
time it reads it (``promoter hold`` and ``release``, and every run that judges the environment),
so the hub keeps what arrived last: order of arrival, never a comparison of the machines' clocks.
A hold's ``until`` is a person's deadline, read on the hub's clock (a few seconds of skew end
it a few seconds early or late).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promoter.hub.badges import Badge
from promoter.hub.db import Database, Tx
from promoter.hub.payloads import IngestError, timestamp

MAX_HOLDS = 100
_FIELDS = {"environment", "wave", "reason", "by", "at", "until", "origin", "url"}
_ORIGINS = ("hold", "label")


def holds_from_json(body: Any) -> tuple[str, list[dict[str, Any]]]:
    """A ``POST /v1/holds`` body: the environment and its holds in force; IngestError(422)
    naming a bad field."""
    environment = _environment_of(body)
    items = body.get("holds")
    if not isinstance(items, list) or len(items) > MAX_HOLDS:
        raise IngestError(422, f"'holds' must be a list of at most {MAX_HOLDS} holds (empty: none)")
    holds: dict[str, dict[str, Any]] = {}
    for i, item in enumerate(items):
        hold = _hold(item, f"holds[{i}]")
        if item.get("environment") not in (None, environment):
            raise IngestError(
                422, f"holds[{i}].environment is not {environment!r}: send each environment's own"
            )
        holds[hold["wave"]] = hold  # one per wave, as the control plane keeps them
    return environment, [holds[w] for w in sorted(holds)]


def _environment_of(body: Any) -> str:
    """The environment a holds body is about (an object of no other field than its holds)."""
    if not isinstance(body, dict):
        raise IngestError(422, "the body must be an object with 'environment' and 'holds'")
    unknown = sorted(set(body) - {"environment", "holds"})
    if unknown:
        raise IngestError(422, f"unknown field '{unknown[0]}'")
    environment = body.get("environment")
    if not isinstance(environment, str) or not environment.strip():
        raise IngestError(422, "missing 'environment' (a non-empty string)")
    return environment


def _hold(item: Any, where: str) -> dict[str, Any]:
    text = _texts(_known_fields(item, where), where)
    origin = _origin(item, where)
    at = timestamp(item.get("at"), f"{where}.at", required=True)
    return {
        "wave": (text["wave"] or "")[:200],
        "reason": (text["reason"] or "")[:500],
        "by": (text["by"] or "unknown")[:200],
        "at": at,
        "until": timestamp(item.get("until"), f"{where}.until"),
        "origin": origin,
        "url": _url(text["url"]),
    }


def _known_fields(item: Any, where: str) -> dict[str, Any]:
    """``item``, an object of no field but a hold's."""
    if not isinstance(item, dict):
        raise IngestError(422, f"{where} must be an object")
    unknown = sorted(set(item) - _FIELDS)
    if unknown:
        raise IngestError(422, f"{where}: unknown field '{unknown[0]}'")
    return item


def _texts(item: dict[str, Any], where: str) -> dict[str, str | None]:
    """The hold's text fields, each a string when given."""
    text = {k: item.get(k) for k in ("wave", "reason", "by", "url")}
    for key, value in text.items():
        if value is not None and not isinstance(value, str):
            raise IngestError(422, f"{where}.{key} must be a string")
    return text


def _origin(item: dict[str, Any], where: str) -> str:
    """Who set the hold: one of ``_ORIGINS`` (``hold`` when not said)."""
    origin = item.get("origin") or "hold"
    if origin not in _ORIGINS:
        raise IngestError(
            422, f"{where}.origin must be one of {', '.join(_ORIGINS)}, got {str(origin)[:20]!r}"
        )
    return str(origin)


def _url(value: str | None) -> str:
    """A label's PR, kept only as a plain http(s) address (it becomes a link); anything else (a
    local forge's PR has no web page) as none."""
    if not value or not value.startswith(("https://", "http://")) or any(c in value for c in "\"'<> "):
        return ""
    return value[:500]


def record_holds(db: Database, environment: str, holds: list[dict[str, Any]], now: float) -> int:
    """Replace ``environment``'s holds with ``holds`` (as ``holds_from_json`` gives them);
    how many it has now."""
    with db.transaction() as tx:
        if not tx.one("SELECT 1 FROM environments WHERE name = ?", (environment,)):
            top = tx.one("SELECT MAX(position) FROM environments")
            position = int(top[0]) + 1 if top and top[0] is not None else 0
            tx.run(
                "INSERT INTO environments (name, position, branch) VALUES (?, ?, '') ON CONFLICT (name) DO NOTHING",
                (environment, position),
            )
        tx.run("DELETE FROM holds WHERE environment = ?", (environment,))
        for h in holds:
            tx.run(
                "INSERT INTO holds (environment, wave, reason, held_by, held_at, held_until, origin, url,"
                " recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    environment,
                    h["wave"],
                    h["reason"],
                    h["by"],
                    h["at"],
                    h["until"],
                    h["origin"],
                    h["url"],
                    now,
                ),
            )
    return len(holds)


def in_force(tx: Tx, now: float, environment: str | None = None) -> list[dict[str, Any]]:
    """The holds in force at ``now`` (of ``environment``, else of every environment), as the
    reads give them: ``wave`` is None for the whole environment."""
    where = "(held_until IS NULL OR held_until > ?)" + (" AND environment = ?" if environment else "")
    args: tuple[Any, ...] = (now, environment) if environment else (now,)
    rows = tx.rows(
        "SELECT environment, wave, reason, held_by, held_at, held_until, origin, url, recorded_at FROM holds"
        f" WHERE {where} ORDER BY environment, wave",
        args,
    )
    keys = ("environment", "wave", "reason", "by", "since", "until", "origin", "url", "recordedAt")
    out = [dict(zip(keys, row, strict=True)) for row in rows]
    for hold in out:
        hold["wave"] = hold["wave"] or None
        hold["url"] = hold["url"] or None
    return out


def judged(state: Badge, holds: list[dict[str, Any]], wave: str | None = None) -> Badge:
    """A state with the holds on it: ``held`` when a hold covers the environment (for ``wave``:
    the whole environment's or that wave's), unless it failed (a failure is more urgent)."""
    covering = [h for h in holds if wave is None or h["wave"] in (None, wave)]
    return "held" if covering and state != "failed" else state


def by_environment(holds: list[dict[str, Any]]) -> Mapping[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for hold in holds:
        grouped.setdefault(str(hold["environment"]), []).append(hold)
    return grouped
