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


def go_type(value: Any) -> str:
    """The Go type name a value stands for, in error messages."""
    if isinstance(value, Struct):
        return value.type_name
    if isinstance(value, StringMap):
        return "map[string]string"
    if isinstance(value, AnyMap):
        return "map[interface {}]interface {}"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list | tuple):
        return "[]interface {}"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int" if value < 1 << 63 else "uint64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    return "interface {}"


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
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, list | tuple):
        return "[" + " ".join(sprint(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{sprint(k)}:{sprint(value[k])}" for k in sorted(value, key=str)) + "]"
    return str(value)


def go_float(value: float) -> str:
    """A float as Go's ``%v`` prints it (``strconv.FormatFloat(f, 'g', -1, 64)``): the
    shortest digits, exponent form below 1e-4 or from 1e6 on (``1e+06``, ``1.5e-05``,
    ``123456``)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    d = decimal.Decimal(repr(value))
    sign, digits, exponent = d.as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    point = len(digits) + exponent  # digits before the decimal point
    minus = "-" if sign else ""
    if point - 1 < -4 or point - 1 >= 6:  # the precision strconv decides by when shortest
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        exp = point - 1
        return f"{minus}{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp):02d}"
    if point <= 0:
        return f"{minus}0.{'0' * -point}{text}"
    if point >= len(text):
        return f"{minus}{text}{'0' * (point - len(text))}"
    return f"{minus}{text[:point]}.{text[point:]}"


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
