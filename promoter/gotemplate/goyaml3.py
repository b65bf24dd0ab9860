"""YAML as ``gopkg.in/yaml.v3`` (v3.0.1) ``Marshal`` writes it: Kalypso's ``toYaml`` and
``stringify`` since kalypso-scheduler 97c555b (2025-04-28).

What differs from yaml.v2 (``goyaml.marshal``), from the library's ``encode.go`` and
``emitterc.go`` (``yaml_emitter_increase_indent_compact``):

- indentation is 4 spaces, and a list under a key is indented too (``k:\\n    - a``); the
  content of a list item continues 2 columns after its dash (``- name: a\\n  value: 1``), and
  any other nesting goes to the next multiple of 4;
- lines are never folded (unlimited width);
- a string of several lines is a literal block (``|``, ``|-`` or ``|+`` by its final newlines)
  indented like a nested value.

The style of a string is ``encode.go`` ``stringv``: double-quoted when it would read back as
another type (a bool, number, null or timestamp, a YAML 1.1 bool word such as ``yes``, a base-60
number such as ``1:30``) or holds control characters; otherwise plain, unless the emitter's
analysis (libyaml's, which PyYAML's ``Emitter.analyze_scalar`` ports) forbids a plain scalar,
then single-quoted. Map keys are ordered by yaml.v3's ``sorter.go``."""

from __future__ import annotations

import functools
import io
import math
from typing import Any

import yaml.emitter

from promoter.gotemplate.goyaml import compare_v3, reads_back_as_other
from promoter.gotemplate.values import go_float

_BEST = 4
_BREAKS = "\n\r\x85\u2028\u2029"
_ESCAPES = {
    "\0": "0",
    "\a": "a",
    "\b": "b",
    "\t": "t",
    "\n": "n",
    "\v": "v",
    "\f": "f",
    "\r": "r",
    "\x1b": "e",
    '"': '"',
    "\\": "\\",
    "\x85": "N",
    "\xa0": "_",
    "\u2028": "L",
    "\u2029": "P",
}


def marshal(value: Any) -> str:
    """``yaml.Marshal(value)`` of yaml.v3, with its final newline."""
    out: list[str] = []
    _node(value, -1, out, in_item=False)
    text = "".join(out)
    return text if text.endswith("\n") else text + "\n"


def _next_indent(indent: int, in_item: bool) -> int:
    """``yaml_emitter_increase_indent_compact``: 2 past a list's dash, else the next multiple of
    4 (0 for a block collection at the top)."""
    if indent < 0:
        return 0
    return indent + 2 if in_item else _BEST * ((indent + _BEST) // _BEST)


def _node(value: Any, indent: int, out: list[str], in_item: bool) -> None:
    """``value`` written where the cursor is (after ``key:`` or ``-``, or at the top)."""
    if isinstance(value, dict) and value:
        _mapping(value, _next_indent(indent, in_item), out, in_item)
    elif isinstance(value, list | tuple) and value:
        _sequence(value, _next_indent(indent, in_item), out, in_item)
    else:
        scalar_indent = _BEST if indent < 0 else _next_indent(indent, in_item)
        text = _scalar(value, scalar_indent, key=False)
        out.append(text if not out or out[-1].endswith("\n") else " " + text)
        if not text.endswith("\n"):
            out.append("\n")


def _start(out: list[str], indent: int, first: bool, in_item: bool) -> None:
    """Where a collection's entry starts: on the line of ``- `` for the first entry of a
    collection in a list item, else on a new line at ``indent``."""
    if first and in_item:
        out.append(" ")
        return
    if out and not out[-1].endswith("\n"):
        out.append("\n")
    out.append(" " * indent)


def _mapping(value: dict[Any, Any], indent: int, out: list[str], in_item: bool) -> None:
    items = sorted(value.items(), key=functools.cmp_to_key(compare_v3))
    for i, (key, item) in enumerate(items):
        _start(out, indent, i == 0, in_item)
        out.append(_scalar(key, indent, key=True) + ":")
        _node(item, indent, out, in_item=False)


def _sequence(value: list[Any] | tuple[Any, ...], indent: int, out: list[str], in_item: bool) -> None:
    for i, item in enumerate(value):
        _start(out, indent, i == 0, in_item)
        out.append("-")
        _node(item, indent, out, in_item=True)


def _scalar(value: Any, indent: int, *, key: bool) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list | tuple):
        return "[]"
    return _string(str(value), indent, key=key)


def _float(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    return go_float(value)


def _analysis(text: str) -> Any:
    emitter = yaml.emitter.Emitter(io.StringIO(), allow_unicode=True)
    return emitter.analyze_scalar(text)


def _string(text: str, indent: int, *, key: bool) -> str:
    """``stringv``, then libyaml's ``yaml_emitter_select_scalar_style``."""
    if any(not _printable(c) for c in text):
        return _double(text)
    if "\n" in text:
        analysis = _analysis(text)
        if key or not analysis.allow_block:
            return _double(text)
        return _literal(text, indent)
    if reads_back_as_other(text):
        return _double(text)
    analysis = _analysis(text)
    if analysis.allow_block_plain and not analysis.empty:
        return text
    return _single(text) if analysis.allow_single_quoted else _double(text)


def _single(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _printable(char: str) -> bool:
    """libyaml's ``IS_PRINTABLE``: a line feed, ASCII's visible range, and the BMP but for
    surrogates, the BOM and U+FFFE/U+FFFF (nothing beyond the BMP)."""
    code = ord(char)
    return (
        code == 0x0A
        or 0x20 <= code <= 0x7E
        or 0xA0 <= code <= 0xD7FF
        or (0xE000 <= code <= 0xFFFD and code != 0xFEFF)
    )


def _double(text: str) -> str:
    """libyaml's ``yaml_emitter_write_double_quoted_scalar`` (unicode allowed, no folding): a
    character that is not printable, a line break, a BOM, ``"`` and ``\\`` escaped."""
    out = ['"']
    for char in text:
        if char in _ESCAPES and (char in _BREAKS or char in '"\\' or not _printable(char)):
            out.append("\\" + _ESCAPES[char])
        elif not _printable(char):
            code = ord(char)
            out.append(
                f"\\x{code:02X}" if code <= 0xFF else f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"
            )
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _literal(text: str, indent: int) -> str:
    """``yaml_emitter_write_literal_scalar``: the header with its hints, then each line at
    ``indent`` (empty lines left empty)."""
    hints = str(_BEST) if text[:1] in (" ", "\n") else ""
    if not text.endswith("\n"):
        hints += "-"
    elif text == "\n" or text.endswith("\n\n"):
        hints += "+"
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    body = "".join(("" if not line else " " * indent + line) + "\n" for line in lines)
    if not text.endswith("\n"):
        body = body[:-1]
    return "|" + hints + "\n" + body
