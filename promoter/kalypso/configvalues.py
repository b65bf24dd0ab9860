"""Kalypso's config values, pure: how the scheduler reads one ConfigMap value and merges two
(kalypso-scheduler ``controllers/assignment_controller.go`` ``getObjectFromConfigValue``,
``mergeObjects``).

- A value that, trimmed, starts and ends with ``'`` is that text with every leading and trailing
  ``'`` removed (e652096). Otherwise yaml.v2 reads the **untrimmed** value; a list or a map is
  kept (maps as ``map[interface{}]interface{}``, keys with their YAML types: ``y`` is the bool
  true, ``2`` an int), anything else keeps the original string: ``"3"`` stays ``"3"``.
- Two lists: at HEAD (97c555b) each map of the new list is merged into **every** map of the
  old one whose ``name`` is equal by Go's interface equality (two maps without ``name`` are
  equal; ``1`` and ``1.0`` are not), and appended when it merged into none; before 97c555b the
  new list is appended. Two maps merge key by key; anything else is replaced by the new value."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

from promoter.gotemplate import AnyMap
from promoter.gotemplate.goyaml import load_first

_MISSING = object()


def config_value(value: str) -> Any:
    """``getObjectFromConfigValue``."""
    trimmed = value.strip()
    if trimmed.startswith("'") and trimmed.endswith("'"):
        return trimmed.strip("'")
    try:  # yaml.v2's Unmarshal reads the first document, with its own scalar types
        parsed = load_first(value)
    except yaml.YAMLError:
        return value
    return _go(parsed) if isinstance(parsed, dict | list) else value


def _go(value: Any) -> Any:
    """yaml.v2's ``interface{}``: a mapping is a ``map[interface{}]interface{}``."""
    if isinstance(value, dict):
        return AnyMap((k, _go(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_go(v) for v in value]
    return value


def go_equal(a: Any, b: Any) -> bool:
    """Go's ``==`` of two ``interface{}`` values: the same dynamic type and value. (An integer
    beyond int64 stands for a ``uint64``, which never equals an ``int``; two Python integers on
    either side of 2**63 are never equal either, so that needs no test of its own.)"""
    if _is_nil(a) or _is_nil(b):
        return _is_nil(a) and _is_nil(b)
    return type(a) is type(b) and bool(a == b)


def _is_nil(value: Any) -> bool:
    """A missing ``name`` or a nil one: Go's nil ``interface{}`` either way."""
    return value is _MISSING or value is None


def merge_objects(existing: Any, new: Any, *, by_name: bool = True) -> Any:
    """``mergeObjects(existing, new)``; ``by_name`` False is the scheduler before 97c555b."""
    if isinstance(existing, list) and isinstance(new, list):
        return _merge_lists(existing, new, by_name) if by_name else existing + new
    if isinstance(existing, dict) and isinstance(new, dict):
        out = AnyMap(existing) if isinstance(existing, AnyMap) else dict(existing)
        for key, value in new.items():
            out[key] = merge_objects(out[key], value, by_name=by_name) if key in out else value
        return out
    return new


def _merge_lists(existing: list[Any], new: list[Any], by_name: bool) -> list[Any]:
    out = list(existing)
    for value in new:
        matched = False
        if isinstance(value, dict):
            name = value.get("name", _MISSING)
            for j, current in enumerate(out):
                if isinstance(current, dict) and go_equal(current.get("name", _MISSING), name):
                    out[j] = merge_objects(current, value, by_name=by_name)
                    matched = True
        if not matched:
            out.append(value)
    return out


def merged_config(sources: list[dict[str, str]], *, by_name: bool = True) -> dict[str, Any]:
    """The values of ConfigMaps' data, in the order given, read and merged as ``getConfigData``
    does: the first value of a key is kept, a later one merged into it."""
    return merge_values((pair for data in sources for pair in data.items()), by_name=by_name)


def merge_values(pairs: Iterable[tuple[str, str]], *, by_name: bool = True) -> dict[str, Any]:
    """(key, value) pairs, in the order given, read and merged as ``getConfigData`` does (a key
    may come more than once)."""
    merged: dict[str, Any] = {}
    for key, text in pairs:
        new = config_value(text)
        merged[key] = merge_objects(merged[key], new, by_name=by_name) if key in merged else new
    return merged
