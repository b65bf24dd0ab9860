"""The functions a template may call: Go's predefined ones (``and``, ``or``, ``not``, ``len``,
``index``, ``slice``, ``print``, ``printf``, ``println``, ``html``, ``js``, ``urlquery``, ``eq``,
``ne``, ``lt``, ``le``, ``gt``, ``ge``), and, from ``sprig``, the subset Kalypso's templates use
with Kalypso's own ``toYaml``, ``stringify``, ``hash`` and ``unquote``.

Every function takes the run's ``Limits`` first. None reads a file, the network, the clock or
the environment: the output depends on the template and the data alone."""

from __future__ import annotations

import html as _html
import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote_plus

from promoter.gotemplate.kalypso import KALYPSO, YAML_FUNCTIONS, YamlVersion
from promoter.gotemplate.sprig import SPRIG, go_quote
from promoter.gotemplate.values import ExecError, Limits, StringMap, go_float, go_type, sprint, truth

Function = Callable[..., Any]


def _and(thunks: list[Callable[[], Any]]) -> Any:
    if not thunks:
        raise ExecError("wrong number of args for and: want at least 1 got 0")
    value: Any = None
    for thunk in thunks:
        value = thunk()
        if not truth(value):
            return value
    return value


def _or(thunks: list[Callable[[], Any]]) -> Any:
    if not thunks:
        raise ExecError("wrong number of args for or: want at least 1 got 0")
    value: Any = None
    for thunk in thunks:
        value = thunk()
        if truth(value):
            return value
    return value


LAZY: dict[str, Callable[[list[Callable[[], Any]]], Any]] = {"and": _and, "or": _or}


def _arity(name: str, args: tuple[Any, ...], want: int) -> None:
    if len(args) != want:
        raise ExecError(f"wrong number of args for {name}: want {want} got {len(args)}")


def _not(limits: Limits, *args: Any) -> bool:
    _arity("not", args, 1)
    return not truth(args[0])


def _len(limits: Limits, *args: Any) -> int:
    _arity("len", args, 1)
    value = args[0]
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, list | tuple | dict):
        return len(value)
    raise ExecError(f"len of type {go_type(value)}")


def _index(limits: Limits, item: Any, *keys: Any) -> Any:
    for key in keys:
        if isinstance(item, dict):  # a missing key: the element type's zero value
            item = item.get(key, "" if isinstance(item, StringMap) else None)
        elif isinstance(item, list | tuple | str):
            if not isinstance(key, int) or isinstance(key, bool):
                raise ExecError(f"cannot index slice/array with type {go_type(key)}")
            seq = item.encode("utf-8") if isinstance(item, str) else item
            if not 0 <= key < len(seq):
                raise ExecError(f"index out of range: {key}")
            item = seq[key]
        else:
            raise ExecError(f"can't index item of type {go_type(item)}")
    return item


def _slice(limits: Limits, item: Any, *idx: Any) -> Any:
    _check_slice(item, idx)
    start = idx[0] if idx else 0
    end = idx[1] if len(idx) > 1 else len(item)  # a third index (the capacity) cuts nothing
    if not 0 <= start <= end <= len(item):
        raise ExecError(f"index out of range: {start}:{end}")
    return item[start:end]


def _check_slice(item: Any, idx: tuple[Any, ...]) -> None:
    """Go's refusals before it slices: what cannot be sliced, too many indexes (a string takes
    two, a list three), and an index that is not an integer."""
    if not isinstance(item, str | list | tuple):
        raise ExecError(f"can't slice item of type {go_type(item)}")
    if len(idx) > (2 if isinstance(item, str) else 3):
        raise ExecError("too many slice indexes")
    if not all(isinstance(i, int) for i in idx):
        raise ExecError("cannot index slice/array with nil")


def go_sprint(*args: Any) -> str:
    """``fmt.Sprint``: a space between two operands when neither is a string."""
    out: list[str] = []
    for i, arg in enumerate(args):
        if i and not isinstance(arg, str) and not isinstance(args[i - 1], str):
            out.append(" ")
        out.append(sprint(arg))
    return "".join(out)


_VERB = re.compile(r"%([-+# 0]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])")


def go_printf(limits: Limits, fmt: Any, *args: Any) -> str:
    """``fmt.Sprintf`` for the verbs templates use: v s q d f g e x X o t c %%."""
    if not isinstance(fmt, str):
        raise ExecError(f"printf format must be a string, got {go_type(fmt)}")
    values = list(args)
    used = 0

    def one(match: re.Match[str]) -> str:
        nonlocal used
        flags, width, precision, verb = match.groups()
        if verb == "%":
            return "%"
        if used >= len(values):
            return f"%!{verb}(MISSING)"
        value = values[used]
        used += 1
        if int(width or 0) > limits.output or int(precision or 0) > limits.output:
            raise ExecError(f"printf width over the limit of {limits.output}")
        return _pad(_verb(verb, value, precision), flags, width)

    text = _VERB.sub(one, fmt)
    if used < len(values):
        text += "%!(EXTRA " + ", ".join(f"{go_type(v)}={sprint(v)}" for v in values[used:]) + ")"
    return text


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(verb: str, value: Any, precision: str | None) -> str:
    """``%v`` and ``%s`` (``%.3s``: the first three characters)."""
    text = sprint(value)
    return text[: int(precision)] if precision is not None and verb == "s" else text


def _quoted(verb: str, value: Any, precision: str | None) -> str:
    return repr(chr(value)) if _is_int(value) else go_quote(sprint(value))


def _type_name(verb: str, value: Any, precision: str | None) -> str:
    return "<nil>" if value is None else go_type(value)


def _boolean(verb: str, value: Any, precision: str | None) -> str | None:
    return ("true" if value else "false") if isinstance(value, bool) else None


def _character(verb: str, value: Any, precision: str | None) -> str | None:
    return chr(value) if _is_int(value) else None


def _decimal(verb: str, value: Any, precision: str | None) -> str | None:
    return str(value) if _is_int(value) else None


def _based(verb: str, value: Any, precision: str | None) -> str | None:
    return _base(verb, value) if _is_int(value) or isinstance(value, str) else None


def _floating(verb: str, value: Any, precision: str | None) -> str | None:
    if not (_is_int(value) or isinstance(value, float)):
        return None
    if verb in "gG" and precision is None:
        return go_float(float(value))
    return format(float(value), f".{precision or 6}{verb}" if verb != "g" else f".{precision}g")


# Each verb's formatter: the text, or None when the operand's type does not suit the verb.
_VERBS: dict[str, Callable[[str, Any, str | None], str | None]] = {
    **dict.fromkeys("vs", _text),
    "q": _quoted,
    "T": _type_name,
    "t": _boolean,
    "c": _character,
    "d": _decimal,
    **dict.fromkeys("xXo", _based),
    **dict.fromkeys("feEgG", _floating),
}


def _verb(verb: str, value: Any, precision: str | None) -> str:
    formatter = _VERBS.get(verb)
    text = formatter(verb, value, precision) if formatter is not None else None
    return text if text is not None else f"%!{verb}({go_type(value)}={sprint(value)})"


def _base(verb: str, value: int | str) -> str:
    if isinstance(value, str):
        text = value.encode("utf-8").hex()
        return text.upper() if verb == "X" else text
    return format(value, {"x": "x", "X": "X", "o": "o"}[verb])


def _pad(text: str, flags: str, width: str | None) -> str:
    if not width:
        return text
    size = int(width)
    if "-" in flags:
        return text.ljust(size)
    if "0" in flags and text.lstrip("-").replace(".", "").isdigit():
        sign = "-" if text.startswith("-") else ""
        return sign + text.lstrip("-").rjust(size - len(sign), "0")
    return text.rjust(size)


def _order(a: Any, b: Any) -> int:
    return int(a > b) - int(a < b)


_BASIC = (bool, int, float, str)


def _compare(name: str, a: Any, b: Any) -> int:
    if not isinstance(a, _BASIC) or not isinstance(b, _BASIC):
        return _compare_nil(name, a, b)
    _check_comparable(name, a, b)
    return _order(a, b)


def _compare_nil(name: str, a: Any, b: Any) -> int:
    """Of a non-basic operand only ``eq`` with nil is defined (0 when both are nil)."""
    if name == "eq" and (a is None or b is None):
        return 0 if a is b else 1
    raise ExecError(f"non-comparable type {go_type(a if not isinstance(a, _BASIC) else b)}")


def _check_comparable(name: str, a: Any, b: Any) -> None:
    if type(a) is not type(b):  # Go compares int with uint, never an integer with a float
        raise ExecError("incompatible types for comparison")
    if isinstance(a, bool) and name not in ("eq", "ne"):
        raise ExecError(f"invalid type for comparison: {go_type(a)}")


def _eq(limits: Limits, first: Any, *others: Any) -> bool:
    if not others:
        raise ExecError("missing argument for comparison")
    return any(_compare("eq", first, other) == 0 for other in others)


def _comparison(name: str, test: Callable[[int], bool]) -> Function:
    def compare(limits: Limits, *args: Any) -> bool:
        _arity(name, args, 2)
        return test(_compare(name, args[0], args[1]))

    return compare


def _js(limits: Limits, *args: Any) -> str:
    text = go_sprint(*args)
    out = json.dumps(text)[1:-1].replace("'", "\\'").replace("<", "\\u003C").replace(">", "\\u003E")
    return out.replace("&", "\\u0026").replace("=", "\\u003D")


BUILTINS: dict[str, Function] = {
    "not": _not,
    "len": _len,
    "index": _index,
    "slice": _slice,
    "print": lambda limits, *a: go_sprint(*a),
    "println": lambda limits, *a: " ".join(sprint(v) for v in a) + "\n",
    "printf": go_printf,
    "html": lambda limits, *a: html_escape(go_sprint(*a)),
    "js": _js,
    "urlquery": lambda limits, *a: quote_plus(go_sprint(*a), safe=""),
    "eq": _eq,
    "ne": _comparison("ne", lambda c: c != 0),
    "lt": _comparison("lt", lambda c: c < 0),
    "le": _comparison("le", lambda c: c <= 0),
    "gt": _comparison("gt", lambda c: c > 0),
    "ge": _comparison("ge", lambda c: c >= 0),
}


def html_escape(text: str) -> str:
    """What ``html/template`` writes for a value in HTML text: ``& ' < > " +`` as entities."""
    escaped = _html.escape(text, quote=False).replace('"', "&#34;").replace("'", "&#39;")
    return escaped.replace("+", "&#43;").replace("\x00", "\ufffd")


FUNCTIONS: dict[str, Function] = {**SPRIG, **KALYPSO, **YAML_FUNCTIONS["v3"], **BUILTINS}
#: the functions with Kalypso's toYaml and stringify of yaml.v3 (HEAD) or yaml.v2 (before 97c555b)
TABLES: dict[YamlVersion, dict[str, Function]] = {
    version: {**SPRIG, **KALYPSO, **table, **BUILTINS} for version, table in YAML_FUNCTIONS.items()
}
NAMES = frozenset(FUNCTIONS) | frozenset(LAZY)
