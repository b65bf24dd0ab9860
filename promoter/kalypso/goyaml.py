"""YAML read as Kalypso's scheduler reads a config value: ``gopkg.in/yaml.v2``'s ``Unmarshal``
into ``interface{}`` (``controllers/assignment_controller.go`` ``getObjectFromConfigValue``).

What a plain (unquoted) scalar becomes follows go-yaml v2's ``resolve.go`` ``resolve``, not
PyYAML's YAML 1.1 resolver, since the Go type is what ``hash`` hashes and what Go prints:

- ``y``, ``Y``, ``yes``, ``Yes``, ``YES``, ``true``, ``True``, ``TRUE``, ``on``, ``On``, ``ON``
  are true, the same with ``n``/``no``/``false``/``off`` false; ``""``, ``~``, ``null``,
  ``Null``, ``NULL`` nil; ``.nan``, ``.inf``, ``-.inf`` (and their ``.NaN``/``.Inf`` forms)
  floats;
- a scalar starting with a digit or a sign is an integer when ``strconv.ParseInt(s, 0, 64)``
  (underscores removed) or else ``ParseUint`` reads it (``0x1F``, ``0o17``, ``017`` octal,
  ``0b101``), else a ``float64`` when it matches go-yaml's float pattern
  (``1e3`` is 1000.0, where PyYAML keeps a string); one starting with ``.`` is a float when Go
  reads it as one;
- anything else is a string: a timestamp (go-yaml keeps its text for an ``interface{}``, where
  PyYAML makes a date), ``1:30`` (PyYAML's sexagesimal 90).

Quoted scalars are strings, explicit tags are PyYAML's."""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

_PLAIN = "tag:promoter.dev,2024:go-yaml-v2-plain"
_WORDS: dict[str, Any] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?")
_BASES = (("0x", 16), ("0X", 16), ("0o", 8), ("0O", 8), ("0b", 2), ("0B", 2))
_DIGITS = {2: "01", 8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}


def parse_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)``, else ``ParseUint``: the integer, or None."""
    sign, body = (text[0], text[1:]) if text[:1] in ("+", "-") else ("", text)
    base = 10
    for prefix, prefix_base in _BASES:
        if body.startswith(prefix):
            base, body = prefix_base, body[2:]
            break
    else:
        if len(body) > 1 and body.startswith("0"):
            base, body = 8, body[1:]
    if not body or any(c not in _DIGITS[base] for c in body):
        return None
    value = int(body, base) * (-1 if sign == "-" else 1)
    if -(1 << 63) <= value < (1 << 63) or (not sign and value < (1 << 64)):
        return value
    return None


def resolve_plain(text: str) -> Any:
    """What go-yaml v2 makes of a plain scalar decoded into ``interface{}``."""
    if text in _WORDS:
        return _WORDS[text]
    if text[0] == ".":
        return float(text) if _DOT_FLOAT.fullmatch(text) else text
    if text[0] not in "+-0123456789":
        return text
    plain = text.replace("_", "")
    number = parse_int(plain)
    if number is not None:
        return number
    if _GO_FLOAT.fullmatch(plain):
        value = float(plain)
        return text if math.isinf(value) else value  # Go's ParseFloat refuses an overflow
    return text


class GoYamlV2Loader(yaml.SafeLoader):
    """PyYAML's safe loader with go-yaml v2's reading of plain scalars."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode and implicit[0]:
            return "tag:yaml.org,2002:merge" if value == "<<" else _PLAIN
        return super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]


def _construct_plain(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    return resolve_plain(str(loader.construct_scalar(node)))


GoYamlV2Loader.add_constructor(_PLAIN, _construct_plain)


def load_first(text: str) -> Any:
    """The first document, as go-yaml's ``Unmarshal`` reads it (None for none)."""
    return next(iter(yaml.load_all(text, Loader=GoYamlV2Loader)), None)
