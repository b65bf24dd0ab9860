"""Poll an environment's gates until they all pass, one fails, or the deadline comes.

Each gate is checked at its own interval; soak-like gates start once every other gate has
passed. While waiting, one progress line is printed at a steady pace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from promoter.clock import format_duration
from promoter.errors import GateFailed, GateTimedOut
from promoter.gates.base import Gate, GateContext, Observation


@dataclass
class GateOutcome:
    gate: str
    state: str
    message: str

    def __str__(self) -> str:
        return f"{self.gate}: {self.state} ({self.message})" if self.message else f"{self.gate}: {self.state}"


def run_gates(
    gates: list[Gate],
    ctx: GateContext,
    deadline: float,
    progress: Callable[[str], None],
    progress_interval: float = 10.0,
) -> list[GateOutcome]:
    """All outcomes when every gate passed; GateFailed or GateTimedOut (with outcomes) otherwise."""
    clock = ctx.clock
    start = clock.now()
    last: dict[int, Observation] = {i: Observation("pending", "not checked yet") for i in range(len(gates))}
    due: dict[int, float] = dict.fromkeys(range(len(gates)), start)
    next_progress = start + progress_interval

    def outcomes() -> list[GateOutcome]:
        return [GateOutcome(g.describe(), last[i].state, last[i].message) for i, g in enumerate(gates)]

    while True:
        now = clock.now()
        others_done = all(last[i].state == "success" for i, g in enumerate(gates) if not g.after_others)
        if others_done and ctx.others_passed_at is None:
            ctx.others_passed_at = now
        for i, gate in enumerate(gates):
            if last[i].state == "success" or due[i] > now or (gate.after_others and not others_done):
                continue
            last[i] = _tidy(gate.check(ctx))
            due[i] = clock.now() + gate.interval
            if last[i].state == "failure":
                raise GateFailed(
                    f"{ctx.environment}: gate {gate.describe()} failed: {last[i].message}", outcomes()
                )
        if all(o.state == "success" for o in last.values()):
            return outcomes()
        if not others_done and all(
            last[i].state == "success" for i, g in enumerate(gates) if not g.after_others
        ):
            continue  # the others just passed: start soaking now, not at the next wake-up
        now = clock.now()
        if now >= deadline:
            waiting = "; ".join(str(o) for o in outcomes() if o.state != "success")
            raise GateTimedOut(
                f"{ctx.environment}: gates did not pass within the timeout: {waiting}", outcomes()
            )
        if now >= next_progress:
            progress(_progress_line(ctx.environment, now - start, outcomes()))
            next_progress = now + progress_interval
        pending_due = [
            due[i]
            for i, g in enumerate(gates)
            if last[i].state != "success" and (others_done or not g.after_others)
        ]
        wake = min([*pending_due, next_progress, deadline])
        clock.sleep(max(wake - clock.now(), 0.05))


def _tidy(observation: Observation, limit: int = 400) -> Observation:
    """One line of bounded length: messages go into status descriptions, PR tables, summaries."""
    text = " ".join(observation.message.split())
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return Observation(observation.state, text)


def _progress_line(environment: str, elapsed: float, outcomes: list[GateOutcome]) -> str:
    waiting = [o for o in outcomes if o.state != "success"]
    shown = waiting[0] if waiting else outcomes[-1]
    more = f" (+{len(waiting) - 1} more waiting)" if len(waiting) > 1 else ""
    return f"{environment}: waiting {format_duration(elapsed)}, gate {shown.gate}: {shown.state}, {shown.message}{more}"
