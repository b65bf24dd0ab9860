"""The sprig functions Kalypso's templates and docs use, as sprig **v2.22.0** (Kalypso's pin)
defines them (no ``get``, ``dig``, ``mustXxx`` or other v3 names; ``trunc`` with a negative
count fails). Kalypso's own functions are in ``kalypso``.

``SIGNATURES`` gives the Go parameter types of the functions whose parameters are not all
``interface{}`` (``s`` string, ``i`` int, ``a`` interface{}): the executor refuses a missing
key, nil or another type there as Go's ``text/template`` does (``upper .Labels.nope`` is
"invalid value; expected string").

Left out on purpose: everything that reads the environment, files, the network or the clock
(``env``, ``expandenv``, ``getHostByName``, ``now``, ``date``...), random values, and regular
expressions (Python's engine, unlike Go's RE2, can take exponential time)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable
from typing import Any

import yaml

from promoter.gotemplate.values import ExecError, Limits, go_type, plain, sprint, truth

Function = Callable[..., Any]


def text(value: Any) -> str:
    """sprig's ``strval``: strings as they are, nil as empty, anything else as Go prints it."""
    if value is None:
        return ""
    return value if isinstance(value, str) else sprint(value)


def go_quote(value: str) -> str:
    """``strconv.Quote``: double quotes, Go's escapes."""
    out = ['"']
    for char in value:
        code = ord(char)
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char in "\a\b\f\n\r\t\v":
            out.append("\\" + "abfnrtv"["\a\b\f\n\r\t\v".index(char)])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif not char.isprintable() and code > 0x7F:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


class _GoDumper(yaml.SafeDumper):
    """Strings as go-yaml writes them: one that would read back as another type (``"false"``,
    ``"1"``) in double quotes; one of several lines as a literal block (``|-``); others plain,
    or single-quoted when they must be."""

    def represent_str(self, data: str) -> yaml.ScalarNode:
        tag = self.resolve(yaml.ScalarNode, data, (True, False))  # type: ignore[no-untyped-call]
        style = '"' if tag != "tag:yaml.org,2002:str" else "|" if "\n" in data else None
        return self.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_GoDumper.add_representer(str, _GoDumper.represent_str)


def to_yaml(value: Any) -> str:
    """YAML as Kubernetes' marshaller writes it (keys sorted, block style), without the final
    newline, as Helm's and Kalypso's ``toYaml`` return it."""
    dumped = yaml.dump(
        plain(value),
        Dumper=_GoDumper,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 30,
    )
    if dumped.endswith("\n...\n"):
        dumped = dumped[: -len("...\n")]
    return dumped[:-1] if dumped.endswith("\n") else dumped


def to_json(value: Any) -> str:
    """``json.Marshal``: keys sorted, ``< > &`` escaped as Go escapes them."""
    dumped = json.dumps(plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return dumped.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def strval(value: Any) -> str:
    """sprig's ``strval`` (``toString``): a string as it is, anything else as ``%v`` prints it
    (nil is ``<nil>``)."""
    return value if isinstance(value, str) else sprint(value)


def indent(limits: Limits, spaces: Any, value: Any) -> str:
    count = _count(limits, spaces, "indent")
    pad = " " * count
    body = text(value)
    if len(body) + count * (body.count("\n") + 1) > limits.output:
        raise ExecError(f"indent would make over {limits.output} characters")
    return pad + body.replace("\n", "\n" + pad)


def _count(limits: Limits, value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ExecError(f"{name} needs a number, got {go_type(value)}")
    try:
        count = int(value)
    except ValueError as err:
        raise ExecError(f"{name} needs a number, got {value!r}") from err
    if count > limits.output:
        raise ExecError(f"{name} of {count} is over the limit of {limits.output}")
    return max(count, 0)


def repeat(limits: Limits, count: Any, value: Any) -> str:
    times = _count(limits, count, "repeat")
    body = text(value)
    if times * len(body) > limits.output:
        raise ExecError(f"repeat would make {times * len(body)} characters, over {limits.output}")
    return body * times


def default(limits: Limits, fallback: Any, *given: Any) -> Any:
    """``default d v``: ``v`` unless it is empty (or absent), else ``d``."""
    if not given or not truth(given[0]):
        return fallback
    return given[0]


def dictionary(limits: Limits, *pairs: Any) -> dict[str, Any]:
    return {text(pairs[i]): pairs[i + 1] if i + 1 < len(pairs) else "" for i in range(0, len(pairs), 2)}


def _list_of(value: Any, name: str) -> list[Any]:
    if isinstance(value, list | tuple):
        return list(value)
    raise ExecError(f"{name} needs a list, got {go_type(value)}")


def _number(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip() or 0)
        except ValueError:
            return 0
    return 0


def _float(value: Any) -> float:
    try:
        return float(value) if value is not None else 0.0
    except (TypeError, ValueError):
        return 0.0


def _div(limits: Limits, a: Any, b: Any) -> int:
    divisor = _number(b)
    if divisor == 0:
        raise ExecError("integer divide by zero")
    quotient = abs(_number(a)) // abs(divisor)
    return quotient if (_number(a) >= 0) == (divisor > 0) else -quotient


def _mod(limits: Limits, a: Any, b: Any) -> int:
    divisor = _number(b)
    if divisor == 0:
        raise ExecError("integer divide by zero")
    return _number(a) - divisor * _div(limits, a, b)


def _b64dec(limits: Limits, value: Any) -> str:
    try:
        return base64.b64decode(text(value), validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError) as err:
        return str(err)


def _required(limits: Limits, message: Any, *value: Any) -> Any:
    if not value or value[0] is None or (isinstance(value[0], str) and not value[0]):
        raise ExecError(text(message))
    return value[0]


def _fail(limits: Limits, message: Any) -> str:
    raise ExecError(text(message))


def _trunc(limits: Limits, count: int, value: str) -> str:
    """v2.22.0's ``trunc``: the first ``count`` bytes; a negative count is Go's slice panic."""
    data = value.encode("utf-8")
    if len(data) <= count:
        return value
    if count < 0:
        raise ExecError(f"runtime error: slice bounds out of range [:{count}]")
    return data[:count].decode("utf-8", "replace")


def _substr(limits: Limits, start: Any, end: Any, value: Any) -> str:
    s, a, b = text(value), _number(start), _number(end)
    if a < 0:
        return s[:b]
    if b < 0 or b > len(s):
        return s[a:]
    return s[a:b] if a <= b else ""


def _title(limits: Limits, value: Any) -> str:
    words = text(value).split(" ")
    return " ".join(w[:1].upper() + w[1:] for w in words)


def _quote(mark: str) -> Function:
    def quoted(limits: Limits, *values: Any) -> str:
        parts = [v for v in values if v is not None]
        if mark == '"':
            return " ".join(go_quote(text(v)) for v in parts)
        return " ".join(f"'{text(v)}'" for v in parts)

    return quoted


def _sum(op: Callable[[int, int], int]) -> Function:
    def apply(limits: Limits, first: Any, *rest: Any) -> int:
        total = _number(first)
        for value in rest:
            total = op(total, _number(value))
            if abs(total) > 1 << 63:
                raise ExecError("integer overflow")
        return total

    return apply


def _uniq(limits: Limits, items: Any) -> list[Any]:
    out: list[Any] = []
    for item in _list_of(items, "uniq"):
        if item not in out:
            out.append(item)
    return out


SPRIG: dict[str, Function] = {
    "default": default,
    "empty": lambda limits, v=None: not truth(v),
    "coalesce": lambda limits, *v: next((x for x in v if truth(x)), None),
    "ternary": lambda limits, a, b, cond: a if truth(cond) else b,
    "quote": _quote('"'),
    "squote": _quote("'"),
    "cat": lambda limits, *v: " ".join(text(x) for x in v if x is not None),
    "upper": lambda limits, v: text(v).upper(),
    "lower": lambda limits, v: text(v).lower(),
    "title": _title,
    "trim": lambda limits, v: text(v).strip(),
    "trimAll": lambda limits, cut, v: text(v).strip(text(cut)),
    "trimPrefix": lambda limits, p, v: text(v).removeprefix(text(p)),
    "trimSuffix": lambda limits, p, v: text(v).removesuffix(text(p)),
    "replace": lambda limits, old, new, v: _replace(limits, text(old), text(new), text(v)),
    "contains": lambda limits, sub, v: text(sub) in text(v),
    "hasPrefix": lambda limits, p, v: text(v).startswith(text(p)),
    "hasSuffix": lambda limits, p, v: text(v).endswith(text(p)),
    "nospace": lambda limits, v: "".join(text(v).split()),
    "trunc": _trunc,
    "substr": _substr,
    "repeat": repeat,
    "indent": indent,
    "nindent": lambda limits, n, v: "\n" + indent(limits, n, v),
    "toString": lambda limits, v: strval(v),
    "toStrings": lambda limits, v: [text(x) for x in _list_of(v, "toStrings")],
    "toJson": lambda limits, v: _bounded(limits, to_json(v)),
    "toPrettyJson": lambda limits, v: _bounded(limits, json.dumps(plain(v), sort_keys=True, indent=2)),
    "list": lambda limits, *v: list(v),
    "dict": dictionary,
    "keys": lambda limits, *ds: sorted(k for d in ds for k in d),
    "values": lambda limits, d: [d[k] for k in sorted(d)],
    "hasKey": lambda limits, d, k: isinstance(d, dict) and text(k) in d,
    "has": lambda limits, needle, items: needle in _list_of(items, "has"),
    "first": lambda limits, items: (_list_of(items, "first") or [None])[0],
    "last": lambda limits, items: (_list_of(items, "last") or [None])[-1],
    "uniq": _uniq,
    "compact": lambda limits, items: [x for x in _list_of(items, "compact") if truth(x)],
    "sortAlpha": lambda limits, items: sorted(text(x) for x in _list_of(items, "sortAlpha")),
    "join": lambda limits, sep, items: text(sep).join(text(x) for x in _list_of(items, "join")),
    "splitList": lambda limits, sep, v: text(v).split(text(sep)) if text(sep) else list(text(v)),
    "b64enc": lambda limits, v: base64.b64encode(text(v).encode()).decode(),
    "b64dec": _b64dec,
    "sha256sum": lambda limits, v: hashlib.sha256(text(v).encode()).hexdigest(),
    "sha1sum": lambda limits, v: hashlib.sha1(text(v).encode()).hexdigest(),
    "add": _sum(lambda a, b: a + b),
    "sub": lambda limits, a, b: _number(a) - _number(b),
    "mul": _sum(lambda a, b: a * b),
    "div": _div,
    "mod": _mod,
    "max": lambda limits, a, *r: max(_number(x) for x in (a, *r)),
    "min": lambda limits, a, *r: min(_number(x) for x in (a, *r)),
    "add1": lambda limits, a: _number(a) + 1,
    "int": lambda limits, v: _number(v),
    "int64": lambda limits, v: _number(v),
    "float64": lambda limits, v: _float(v),
    "atoi": lambda limits, v: _number(v),
    "required": _required,
    "fail": _fail,
}


SIGNATURES: dict[str, str] = {
    **dict.fromkeys(
        ("upper", "lower", "title", "trim", "nospace", "b64enc", "b64dec", "sha256sum", "sha1sum", "atoi"),
        "s",
    ),
    **dict.fromkeys(
        ("trimAll", "trimPrefix", "trimSuffix", "contains", "hasPrefix", "hasSuffix", "splitList"), "ss"
    ),
    "replace": "sss",
    "trunc": "is",
    "substr": "iis",
    "repeat": "is",
    "indent": "is",
    "nindent": "is",
    "join": "sa",
}


def _bounded(limits: Limits, value: str) -> str:
    if len(value) > limits.output:
        raise ExecError(f"a string of {len(value)} characters, over the limit of {limits.output}")
    return value


def _replace(limits: Limits, old: str, new: str, value: str) -> str:
    count = value.count(old) if old else len(value) + 1
    if len(value) + count * len(new) > limits.output:
        raise ExecError(f"replace would make a string over the limit of {limits.output}")
    return value.replace(old, new)
