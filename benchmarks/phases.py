"""Where a run's time goes: wrap the promoter's own functions and methods with timers.

Timers nest: a phase is charged only its own time (a call's time minus the timed calls inside
it), so the phases add up to the timed part of the run, and the rest of the run is "other".
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

PHASES = ("load", "schedule", "render", "commit", "push")


class Phases:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self.calls: dict[str, int] = dict.fromkeys(PHASES, 0)
        self._stack: list[float] = []  # time spent in timed calls nested in each open call

    def timed(self, phase: str, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            self._stack.append(0.0)
            try:
                return func(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                nested = self._stack.pop()
                self.seconds[phase] += elapsed - nested
                self.calls[phase] += 1
                if self._stack:
                    self._stack[-1] += elapsed

        return wrapper

    def wrap(self, obj: object, method: str, phase: str) -> None:
        """Time ``obj.method`` (on this instance only)."""
        setattr(obj, method, self.timed(phase, getattr(obj, method)))

    @contextmanager
    def patch(self, module: Any, name: str, phase: str) -> Iterator[None]:
        """Time the module-level function ``module.name`` for the duration of the block."""
        original = getattr(module, name)
        setattr(module, name, self.timed(phase, original))
        try:
            yield
        finally:
            setattr(module, name, original)
