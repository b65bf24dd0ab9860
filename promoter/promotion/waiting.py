"""Waiting without a runner (DESIGN section 12): with ``--wait none`` a run does what needs no
waiting and stops where the promotion waits, saying for what, where and until when.

The clocks of a wait span runs: each phase of a step posts a pending ``promoter/<env>`` status
when it starts (PR open, merged and waiting for gates, soaking, baking, waiting for approval),
and the forge stamps it (``created_at`` on GitHub, the note's time on the local forge). A later
run reads the phase back from the status and measures the gate's timeout, the soak and the bake
from that time, so a run arriving late neither restarts a clock nor waits for one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from promoter.clock import Clock, format_duration, iso, parse_duration, parse_iso
from promoter.model import Status, WaitFor
from promoter.promotion.waves import Step

WaitMode = Literal["all", "none"]
#: A step's phase, read back from its pending status: what it waits for, and since when.
Phase = Literal["approval", "merge", "gates", "soak", "bake"]

APPROVAL = "waiting for approval"
SOAKING = "soaking"
GATES = "waiting for gates"
PROPOSED = "proposed on "  # merge: next, pushed to its -next branch (promotion/nextbranch.py)


@dataclass(frozen=True)
class Wait:
    """What a stopped promotion waits for: times of day, seconds since the epoch."""

    waiting_for: WaitFor
    environment: str
    wave: str
    since: float
    next_check: float | None  # None: only an event (a merge, an approval) moves it on
    message: str
    approval_requested: bool = False  # this run asked for the approval (the first to get there)

    def to_json(self) -> dict[str, Any]:
        return {
            "for": self.waiting_for,
            "environment": self.environment,
            "wave": self.wave or None,
            "since": iso(self.since),
            "nextCheck": iso(self.next_check) if self.next_check is not None else None,
            "message": self.message,
            "approvalRequested": self.approval_requested,
        }


def outputs_of(wait: Wait | None) -> dict[str, str]:
    """The step outputs that say what a run stopped for (all empty when it did not stop)."""
    data = wait.to_json() if wait else {}
    return {
        "waiting-for": str(data.get("for") or ""),
        "waiting-environment": str(data.get("environment") or ""),
        "waiting-wave": str(data.get("wave") or ""),
        "waiting-since": str(data.get("since") or ""),
        "next-check": str(data.get("nextCheck") or ""),
        "approval-requested": "true" if data.get("approvalRequested") else "false",
    }


def markdown_of(wait: Wait | None) -> list[str]:
    """The step summary's lines on what the run stopped for."""
    if wait is None:
        return []
    w = wait.to_json()
    where = str(w["environment"]) + (f", wave {w['wave']}" if w["wave"] else "")
    after = (
        f"; a new check is useful from {w['nextCheck']}" if w["nextCheck"] else "; the next event moves it on"
    )
    message = str(w["message"]).replace("|", "\\|").replace("\n", " ")
    return [f"⏳ Waiting for **{w['for']}** in {where} since {w['since']}{after}: {message}", ""]


class Waiting(Exception):  # not an error: the run stops here and exits 0
    """Raised where a ``--wait none`` run stops; the environment's run turns it into a result."""

    def __init__(self, wait: Wait) -> None:
        super().__init__(wait.message)
        self.wait = wait


def phase_of(status: Status | None, step: Step) -> Phase | None:
    """The phase of ``step`` a pending status says the promotion is in (None: none of them)."""
    if status is None or status.state != "pending":
        return None
    text = status.description
    if step.name:
        if text.startswith(f"{step.label} healthy at ") and "baking" in text:
            return "bake"
        if not text.startswith(f"{step.label}: "):
            return None
        text = text[len(step.label) + 2 :]
    if text.startswith(("PR open: ", PROPOSED)):
        return "merge"
    if text.startswith(APPROVAL):
        return "approval"
    if text.endswith(SOAKING):
        return "soak"
    if text.endswith(GATES):
        return "gates"
    return None


#: What a phase waits for, as a run that stopped there says it.
WAITS_FOR: dict[Phase, WaitFor] = {
    "approval": "approval",
    "merge": "merge",
    "gates": "gates",
    "soak": "gates",
    "bake": "bake",
}


def waiting_on(status: Status | None, steps: tuple[Step, ...]) -> dict[str, Any] | None:
    """What a promotion whose status is ``status`` waits for (``promoter status``): for what,
    in which wave, since when (the status's time); None when it waits for nothing."""
    for step in steps:
        phase = phase_of(status, step)
        if phase is not None and status is not None:
            return {"for": WAITS_FOR[phase], "wave": step.name or None, "since": status.created_at or None}
    return None


def since(status: Status | None, step: Step, phases: tuple[Phase, ...], clock: Clock) -> float:
    """When the phase started: the status's time if it is in one of ``phases``, else now (this
    run starts it, or posted it a moment ago)."""
    if phase_of(status, step) in phases and status is not None:
        stamped = parse_iso(status.created_at)
        if stamped is not None:
            return min(stamped, clock.wall())
    return clock.wall()


def soak_description(merge_sha: str, gates_took: float) -> str:
    """A soak's phase: when the other gates passed, and how long after the gates started (so
    that a gate's timeout still counts from the gates' start)."""
    return f"merged {merge_sha[:12]}; other gates passed after {format_duration(gates_took)}, {SOAKING}"


def gates_started(status: Status | None, step: Step, clock: Clock) -> float:
    """When the gates started: the gates' status's time, or, once a soak started, its time less
    how long the other gates took (written in its description)."""
    started = since(status, step, ("gates", "soak"), clock)
    found = _AFTER.search(status.description) if status and phase_of(status, step) == "soak" else None
    if found is None:
        return started
    try:
        return started - parse_duration(found.group(1))
    except ValueError:
        return started


_AFTER = re.compile(r"other gates passed after (\S+),")


def deadline(clock: Clock, started: float, seconds: float) -> float:
    """A deadline on the run's own clock (``clock.now()``) for a wait that started at the time of
    day ``started``: what already went by in earlier runs counts."""
    return clock.now() + (started + seconds - clock.wall())
