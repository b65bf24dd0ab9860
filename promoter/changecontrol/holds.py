"""Holds (DESIGN section 13): ``promoter hold ENV`` stops an environment (or one of its waves)
for every trigger until ``promoter release`` or its ``until``; who, when, why and until when are
recorded on ``refs/promoter/holds`` of the control-plane repo, one commit per hold, release or
override."""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from promoter.changecontrol.records import Records
from promoter.clock import iso, parse_iso

HOLDS_REF = "refs/promoter/holds"
#: The label that holds an environment while it is on its open promotion PR.
HOLD_LABEL = "promoter/hold"
#: Overrides kept in the document (the commits keep them all).
KEPT_OVERRIDES = 50
HoldOrigin = Literal["hold", "label"]


@dataclass(frozen=True)
class Hold:
    """A hold on ``environment`` (or one ``wave`` of it); times are seconds since the epoch."""

    environment: str
    wave: str | None
    reason: str
    by: str
    at: float
    until: float | None = None
    origin: HoldOrigin = "hold"
    url: str | None = None  # a label's PR

    def active(self, now: float) -> bool:
        return self.until is None or now < self.until

    def covers(self, environment: str, wave: str) -> bool:
        """Whether it stops ``wave`` of ``environment`` ("": the environment at once, which every
        hold of the environment stops)."""
        return self.environment == environment and (self.wave is None or not wave or self.wave == wave)

    def where(self) -> str:
        return f"{self.environment}, wave {self.wave}" if self.wave else self.environment

    def describe(self) -> str:
        """``held by alice since 2026-11-26T20:00:00Z until ...: incident 42``."""
        if self.origin == "label":
            return f"held by the label {HOLD_LABEL} on {self.url}"
        until = f" until {iso(self.until)}" if self.until is not None else ""
        return f"held by {self.by} since {iso(self.at)}{until}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["at"] = iso(self.at)
        data["until"] = iso(self.until) if self.until is not None else None
        return data

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Hold | None:
        at = parse_iso(str(raw.get("at") or ""))
        until = parse_iso(str(raw.get("until") or "")) if raw.get("until") else None
        if at is None or not raw.get("environment"):
            return None  # not ours to judge: a hand edit
        wave = raw.get("wave") or None
        by, reason = str(raw.get("by") or "unknown"), str(raw.get("reason") or "")
        return cls(str(raw["environment"]), str(wave) if wave else None, reason, by, at, until)


def actor(environ: Mapping[str, str] | None = None) -> str:
    """Who acts: the GitHub user who started the workflow, else the git user, else the login."""
    env = os.environ if environ is None else environ
    for key in ("GITHUB_ACTOR", "GIT_AUTHOR_NAME"):
        if env.get(key):
            return env[key]
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


class HoldBook:
    """The holds of a control plane, read once per run from its records."""

    def __init__(self, records: Records) -> None:
        self.records = records

    def holds(self, now: float) -> list[Hold]:
        """The holds in force at ``now`` (an expired ``until`` ends a hold by itself)."""
        found = (Hold.from_json(raw) for raw in self.records.read().get("holds", []) if isinstance(raw, dict))
        return [h for h in found if h is not None and h.active(now)]

    def hold(self, hold: Hold) -> bool:
        """Record ``hold`` (replacing one on the same environment and wave); False if that exact
        hold is in force already."""

        def change(doc: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
            kept = [h for h in doc.get("holds", []) if not _same(h, hold)]
            same = [h for h in doc.get("holds", []) if _same(h, hold)]
            if (
                same
                and same[0].get("reason") == hold.reason
                and same[0].get("until") == hold.to_json()["until"]
            ):
                return None
            until = f" until {iso(hold.until)}" if hold.until is not None else ""
            return {
                **doc,
                "holds": [*kept, hold.to_json()],
            }, f"hold {hold.where()}{until}: {hold.reason}\n\nby {hold.by}"

        return self.records.update(change, hold.by) is not None

    def release(self, environment: str, wave: str | None, by: str, now: float) -> list[Hold]:
        """Remove the holds of ``environment`` (only ``wave``'s when given); those released."""
        released: list[Hold] = []

        def change(doc: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
            released.clear()
            kept = []
            for raw in doc.get("holds", []):
                found = Hold.from_json(raw) if isinstance(raw, dict) else None
                if found and found.environment == environment and (wave is None or found.wave == wave):
                    if found.active(now):
                        released.append(found)
                    continue
                kept.append(raw)
            if len(kept) == len(doc.get("holds", [])):
                return None
            where = f"{environment}, wave {wave}" if wave else environment
            return {**doc, "holds": kept}, f"release {where}\n\nby {by}"

        self.records.update(change, by)
        return released

    def override(self, hold_text: str, where: str, commit: str, by: str, reason: str, now: float) -> None:
        """Record that a run passed a hold or a closed window with ``--force``."""
        entry = {
            "where": where,
            "commit": commit,
            "by": by,
            "reason": reason,
            "at": iso(now),
            "passed": hold_text,
        }

        def change(doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
            overrides = [*doc.get("overrides", []), entry][-KEPT_OVERRIDES:]
            message = f"override {where} for {commit[:12]}: {reason}\n\nby {by}; it passed: {hold_text}"
            return {**doc, "overrides": overrides}, message

        self.records.update(change, by)


def _same(raw: Any, hold: Hold) -> bool:
    return (
        isinstance(raw, dict)
        and raw.get("environment") == hold.environment
        and (raw.get("wave") or None) == hold.wave
    )
