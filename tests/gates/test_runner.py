"""What the gate runner keeps of an observation: one line, bounded, for every report."""

from __future__ import annotations

from typing import Any

import pytest

from promoter.clock import FakeClock
from promoter.errors import GateTimedOut
from promoter.gates import GateContext, Observation
from promoter.gates.base import Gate
from promoter.gates.runner import GatesPending, run_gates
from promoter.gates.soak import SoakGate
from promoter.model import Source


class Chatty(Gate):
    """Reports a multi-line, overlong message, as a command or a server error may."""

    type = "chatty"

    def __init__(self, message: str) -> None:
        super().__init__(Source("promoter.yaml", 3), 5.0)
        self.message = message

    @classmethod
    def from_spec(cls, spec: Any, source: Source) -> Chatty:
        raise NotImplementedError

    def describe(self) -> str:
        return "chatty"

    def check(self, ctx: GateContext) -> Observation:
        return Observation("pending", self.message)


def test_messages_become_one_bounded_line() -> None:
    ctx = GateContext("qa", "c" * 40, "m" * 40, "/platform", "qa", FakeClock(0))
    with pytest.raises(GateTimedOut) as err:
        run_gates([Chatty("sync failed:\n  Deployment  api\tinvalid\n" + "x" * 500)], ctx, 10, lambda _: None)
    [outcome] = err.value.outcomes
    assert outcome.message.startswith("sync failed: Deployment api invalid xxx")  # type: ignore[attr-defined]
    assert len(outcome.message) == 400 and outcome.message.endswith("...")  # type: ignore[attr-defined]
    assert "\n" not in str(err.value)


def soak(seconds: float) -> Gate:
    return SoakGate(seconds, Source("promoter.yaml", 4))


def test_once_checks_each_gate_one_time_and_says_when_to_look_again() -> None:
    clock = FakeClock(0)
    ctx = GateContext("qa", "c" * 40, "m" * 40, "/platform", "qa", clock)
    with pytest.raises(GatesPending) as err:
        run_gates([Chatty("syncing")], ctx, 600, lambda _: None, once=True)
    assert clock.slept == []  # looked once, waited for nothing
    assert [o.state for o in err.value.outcomes] == ["pending"]
    assert err.value.due == 5.0  # the gate's interval


def test_once_a_soak_counts_from_when_the_others_passed_in_an_earlier_run() -> None:
    clock = FakeClock(1000)
    started = GateContext("qa", "c" * 40, "m" * 40, "/platform", "qa", clock)
    with pytest.raises(GatesPending) as first:
        run_gates([soak(300)], started, 2000, lambda _: None, once=True)
    assert first.value.due == 1300  # the soak's end, not its polling pace
    later = GateContext("qa", "c" * 40, "m" * 40, "/platform", "qa", clock, others_passed_at=690)
    assert [o.state for o in run_gates([soak(300)], later, 2000, lambda _: None, once=True)] == ["success"]
    late = GateContext("qa", "c" * 40, "m" * 40, "/platform", "qa", clock)
    with pytest.raises(GateTimedOut):  # a run arriving after the deadline fails at once
        run_gates([Chatty("syncing")], late, 999, lambda _: None, once=True)
