"""The body of ``POST /v1/commits`` (docs/hub.md), read strictly: a merged platform commit as
a ``CommitRecord``, or an IngestError naming the field that is wrong."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from promoter.hub import promotions
from promoter.hub.commits import CommitRecord
from promoter.hub.payloads import IngestError

KNOWN = {"environment", "sha", "branch", "parent", "mainCommit", "committedAt", "assignments"}
KNOWN |= {"environments", "platformRepo", "wave", "folders", "follows", *promotions.FIELDS}


def commit_from_json(body: dict[str, Any]) -> CommitRecord:
    """A ``POST /v1/commits`` body (docs/hub.md) as a record; IngestError naming a bad field."""
    _check_fields(body)
    sha = _sha(body["sha"])
    pairs = _assignments(body.get("assignments") or [])
    order = _order(body.get("environments") or [])
    return CommitRecord(
        environment=body["environment"],
        sha=sha,
        branch=body["branch"],
        parent=_optional(body.get("parent"), str.lower),
        main_commit=_optional(body.get("mainCommit")),
        committed_at=_number(body.get("committedAt")),
        assignments=tuple(pairs),
        order=tuple(order),
        repo_url=_web_url(body.get("platformRepo")),
        wave=_text(body.get("wave"), "wave"),
        folders=_folders(body.get("folders") or {}),
        follows=_follows(body.get("follows") or {}, order),
        promotion=promotions.from_json(body),
    )


def _check_fields(body: dict[str, Any]) -> None:
    """No field but a commit's, and its environment, sha and branch non-empty strings."""
    unknown = sorted(set(body) - KNOWN)
    if unknown:
        raise IngestError(422, f"unknown field '{unknown[0]}'")
    for field in ("environment", "sha", "branch"):
        if not isinstance(body.get(field), str) or not body[field].strip():
            raise IngestError(422, f"missing '{field}' (a non-empty string)")


def _sha(value: str) -> str:
    """A full commit id, in lower case."""
    sha = value.lower()
    if len(sha) != 40 or any(c not in "0123456789abcdef" for c in sha):
        raise IngestError(422, f"'sha' must be a full 40-hex commit id, got {value[:50]!r}")
    return sha


def _order(order: Any) -> list[str]:
    """``environments``: the Pipeline's environment names, in its order."""
    if not isinstance(order, list) or not all(isinstance(e, str) and e for e in order):
        raise IngestError(422, "'environments' must be a list of environment names, in the Pipeline's order")
    return order


def _optional(value: Any, then: Callable[[str], str] = str) -> str | None:
    """An optional commit id: as text (through ``then``), or None when not given."""
    return then(str(value)) if value else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _follows(value: Any, order: list[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``{"prod-eu": ["staging"], "staging": []}``: the environments each follows (a graph of
    environments), each name one of ``environments`` when that is given."""
    if not isinstance(value, dict) or not all(_names(v) for v in value.values()):
        raise IngestError(422, "'follows' must map each environment to the list of environments it follows")
    _check_listed(value, set(order))
    return tuple((str(name), tuple(dict.fromkeys(upstreams))) for name, upstreams in sorted(value.items()))


def _check_listed(follows: dict[str, list[str]], known: set[str]) -> None:
    """Each environment ``follows`` names must be one of ``known`` (when any is)."""
    for name, upstreams in sorted(follows.items()):
        unknown = [n for n in [name, *upstreams] if known and n not in known]
        if unknown:
            raise IngestError(
                422, f"'follows.{name}' names {unknown[0]!r}, which 'environments' does not list"
            )


def _names(value: Any) -> bool:
    """Whether ``value`` is a list of non-empty strings."""
    return isinstance(value, list) and all(isinstance(u, str) and u for u in value)


def _text(value: Any, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise IngestError(422, f"'{name}' must be a string")
    return value


def _folders(value: Any) -> tuple[tuple[str, str, str | None], ...]:
    """``{"<cluster type>": {"wave": "canary", "mainCommit": "<sha>"}}``: each folder's wave."""
    if not isinstance(value, dict):
        raise IngestError(422, "'folders' must map each cluster type to its wave and main commit")
    out = []
    for cluster_type, entry in sorted(value.items()):
        if not isinstance(entry, dict) or not isinstance(entry.get("wave", ""), str):
            raise IngestError(422, f'\'folders.{cluster_type}\' must be {{"wave": ..., "mainCommit": ...}}')
        main = entry.get("mainCommit")
        out.append((str(cluster_type), str(entry.get("wave") or ""), str(main) if main else None))
    return tuple(out)


def _web_url(value: Any) -> str:
    """A platform repo's web page, kept only when it is a plain http(s) URL (it becomes a link)."""
    if not isinstance(value, str) or not value:
        return ""
    if not value.startswith(("https://", "http://")) or any(c in value for c in "\"'<> @"):
        raise IngestError(422, "'platformRepo' must be the repo's http(s) web address, without credentials")
    return value.rstrip("/")[:500]


def _assignments(items: Any) -> list[tuple[str, str]]:
    if not isinstance(items, list):
        raise IngestError(422, "'assignments' must be a list")
    pairs = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not all(
            isinstance(item.get(k), str) and item[k] for k in ("clusterType", "deploymentTarget")
        ):
            raise IngestError(422, f"assignments[{i}] must have clusterType and deploymentTarget strings")
        pairs.append((item["clusterType"], item["deploymentTarget"]))
    return pairs
