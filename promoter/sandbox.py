"""The template sandbox: jinja2's immutable sandbox, plus limits on time and size.

jinja2's sandbox already blocks Python internals (``__class__``, ``__subclasses__``...), and
the environment has no loader, so ``include``/``import`` cannot read files; nothing in the
context gives access to the process environment. What it does not bound is work: nested
``range`` loops or ``'x' * 10**10`` can run forever or eat memory. Here, ``*`` and ``**``
are checked before they run, ``range`` is capped, and every render runs under a wall-clock
limit (SIGALRM in the main thread; a deadline checked by ``range`` everywhere).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

MAX_STRING = 1_000_000  # characters a single * may produce
MAX_RANGE = 100_000  # items one range() may produce
RENDER_SECONDS = 5.0  # wall clock for one template render

_deadline = threading.local()


class RenderTimeout(SecurityError):
    """A template ran longer than its time limit."""


def _check_deadline() -> None:
    until = getattr(_deadline, "value", None)
    if until is not None and time.monotonic() > until:
        raise RenderTimeout(f"rendering took longer than {RENDER_SECONDS:g}s")


def _capped_range(*args: int) -> Iterator[int]:
    values = range(*args)
    if len(values) > MAX_RANGE:
        raise SecurityError(f"range() of {len(values)} items is over the limit of {MAX_RANGE}")
    for i, value in enumerate(values):
        if i % 1000 == 0:
            _check_deadline()
        yield value


class LimitedSandbox(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset(["*", "**"])

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.globals["range"] = _capped_range

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _check_deadline()
        if operator == "**":
            if isinstance(right, int) and abs(right) > 100 and isinstance(left, int) and abs(left) > 1:
                raise SecurityError("exponent too large")
            return left**right
        size = _product_size(left, right)
        if size > MAX_STRING:
            raise SecurityError(f"'*' would make {size} items, over the limit of {MAX_STRING}")
        return left * right

    def call(self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        _check_deadline()
        return super().call(__context, __obj, *args, **kwargs)


def _product_size(left: Any, right: Any) -> int:
    for seq, count in ((left, right), (right, left)):
        if isinstance(seq, str | list | tuple) and isinstance(count, int):
            return len(seq) * count
    return 0


@contextmanager
def time_limit(seconds: float = RENDER_SECONDS) -> Iterator[None]:
    """Bound one render: a deadline for the sandbox's own checks, and SIGALRM where it can be
    used (the main thread, with no other timer running) to stop pure-Python loops too."""
    previous = getattr(_deadline, "value", None)
    _deadline.value = time.monotonic() + seconds
    use_alarm = (
        threading.current_thread() is threading.main_thread() and signal.getitimer(signal.ITIMER_REAL)[0] == 0
    )
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        _deadline.value = previous


def _on_alarm(signum: int, frame: object) -> None:
    raise RenderTimeout(f"rendering took longer than {RENDER_SECONDS:g}s")
