"""Go's view of template data: what prints how (``fmt.Sprint``), what is true, what a field is.

Data is plain Python: ``str``, ``bool``, ``int``, ``float``, ``None``, lists and dicts. Two marked
kinds say what Go would know from types: ``Struct`` (a Go struct: a missing field is an error),
``StringMap`` (a ``map[string]string``) and ``AnyMap`` (a ``map[interface{}]interface{}``, what
yaml.v2 reads a YAML mapping into). A plain ``dict`` is a ``map[string]interface{}``. A missing
key reached by field syntax (``.Labels.nope``) is "no value", printed ``<no value>``, whatever
the map's type; ``index`` gives the element type's zero value instead. An integer beyond int64's
range stands for a ``uint64``.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class Struct(dict[str, Any]):
    """A Go struct: its fields are known, and naming another is an error."""

    type_name = "struct"


class StringMap(dict[str, str]):
    """A Go ``map[string]string``: ``index`` of a missing key is the empty string."""


class AnyMap(dict[Any, Any]):
    """A Go ``map[interface{}]interface{}``: a YAML mapping as yaml.v2 reads it into an
    ``interface{}`` (its keys keep their YAML types: ``y`` is the bool true, ``2`` an int)."""


class _NoValue:
    """The result of a missing map key (Go's invalid reflect.Value)."""

    _instance: _NoValue | None = None

    def __new__(cls) -> _NoValue:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<no value>"


NO_VALUE = _NoValue()


class ExecError(Exception):
    """A template went wrong while it ran; the executor adds where."""


# Go's type name per Python type, first match wins (a Struct is a dict, a bool an int).
_TYPE_NAMES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (StringMap, "map[string]string"),
    (AnyMap, "map[interface {}]interface {}"),
    (dict, "map[string]interface {}"),
    ((list, tuple), "[]interface {}"),
    (bool, "bool"),
    (float, "float64"),
    (str, "string"),
)


def go_type(value: Any) -> str:
    """The Go type name a value stands for, in error messages."""
    if isinstance(value, Struct):
        return value.type_name
    if isinstance(value, int) and not isinstance(value, bool):
        return "int" if value < 1 << 63 else "uint64"
    return next((name for kind, name in _TYPE_NAMES if isinstance(value, kind)), "interface {}")


def truth(value: Any) -> bool:
    """Go's template truth: false, 0, nil, and empty strings, lists and maps are false."""
    if value is None or value is NO_VALUE:
        return False
    if isinstance(value, bool | int | float | str | list | tuple | dict):
        return bool(value)
    return True


def sprint(value: Any) -> str:
    """``fmt.Sprint`` of one value."""
    if isinstance(value, str):
        return value
    if value is NO_VALUE:
        return "<no value>"
    if value is None:
        return "<nil>"
    for kind, show in _PRINTERS:  # a loop, not next(genexpr): sprint runs for every action
        if isinstance(value, kind):
            return show(value)
    return str(value)


def _sprint_bool(value: bool) -> str:
    return "true" if value else "false"


def _sprint_list(value: list[Any] | tuple[Any, ...]) -> str:
    return "[" + " ".join(sprint(v) for v in value) + "]"


def _sprint_map(value: dict[Any, Any]) -> str:
    """Go prints a map's keys sorted."""
    return "map[" + " ".join(f"{sprint(k)}:{sprint(value[k])}" for k in sorted(value, key=str)) + "]"


def go_float(value: float) -> str:
    """A float as Go's ``%v`` prints it (``strconv.FormatFloat(f, 'g', -1, 64)``): the
    shortest digits, exponent form below 1e-4 or from 1e6 on (``1e+06``, ``1.5e-05``,
    ``123456``)."""
    special = _special_float(value)
    if special is not None:
        return special
    sign, digits, exponent = decimal.Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + exponent  # digits before the decimal point
    minus = "-" if sign else ""
    if point - 1 < -4 or point - 1 >= 6:  # the precision strconv decides by when shortest
        return minus + _exponent_form(text, point - 1)
    return minus + _decimal_form(text, point)


def _special_float(value: float) -> str | None:
    """NaN, the infinities and the zeros, which have no digits to shorten; None for another."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    return None


def _exponent_form(text: str, exp: int) -> str:
    """Significant digits ``text`` times 10**``exp``, as ``1.5e-05``."""
    mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
    return f"{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp):02d}"


def _decimal_form(text: str, point: int) -> str:
    """Significant digits ``text`` with ``point`` of them before the decimal point."""
    if point <= 0:
        return f"0.{'0' * -point}{text}"
    if point >= len(text):
        return f"{text}{'0' * (point - len(text))}"
    return f"{text[:point]}.{text[point:]}"


# How ``fmt.Sprint`` writes each other kind, first match wins (a bool is an int); what none
# matches prints as ``str`` does.
_PRINTERS: tuple[tuple[type | tuple[type, ...], Callable[[Any], str]], ...] = (
    (bool, _sprint_bool),
    (int, str),
    (float, go_float),
    ((list, tuple), _sprint_list),
    (dict, _sprint_map),
)


def field(value: Any, name: str) -> Any:
    """``value.name``, as Go's template evaluates a field or a map key."""
    if isinstance(value, Struct):
        if name not in value:
            raise ExecError(f"can't evaluate field {name} in type {value.type_name}")
        return value[name]
    if isinstance(value, dict):
        return value.get(name, NO_VALUE)
    if value is NO_VALUE:  # Go: the field of no value is no value
        return NO_VALUE
    if value is None:
        raise ExecError(f"nil pointer evaluating interface {{}}.{name}")
    raise ExecError(f"can't evaluate field {name} in type {go_type(value)}")


def plain_arg(value: Any) -> Any:
    """A value as a function receives it: "no value" is nil."""
    return None if value is NO_VALUE else value


@dataclass(frozen=True)
class Limits:
    """What one run may spend: characters out (also the longest string a function may make),
    steps (actions, commands and loop turns), and wall-clock seconds."""

    output: int = 1_000_000
    steps: int = 1_000_000
    seconds: float = 5.0


def plain(value: Any) -> Any:
    """Data as plain dicts and lists (for YAML and JSON)."""
    if value is NO_VALUE:
        return None
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value
