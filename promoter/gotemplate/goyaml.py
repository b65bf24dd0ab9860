"""YAML as ``gopkg.in/yaml.v2`` (v2.4.0, Kalypso's) reads and writes it.

Reading: ``load_first`` is ``Unmarshal`` into ``interface{}``, as Kalypso's scheduler reads a
config value (``controllers/assignment_controller.go`` ``getObjectFromConfigValue``).
Writing: ``marshal`` is ``Marshal``, as Kalypso's ``toYaml`` (``scheduler/templater.go``
``toYAML``) writes a value.

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

Quoted scalars are strings, explicit tags are PyYAML's.

``marshal`` writes block style with map keys in go-yaml v2's order (``sorter.go``
``keyList.Less``: numbers and bools first by value, then other kinds; strings compared rune by
rune, a non-letter before a letter, runs of digits by their number, so ``a2`` before ``a10`` and
``A_B`` before ``AB``), floats as ``strconv.FormatFloat(f, 'g', -1, 64)`` (``1e+06``, ``.inf``),
a string in double quotes when go-yaml would read it back as something else (``"y"``,
``"1e3"``, ``"1:30"``; ``encode.go`` ``stringv``), as a literal block when it has several
lines, and long lines folded at 80 columns, as v2.4.0 does by default."""

from __future__ import annotations

import datetime
import functools
import math
import re
from typing import Any

import yaml

from promoter.gotemplate.values import go_float

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
_BASES = {"0x": 16, "0X": 16, "0o": 8, "0O": 8, "0b": 2, "0B": 2}
_DIGITS = {2: "01", 8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}


def parse_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)``, else ``ParseUint``: the integer, or None."""
    sign, body = (text[0], text[1:]) if text[:1] in ("+", "-") else ("", text)
    base, digits = _base_and_digits(body)
    if not digits or any(c not in _DIGITS[base] for c in digits):
        return None
    value = int(digits, base) * (-1 if sign == "-" else 1)
    return value if _fits_go(value, signed=bool(sign)) else None


def _fits_go(value: int, signed: bool) -> bool:
    """An int64 reads it, else (written without a sign) a uint64 does."""
    return -(1 << 63) <= value < (1 << 63) or (not signed and value < (1 << 64))


def _base_and_digits(body: str) -> tuple[int, str]:
    """Base 0's reading of an unsigned number: its base from the prefix (``0x``, ``0o``,
    ``0b``, a leading ``0`` octal) and the digits after it."""
    base = _BASES.get(body[:2])
    if base is not None:
        return base, body[2:]
    if len(body) > 1 and body.startswith("0"):
        return 8, body[1:]
    return 10, body


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


_BASE60 = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")


_TIMESTAMP = re.compile(
    r"(\d{4})-(\d\d?)-(\d\d?)"
    r"(?:(?:[Tt](\d\d?):(\d\d?):(\d\d?)(?:\.\d+)?(?:Z|[-+]\d\d:\d\d))"
    r"|(?: (\d\d?):(\d\d?):(\d\d?)(?:\.\d+)?))?"
)


def _is_timestamp(text: str) -> bool:
    """go-yaml v2's ``parseTimestamp``: ``2006-1-2``, ``2006-1-2T15:4:5.999999999Z07:00`` (or
    ``t``), ``2006-1-2 15:4:5.999999999``, a real date and time."""
    match = _TIMESTAMP.fullmatch(text)
    if not match:
        return False
    year, month, day = (int(g) for g in match.groups()[:3])
    clock = [int(g) for g in match.groups()[3:] if g is not None]
    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    return not clock or (clock[0] < 24 and clock[1] < 60 and clock[2] < 60)


def reads_back_as_other(text: str) -> bool:
    """go-yaml v2's ``stringv``: plain only if ``resolve`` gives a string (not a bool, number,
    null, timestamp or merge key) and it is not a YAML 1.1 base-60 float."""
    if text == "<<" or _is_timestamp(text) or _BASE60.fullmatch(text):
        return True
    return not isinstance(resolve_plain(text), str)


def _digit_run(text: str, start: int, number: int) -> tuple[int, int]:
    """``number`` followed by the digits from ``start`` (wrapping as Go's int64), and where
    they end."""
    end = start
    while end < len(text) and text[end].isdecimal():
        number = (number * 10 + ord(text[end]) - 48 + (1 << 63)) % (1 << 64) - (1 << 63)
        end += 1
    return number, end


def _string_less(a: str, b: str, v3: bool = False) -> bool:
    """``keyList.Less`` for two strings (go-yaml v2.4.0 ``sorter.go``; ``v3``: yaml.v3's, where
    a letter against a non-letter right after a run of digits sorts the letter first)."""
    digits = False
    for i in range(min(len(a), len(b))):
        if a[i] != b[i]:
            return _differ_less(a, b, i, letter_first=v3 and digits)
        digits = a[i].isdecimal()
    return len(a) < len(b)


def _differ_less(a: str, b: str, i: int, letter_first: bool) -> bool:
    """``a < b`` decided at ``i``, their first different rune: two letters by rune, a letter
    against a non-letter by ``letter_first``, else by the numbers that start there."""
    al, bl = a[i].isalpha(), b[i].isalpha()
    if al and bl:
        return a[i] < b[i]
    if al or bl:
        return al if letter_first else bl
    return _numbers_less(a, b, i)


def _numbers_less(a: str, b: str, i: int) -> bool:
    """By the numbers that the digits from ``i`` make (a ``0`` there continues a number the
    shared digits before started, unless those are all zeros), then by their length, then by
    rune."""
    start = _nonzero_before(a, i) if "0" in (a[i], b[i]) else 0
    an, ai = _digit_run(a, i, start)
    bn, bi = _digit_run(b, i, start)
    if an != bn:
        return an < bn
    if ai != bi:
        return ai < bi
    return a[i] < b[i]


def _nonzero_before(text: str, i: int) -> int:
    """1 when the run of digits right before ``i`` holds one that is not ``0``, else 0."""
    j = i - 1
    while j >= 0 and text[j].isdecimal():
        if text[j] != "0":
            return 1
        j -= 1
    return 0


# reflect.Kind's order, for keys of different kinds (Bool 1, Int 2, Uint64 11, Float64 14,
# Interface 20 for nil, String 24)
def _kind(value: Any) -> int:
    if isinstance(value, bool):
        return 1
    if isinstance(value, int):
        return 2 if -(1 << 63) <= value < (1 << 63) else 11
    if isinstance(value, float):
        return 14
    return 24 if isinstance(value, str) else 20


def _key_less(a: Any, b: Any, v3: bool = False) -> bool:
    """``keyList.Less``: numbers and bools by value, then kind; other kinds by kind."""
    ak, bk = _kind(a), _kind(b)
    if ak in (1, 2, 11, 14) and bk in (1, 2, 11, 14):
        if float(a) != float(b):
            return float(a) < float(b)
        return ak < bk if ak != bk else bool(a < b)
    if ak != 24 or bk != 24:
        return ak < bk
    return _string_less(a, b, v3)


def _compare(a: tuple[Any, Any], b: tuple[Any, Any]) -> int:
    return -1 if _key_less(a[0], b[0]) else 1 if _key_less(b[0], a[0]) else 0


def compare_v3(a: tuple[Any, Any], b: tuple[Any, Any]) -> int:
    """yaml.v3's order of two map items (``sorter.go``)."""
    return -1 if _key_less(a[0], b[0], True) else 1 if _key_less(b[0], a[0], True) else 0


_TAGS = {bool: "bool", int: "int", float: "float", str: "str", type(None): "null"}


def _go_tag(text: str) -> str:
    """The tag go-yaml v2's ``resolve`` gives a plain scalar."""
    if text == "<<":
        return "tag:yaml.org,2002:merge"
    if _is_timestamp(text):
        return "tag:yaml.org,2002:timestamp"
    return "tag:yaml.org,2002:" + _TAGS[type(resolve_plain(text))]


class _V2Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper writing as go-yaml v2: its resolver decides what is written plain."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode and implicit[0]:
            return _go_tag(value)
        return super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]

    def represent_str(self, data: str) -> yaml.ScalarNode:
        style = '"' if reads_back_as_other(data) else "|" if "\n" in data else None
        return self.represent_scalar("tag:yaml.org,2002:str", data, style=style)

    def represent_float(self, data: float) -> yaml.ScalarNode:
        if data != data or data in (math.inf, -math.inf):
            text = ".nan" if data != data else ".inf" if data > 0 else "-.inf"
        else:
            text = go_float(data)
        return self.represent_scalar(_go_tag(text), text)  # 1 reads back as an int: still plain

    def represent_map(self, data: dict[Any, Any]) -> yaml.MappingNode:
        items = sorted(data.items(), key=functools.cmp_to_key(_compare))
        return self.represent_mapping("tag:yaml.org,2002:map", items)


_V2Dumper.add_representer(str, _V2Dumper.represent_str)
_V2Dumper.add_representer(float, _V2Dumper.represent_float)
_V2Dumper.add_representer(dict, _V2Dumper.represent_map)


def marshal(value: Any) -> str:
    """``yaml.Marshal(value)`` of go-yaml v2, with its final newline."""
    # go-yaml v2.4.0 folds long lines at 80 columns (yaml.go: the wrapping v2.3.0 dropped came
    # back in v2.4.0, FutureLineWrap turns it off); PyYAML's emitter, a port of the same
    # libyaml, folds at the same width by the same rule
    dumped = yaml.dump(value, Dumper=_V2Dumper, default_flow_style=False, allow_unicode=True, width=80)
    return dumped[: -len("...\n")] if dumped.endswith("\n...\n") else dumped
