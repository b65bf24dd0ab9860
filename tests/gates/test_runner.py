"""What the gate runner keeps of an observation: one line, bounded, for every report."""

from __future__ import annotations

from typing import Any

import pytest

from promoter.clock import FakeClock
from promoter.errors import GateTimedOut
from promoter.gates import GateContext, Observation
from promoter.gates.base import Gate
from promoter.gates.runner import run_gates
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
