"""Rendered documents read once per distinct shape: thousands of assignments render the same
text but for their names (``app-0003`` here, ``app-0004`` there), and reading each one back
into objects cost more than rendering it.

A document's **skeleton** is its text with each of the assignment's name-like values
(``name_values``) replaced by a placeholder of the same length and the same kind of character at
each place (letters by one marker letter, digits by ``0``, ``.`` and ``-`` kept). The first
document of a skeleton is read and checked in full, as before; the second is read in full too
and compared with the skeleton read once and given its values back; from then on the skeleton's
objects, with each placeholder given the document's own value, *are* its objects.

Why that is PyYAML's reading of the document (YAML 1.1):

- A value is replaced only when it is a run of ``[A-Za-z0-9.-]``, at least three long, that
  starts with a letter or digit and holds one of the letters ``g h j k m p q v w`` (either
  case). No YAML 1.1 or 1.2 form but a string (booleans, null, numbers, hex, ``.inf``,
  timestamps, ``<<``, ``=``) has such a letter, and a placeholder's letters are all such
  letters, so every scalar holding a value or a placeholder is a string, either way.
- Outside escapes the scanner treats letters and digits alike, and ``.`` and ``-`` are kept, so
  the text has the same tokens, lines and columns, the same length of every key and line, and
  the same documents. A skeleton with a backslash is never shared (no escape can then make or
  take a placeholder's characters).
- Each placeholder occurs as often in the skeleton's strings as in its text (checked once per
  skeleton: not in a comment, not doubled by an alias, not decoded by a tag), and putting the
  values back into the skeleton gives the document's text exactly (checked per document: it
  holds no placeholder of its own). So each string of the document is the skeleton's string
  with the values put back, in the same order, and every other scalar is the same.
- Its second document is read in full too and compared, types and all, with the skeleton's
  objects given that document's values.

What the checks then judge is the document's real objects; only the reading is shared.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable
from typing import Any, cast

from promoter.rendering.parse import load_rendered

_MARKERS = "ghjkmpqwGHJKMPQW"  # the placeholders' letters: in no YAML form but a string
# A value: letters, digits, "." and "-", from a letter or digit on, with a letter that no YAML 1.1
# or 1.2 form but a string has (booleans, null, numbers, hex, .inf, .nan, timestamps).
_ELIGIBLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{2,}")
_STRING_ONLY = re.compile(r"[ghjkmpqvwGHJKMPQVW]")
_MAX_ENTRIES = 20_000  # distinct skeletons remembered per renderer (a few MB)

Pairs = tuple[tuple[str, str], ...]  # (value, placeholder), longest value first
_MISSING: Any = object()  # a placeholder the document has no value for


# Per marker: every ASCII letter to the marker, every digit to "0" (an eligible value has no
# other letters or digits; "." and "-" are kept).
_TO_PLACEHOLDER = {
    m: str.maketrans(string.ascii_letters + string.digits, m * len(string.ascii_letters) + "0" * 10)
    for m in _MARKERS
}


def _eligible(value: str) -> bool:
    return _ELIGIBLE.fullmatch(value) is not None and _STRING_ONLY.search(value) is not None


def _placeholder(value: str, marker: str) -> str:
    return value.translate(_TO_PLACEHOLDER[marker])


def name_values(values: Iterable[Any]) -> Pairs:
    """The values to replace in an assignment's documents and their placeholders: the eligible
    strings among ``values``, in the order given, longest first, at most one per marker."""
    seen = [v for v in dict.fromkeys(v for v in values if isinstance(v, str)) if _eligible(v)]
    seen.sort(key=len, reverse=True)  # stable: equal lengths keep the order of their roles
    return tuple((v, _placeholder(v, m)) for v, m in zip(seen, _MARKERS, strict=False))


def assignment_values(context: dict[str, Any]) -> Pairs:
    """The name-like values of a template context (``render.variables``)."""
    values: list[Any] = [
        context.get(k)
        for k in (
            "name",
            "namespace",
            "workload",
            "deployment_target",
            "cluster_type",
            "workspace",
            "environment",
        )
    ]
    for key in ("labels", "cluster_type_labels", "manifests", "config"):
        mapping = context.get(key)
        if isinstance(mapping, dict):
            values += mapping.values()
    return name_values(values)


class _Entry:
    __slots__ = ("doc", "placeholders", "plan", "sightings")

    def __init__(self, placeholders: tuple[str, ...]) -> None:
        self.placeholders = placeholders
        self.sightings = 1
        self.doc: dict[str, Any] | None = None
        self.plan: Any = None  # where the placeholders are in ``doc``; None: never shared


class SkeletonReader:
    """Reads one rendered document (one mapping) into objects, sharing the reading of documents
    of one skeleton. ``full`` is the complete check and reading, for a first sighting."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._last: tuple[Pairs, dict[str, str]] = ((), {})
        self.shared = 0  # documents read from their skeleton (for the benchmark's figures)

    def _values(self, pairs: Pairs) -> dict[str, str]:
        """Placeholder -> value, made once per assignment (its templates come one after another)."""
        if self._last[0] is not pairs:
            self._last = (pairs, {ph: v for v, ph in pairs})
        return self._last[1]

    def read(self, text: str, pairs: Pairs, full: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        skeleton, used = _skeleton(text, pairs)
        if skeleton is None:
            return full()
        entry = self._entries.get(skeleton)
        if entry is None or entry.placeholders != used:
            if entry is None and len(self._entries) < _MAX_ENTRIES:
                self._entries[skeleton] = _Entry(used)
            return full()
        if entry.doc is not None:
            doc = _rebuild(entry.doc, entry.plan, self._values(pairs))
            if doc is not _MISSING:
                self.shared += 1
                return cast(dict[str, Any], doc)
            return full()
        real = full()
        if entry.sightings == 1:
            entry.sightings = 2
            _learn(entry, skeleton, real, pairs)
        return real


def _skeleton(text: str, pairs: Pairs) -> tuple[str | None, tuple[str, ...]]:
    """The skeleton and the placeholders in it, in the order their values are put back (the
    reverse of replacing them: a value may hold a later placeholder's letters); None unless
    putting the values back gives the text again (not so if it holds a placeholder of its own)."""
    skeleton, used = text, []
    for value, ph in pairs:
        if value in skeleton:
            skeleton = skeleton.replace(value, ph)
            used.append((value, ph))
    if not used:
        return None, ()
    back = skeleton
    for value, ph in reversed(used):
        back = back.replace(ph, value)
    return (skeleton if back == text else None), tuple(ph for _, ph in reversed(used))


def _learn(entry: _Entry, skeleton: str, real: dict[str, Any], pairs: Pairs) -> None:
    """Second sighting: read the skeleton, and share it only if it gives back ``real`` exactly."""
    try:
        docs = load_rendered(skeleton.encode("utf-8"))
    except Exception:  # not readable with its placeholders: never shared
        return
    if len(docs) != 1 or not isinstance(docs[0], dict) or "\\" in skeleton:
        return  # with no backslash, no escape can make or take a placeholder's characters
    doc = docs[0]
    counts = dict.fromkeys(entry.placeholders, 0)
    plan = _plan(doc, entry.placeholders, counts)
    if any(skeleton.count(ph) != n for ph, n in counts.items()):
        return  # a placeholder in a comment, or one an escape made: the strings are not the text
    rebuilt = _rebuild(doc, plan, {ph: v for v, ph in pairs})
    if rebuilt is _MISSING or _typed(rebuilt) != _typed(real):
        return
    entry.doc, entry.plan = doc, plan


def _plan(node: Any, placeholders: tuple[str, ...], counts: dict[str, int]) -> Any:
    """Where placeholders are in ``node``: for a string, the placeholders in it (in the order
    of ``placeholders``: the order they are given their values); for a mapping
    or list, ``(key plans, child plans)``; None where there are none."""
    if isinstance(node, str):
        return _plan_text(node, placeholders, counts)
    if isinstance(node, dict):
        return _plan_mapping(node, placeholders, counts)
    if isinstance(node, list):
        items = {i: p for i, v in enumerate(node) if (p := _plan(v, placeholders, counts)) is not None}
        return ({}, items) if items else None
    return None


def _plan_text(node: str, placeholders: tuple[str, ...], counts: dict[str, int]) -> tuple[str, ...] | None:
    """The placeholders in a string, each counted as often as it is there."""
    found = tuple(ph for ph in placeholders if ph in node)
    for ph in found:
        counts[ph] += node.count(ph)
    return found or None


def _plan_mapping(node: dict[Any, Any], placeholders: tuple[str, ...], counts: dict[str, int]) -> Any:
    """(key plans, value plans) of a mapping, of the keys and values that hold a placeholder."""
    keys = {k: p for k in node if (p := _plan(k, placeholders, counts)) is not None}
    children = {k: p for k, v in node.items() if (p := _plan(v, placeholders, counts)) is not None}
    return (keys, children) if keys or children else None


def _rebuild(node: Any, plan: Any, values: dict[str, str]) -> Any:
    """``node`` with each placeholder given its value (copied along the plan only; the rest is
    shared, and nothing changes these objects: the checks only read them). ``_MISSING`` if a
    placeholder has no value, or two keys became one."""
    if plan is None:
        return node
    if isinstance(plan, tuple) and isinstance(node, str):
        return _fill(node, plan, values)
    keys, children = plan
    if isinstance(node, list):
        return _rebuild_children(list(node), node, children, values)
    if not keys:
        return _rebuild_children(dict(node), node, children, values)
    return _rebuild_keyed(node, keys, children, values)


def _fill(text: str, placeholders: tuple[str, ...], values: dict[str, str]) -> Any:
    """``text`` with each of ``placeholders`` replaced by its value; ``_MISSING`` if one has none."""
    for ph in placeholders:
        value = values.get(ph)
        if value is None:
            return _MISSING
        text = text.replace(ph, value)
    return text


def _rebuild_children(copy: Any, node: Any, children: dict[Any, Any], values: dict[str, str]) -> Any:
    """``copy`` (of list or mapping ``node``) with the items or values ``children`` plans rebuilt."""
    for k, sub in children.items():
        value = _rebuild(node[k], sub, values)
        if value is _MISSING:
            return _MISSING
        copy[k] = value
    return copy


def _rebuild_keyed(
    node: dict[Any, Any], keys: dict[Any, Any], children: dict[Any, Any], values: dict[str, str]
) -> Any:
    """A mapping with a key that holds a placeholder: a new mapping, in the same order;
    ``_MISSING`` when two keys became one."""
    result = {}
    for k, v in node.items():
        key = _rebuild(k, keys[k], values) if k in keys else k
        value = _rebuild(v, children[k], values) if k in children else v
        if key is _MISSING or value is _MISSING:
            return _MISSING
        result[key] = value
    return result if len(result) == len(node) else _MISSING


def _typed(node: Any) -> Any:
    """A comparable form that tells ``1``, ``True``, ``1.0`` and ``"1"`` apart."""
    if isinstance(node, dict):
        return ("d", [(_typed(k), _typed(v)) for k, v in node.items()])
    if isinstance(node, list):
        return ("l", [_typed(v) for v in node])
    return (type(node).__name__, repr(node))
