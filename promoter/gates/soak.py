"""The ``soak`` gate: a minimum time after every other gate passed."""

from __future__ import annotations

from typing import Any

from promoter.clock import format_duration, parse_duration
from promoter.gates.base import Gate, GateContext, Observation, spec_error
from promoter.model import Source


class SoakGate(Gate):
    type = "soak"
    after_others = True

    def __init__(self, duration: float, source: Source) -> None:
        super().__init__(source, interval=min(max(duration / 10, 0.2), 30.0))
        self.duration = duration

    @classmethod
    def from_spec(cls, spec: Any, source: Source) -> SoakGate:
        if isinstance(spec, dict):
            unknown = set(spec) - {"duration"}
            if unknown:
                raise spec_error(source, "soak", f"unknown field '{sorted(unknown)[0]}'")
            spec = spec.get("duration")
        try:
            return cls(parse_duration(spec), source)
        except ValueError as err:
            raise spec_error(source, "soak", str(err)) from err

    def describe(self) -> str:
        return f"soak {format_duration(self.duration)}"

    def check(self, ctx: GateContext) -> Observation:
        start = ctx.others_passed_at if ctx.others_passed_at is not None else ctx.clock.now()
        soaked = ctx.clock.now() - start
        if soaked >= self.duration:
            return Observation("success", f"soaked {format_duration(soaked)}")
        return Observation("pending", f"{format_duration(soaked)} of {format_duration(self.duration)}")

    def ready_at(self, ctx: GateContext) -> float | None:
        """The moment the soak is done (a run that does not wait checks again then)."""
        return None if ctx.others_passed_at is None else ctx.others_passed_at + self.duration
