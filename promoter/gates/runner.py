"""Poll an environment's gates until they all pass, one fails, or the deadline comes.

Each gate is checked at its own interval; soak-like gates start once every other gate has
passed. While waiting, one progress line is printed at a steady pace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from promoter.clock import format_duration
from promoter.errors import GateFailed, GateTimedOut
from promoter.gates.base import MESSAGE_LIMIT, Gate, GateContext, Observation, State


@dataclass
class GateOutcome:
    gate: str
    state: State
    message: str

    def __str__(self) -> str:
        return f"{self.gate}: {self.state} ({self.message})" if self.message else f"{self.gate}: {self.state}"


class GatesPending(Exception):  # not an error: a run that does not wait stops here
    """Each gate was checked once and not all passed (``once``): the outcomes, and when the
    soonest pending gate is due again (on the run's clock)."""

    def __init__(self, outcomes: list[GateOutcome], due: float) -> None:
        super().__init__("; ".join(str(o) for o in outcomes if o.state != "success"))
        self.outcomes = outcomes
        self.due = due
        self.others_passed_at: float | None = None  # when the soak-like gates started


def run_gates(
    gates: list[Gate],
    ctx: GateContext,
    deadline: float,
    progress: Callable[[str], None],
    progress_interval: float = 10.0,
    *,
    once: bool = False,
) -> list[GateOutcome]:
    """All outcomes when every gate passed; GateFailed or GateTimedOut (with outcomes) otherwise.
    With ``once``, each gate is checked once (a soak-like gate too, when the others passed) and
    GatesPending says that some have not passed yet, instead of waiting for them."""
    return _GateRun(gates, ctx, deadline, progress, progress_interval, once).run()


class _GateRun:
    """Checks each gate when it is due, soak-like gates only once the others passed, until all
    passed, one failed or the deadline came; a progress line at a steady pace meanwhile."""

    def __init__(
        self,
        gates: list[Gate],
        ctx: GateContext,
        deadline: float,
        progress: Callable[[str], None],
        progress_interval: float,
        once: bool = False,
    ) -> None:
        self.gates, self.ctx, self.deadline, self.once = gates, ctx, deadline, once
        self.progress, self.progress_interval = progress, progress_interval
        self.clock = ctx.clock
        self.start = self.clock.now()
        self.last = {i: Observation("pending", "not checked yet") for i in range(len(gates))}
        self.due = dict.fromkeys(range(len(gates)), self.start)
        self.next_progress = self.start + progress_interval

    def run(self) -> list[GateOutcome]:
        while True:
            others_done = self._others_done()
            if others_done and self.ctx.others_passed_at is None:
                self.ctx.others_passed_at = self.clock.now()
            self._check_due(others_done)
            if all(o.state == "success" for o in self.last.values()):
                return self.outcomes()
            if not others_done and self._others_done():
                continue  # the others just passed: start soaking now, not at the next wake-up
            if self.once:
                self._stop(others_done)
            self._wait(others_done)

    def outcomes(self) -> list[GateOutcome]:
        return [
            GateOutcome(g.describe(), self.last[i].state, self.last[i].message)
            for i, g in enumerate(self.gates)
        ]

    def _others_done(self) -> bool:
        return all(self.last[i].state == "success" for i, g in enumerate(self.gates) if not g.after_others)

    def _check_due(self, others_done: bool) -> None:
        now = self.clock.now()
        for i, gate in enumerate(self.gates):
            if (
                self.last[i].state == "success"
                or self.due[i] > now
                or (gate.after_others and not others_done)
            ):
                continue
            self.last[i] = _tidy(gate.check(self.ctx))
            self.due[i] = self.clock.now() + gate.interval
            if self.last[i].state == "failure":
                raise GateFailed(
                    f"{self.ctx.environment}: gate {gate.describe()} failed: {self.last[i].message}",
                    self.outcomes(),
                )

    def _stop(self, others_done: bool) -> None:
        """After one look: timed out, or GatesPending with when the soonest gate is due."""
        self._timed_out()
        ready = [
            g.ready_at(self.ctx) or self.due[i]
            for i, g in enumerate(self.gates)
            if self.last[i].state != "success" and (others_done or not g.after_others)
        ]
        raise GatesPending(self.outcomes(), min([*ready, self.deadline]))

    def _timed_out(self) -> None:
        if self.clock.now() >= self.deadline:
            for i, gate in enumerate(self.gates):
                if self.last[i].state == "pending":  # each says what it missed, and why
                    said = gate.at_timeout(self.ctx, self.last[i])
                    self.last[i] = _tidy(said if said.state == "pending" else self.last[i])
            waiting = "; ".join(str(o) for o in self.outcomes() if o.state != "success")
            raise GateTimedOut(
                f"{self.ctx.environment}: gates did not pass within the timeout: {waiting}", self.outcomes()
            )

    def _pending_due(self, others_done: bool) -> list[float]:
        return [
            self.due[i]
            for i, g in enumerate(self.gates)
            if self.last[i].state != "success" and (others_done or not g.after_others)
        ]

    def _wait(self, others_done: bool) -> None:
        now = self.clock.now()
        self._timed_out()
        if now >= self.next_progress:
            self.progress(
                _progress_line(self.ctx.environment, now - self.start, self.deadline - now, self.outcomes())
            )
            self.next_progress = now + self.progress_interval
        wake = min([*self._pending_due(others_done), self.next_progress, self.deadline])
        self.clock.sleep(max(wake - self.clock.now(), 0.05))


def _tidy(observation: Observation, limit: int = MESSAGE_LIMIT) -> Observation:
    """One line of bounded length: messages go into status descriptions, PR tables, summaries."""
    text = " ".join(observation.message.split())
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return Observation(observation.state, text)


def _progress_line(environment: str, elapsed: float, left: float, outcomes: list[GateOutcome]) -> str:
    waiting = [o for o in outcomes if o.state != "success"]
    shown = waiting[0] if waiting else outcomes[-1]
    more = f" (+{len(waiting) - 1} more waiting)" if len(waiting) > 1 else ""
    return (
        f"{environment}: waiting {format_duration(elapsed)} ({format_duration(left)} left), "
        f"gate {shown.gate}: {shown.state}, {shown.message}{more}"
    )
