"""The template sandbox: jinja2's immutable sandbox, plus limits on time and size.

jinja2's sandbox already blocks Python internals (``__class__``, ``__subclasses__``...), and
the environment has no loader, so ``include``/``import`` cannot read files; nothing in the
context gives access to the process environment. What it does not bound is work: nested
``range`` loops or ``'x' * 10**10`` can run forever or eat memory. Here, ``*`` and ``**``
are checked before they run, ``range`` is capped, and every render runs under a wall-clock
limit (SIGALRM in the main thread; a deadline checked by ``range`` everywhere).

Memory: no single operation may build a string or list of more than ``MAX_STRING`` items, and
that is judged *before* it is built: ``*``, ``+``, ``%`` and ``~`` (concatenation, through the
code generator), the string methods and filters that take a width or repeat their input
(``center``, ``ljust``, ``rjust``, ``zfill``, ``indent``, ``format``, ``join``, ``replace``,
``expandtabs``), and any other call's string result after it. So growth by doubling stops at
the limit, and ``'x'|center(3000000000)`` is refused without allocating anything.
"""

from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any

from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

MAX_STRING = 1_000_000  # characters (or items) one operation may produce
MAX_RANGE = 100_000  # items one range() may produce
RENDER_SECONDS = 5.0  # wall clock for one template render
_WIDTH = re.compile(r"(\d+)")  # any number in a format spec: a width or a precision

_deadline = threading.local()
_DICT_ATTRIBUTES = frozenset(dir(dict))  # what ``getattr`` finds on a plain dict before its keys


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


class _CappedConcat(CodeGenerator):
    """Compiles ``a ~ b`` to the sandbox's own ``concat``, which checks the size first."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.capped_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class LimitedSandbox(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset(["*", "**", "+", "%"])
    code_generator_class = _CappedConcat

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.globals["range"] = _capped_range
        for name, estimate in _FILTER_SIZES.items():
            self.filters[name] = _capped(self.filters[name], estimate, f"the {name} filter")

    def getattr(self, obj: Any, attribute: str) -> Any:
        """``mapping.key`` on a plain dict, as jinja2's sandbox looks it up (an attribute of
        dict first, then the key), without raising and catching an AttributeError on the way:
        most of a template's lookups are keys of its variables."""
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _check_deadline()
        if operator == "**":
            if isinstance(right, int) and abs(right) > 100 and isinstance(left, int) and abs(left) > 1:
                raise SecurityError("exponent too large")
            return left**right
        if operator == "%":
            _check_size(_printf_size(left, right), "'%'")
            return left % right
        size = _product_size(left, right) if operator == "*" else _sum_size(left, right)
        _check_size(size, f"'{operator}'")
        return left * right if operator == "*" else left + right

    def call(self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        _check_deadline()
        # jinja2 hands out str.format wrapped (update_wrapper keeps the bound method)
        owner = getattr(getattr(__obj, "__wrapped__", __obj), "__self__", None)
        estimate = _METHOD_SIZES.get(getattr(__obj, "__name__", "")) if isinstance(owner, str) else None
        if estimate is not None:
            _check_size(estimate(owner, *args, **kwargs), f"str.{__obj.__name__}")
        result = super().call(__context, __obj, *args, **kwargs)
        if isinstance(result, str | list | tuple):
            _check_size(len(result), "a call")
        return result

    def capped_concat(self, values: tuple[Any, ...]) -> str:
        parts = [str(v) for v in values]
        _check_size(sum(map(len, parts)), "'~'")
        return "".join(parts)


def _check_size(size: int, what: str) -> None:
    if size > MAX_STRING:
        raise SecurityError(f"{what} would make {size} characters or items, over the limit of {MAX_STRING}")


def _product_size(left: Any, right: Any) -> int:
    for seq, count in ((left, right), (right, left)):
        if isinstance(seq, str | list | tuple) and isinstance(count, int):
            return len(seq) * count
    return 0


def _sum_size(left: Any, right: Any) -> int:
    sized = (str, list, tuple)
    return len(left) + len(right) if isinstance(left, sized) and isinstance(right, sized) else 0


def _widest(spec: str) -> int:
    """The largest width or precision written in a format string (0 when none)."""
    return max((int(n) for n in _WIDTH.findall(spec) if len(n) < 12), default=0) + (
        MAX_STRING + 1 if any(len(n) >= 12 for n in _WIDTH.findall(spec)) else 0
    )


def _printf_size(left: Any, right: Any) -> int:
    if not isinstance(left, str):
        return 0
    values = right if isinstance(right, tuple) else (right,)
    return len(left) + _widest(left) * max(len(values), 1) + sum(len(str(v)) for v in values)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _width(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _join_size(sep: str, items: Any) -> int:
    listed = list(items) if isinstance(items, list | tuple) else []
    return len(sep) * max(len(listed) - 1, 0) + sum(len(_text(i)) for i in listed)


def _replace_size(s: str, old: Any = "", new: Any = "", count: Any = -1) -> int:
    hits = s.count(_text(old)) if _text(old) else len(s) + 1
    if isinstance(count, int) and count >= 0:
        hits = min(hits, count)
    return len(s) + hits * len(_text(new))


# Size of the result, from the arguments, before the work is done.
_METHOD_SIZES: dict[str, Callable[..., int]] = {
    "center": lambda s, width=0, *a: max(len(s), _width(width)),
    "ljust": lambda s, width=0, *a: max(len(s), _width(width)),
    "rjust": lambda s, width=0, *a: max(len(s), _width(width)),
    "zfill": lambda s, width=0: max(len(s), _width(width)),
    "expandtabs": lambda s, tabsize=8: len(s) + s.count("\t") * _width(tabsize),
    "replace": _replace_size,
    "join": lambda s, items=(): _join_size(s, items),
    "format": lambda s, *a, **k: len(s) + _widest(s) * (s.count("{") or 1) + sum(len(_text(v)) for v in a),
    "format_map": lambda s, *a: len(s) + _widest(s) * (s.count("{") or 1),
}
_FILTER_SIZES: dict[str, Callable[..., int]] = {
    "center": lambda s, width=80: max(len(_text(s)), _width(width)),
    "indent": lambda s, width=4, *a, **k: (
        len(_text(s)) * (1 + _width(width) if _width(width) else 1) + _width(width)
    ),
    "format": lambda s, *a, **k: _printf_size(_text(s), tuple(a) or tuple(k.values())),
    "join": lambda items, d="", *a, **k: _join_size(
        _text(d), list(items) if isinstance(items, list | tuple) else []
    ),
    "replace": lambda s, old="", new="", count=None: _replace_size(
        _text(s), old, new, -1 if count is None else count
    ),
    "wordwrap": lambda s, width=79, *a, **k: len(_text(s)) * 2,
}


def _capped(original: Callable[..., Any], estimate: Callable[..., int], what: str) -> Callable[..., Any]:
    def capped(*args: Any, **kwargs: Any) -> Any:
        _check_deadline()
        _check_size(estimate(*args[_context_args(original) :], **kwargs), what)
        result = original(*args, **kwargs)
        if isinstance(result, str):
            _check_size(len(result), what)
        return result

    for attr in ("jinja_pass_arg",):  # keep how jinja2 passes the context or environment
        if hasattr(original, attr):
            setattr(capped, attr, getattr(original, attr))
    return capped


def _context_args(original: Callable[..., Any]) -> int:
    """Filters marked pass_environment / pass_eval_context get one leading argument."""
    return 1 if getattr(original, "jinja_pass_arg", None) is not None else 0


@contextmanager
def time_limit(seconds: float | None = None) -> Iterator[None]:
    """Bound one render (``RENDER_SECONDS`` unless said): a deadline for the sandbox's own
    checks, and SIGALRM where it can be used (the main thread, with no other timer running) to
    stop pure-Python loops too."""
    seconds = RENDER_SECONDS if seconds is None else seconds
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


def describe_error(err: BaseException) -> str:
    if isinstance(err, RecursionError):
        return "RecursionError: a macro or loop calls itself too deeply"
    if isinstance(err, MemoryError):
        return "MemoryError: the template needs more memory than this machine has"
    return f"{type(err).__name__}: {getattr(err, 'message', None) or err}"


def template_line(tb: TracebackType | None) -> int | None:
    """The template line jinja2 put into the traceback, if any."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
