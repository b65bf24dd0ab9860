"""Undefined template values named the way the template author wrote them.

jinja2 words ``{{ config.MEMORY_LIMIT }}`` with no such key as "'dict object' has no attribute
'MEMORY_LIMIT'". Here each undefined value raises ``MissingValue`` holding the object it was
looked up on, so the renderer can say which variable it is (``config``), which keys it has,
and which one was probably meant.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

import jinja2
from jinja2.utils import missing

MAX_LISTED = 12  # keys named in a message, so a huge config does not flood the line


class MissingValue(jinja2.UndefinedError):
    """An undefined value was used; ``owner`` is what it was looked up on (``missing`` for a
    top-level variable), ``key`` the name or index looked up."""

    def __init__(self, message: str | None, owner: Any, key: Any) -> None:
        super().__init__(message)
        self.owner = owner
        self.key = key


class NamedUndefined(jinja2.StrictUndefined):
    """StrictUndefined whose error remembers what was looked up, and on what."""

    __slots__ = ()

    def __init__(
        self,
        hint: str | None = None,
        obj: Any = missing,
        name: str | None = None,
        exc: type[jinja2.TemplateRuntimeError] = jinja2.UndefinedError,
    ) -> None:
        super().__init__(hint, obj, name, exc)
        self._undefined_exception = lambda message=None: MissingValue(message, obj, name)  # type: ignore[assignment]


def _listing(keys: list[str]) -> str:
    shown = ", ".join(keys[:MAX_LISTED])
    return shown + (f" and {len(keys) - MAX_LISTED} more" if len(keys) > MAX_LISTED else "")


def _guess(key: object, keys: list[str]) -> str:
    near = difflib.get_close_matches(str(key), keys, n=1, cutoff=0.6)
    return f"did you mean {near[0]!r}? " if near else ""


def describe_missing(err: MissingValue, context: Mapping[str, Any]) -> str:
    """``err`` in the words of the template: the variable, the key, what there is instead."""
    if err.owner is missing:
        known = sorted(context)  # a dozen or so, all named: a template's author looks for one
        return (
            f"undefined variable {err.key!r}: {_guess(err.key, known)}(the variables are {', '.join(known)})"
        )
    owner = next((name for name, value in context.items() if value is err.owner), None)
    if owner is None or not isinstance(err.owner, Mapping):
        return f"undefined value: {err.message}"
    keys = sorted(str(k) for k in err.owner)
    has = f"it has {_listing(keys)}" if keys else "it is empty"
    where = " (config comes from the ConfigMaps on the environment branch)" if owner == "config" else ""
    fallback = f"; or give a default: {owner}.{err.key} | default(...)" if owner == "config" else ""
    return f"{owner} has no key {err.key!r}: {_guess(err.key, keys)}{has}{where}{fallback}"
