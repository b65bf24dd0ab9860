"""ConfigMap data as Kubernetes stores it: keys of ``[-._a-zA-Z0-9]+``, values as strings.

Config values may be any YAML, and a ConfigMap's data are strings, so each value is written as
text (``as_configmap_string``). YAML 1.1, which PyYAML and Kubernetes' own YAML read, turns some
unquoted scalars into something else: ``NO`` and ``on`` into booleans, ``1.10`` into 1.1,
``0755`` into 493, ``12:30`` into 750. Such a value would reach the cluster as text the user
did not write, so it is refused with a request to quote it.
"""

from __future__ import annotations

import json
import re
from typing import Any

CONFIGMAP_KEY = re.compile(r"[-._a-zA-Z0-9]+")
CONFIGMAP_KEY_MAX = 253
# Flux's postBuild substitution reads variables with names like these only.
FLUX_VARIABLE = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")


def as_configmap_string(value: Any) -> str:
    """A config value as ConfigMap data: scalars as text, maps and lists as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, default=str)
    return "" if value is None else str(value)


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot be a ConfigMap data key, or None."""
    if len(key) > CONFIGMAP_KEY_MAX or CONFIGMAP_KEY.fullmatch(key) is None:
        return (
            f"{key!r} is not a ConfigMap key (letters, digits, '-', '_' and '.', at most {CONFIGMAP_KEY_MAX})"
        )
    return None


def changed_scalar(text: str, value: Any) -> str | None:
    """Why an unquoted scalar written as ``text`` would not reach the cluster as written, or None.
    A key is passed as the string YAML made of it."""
    if text == "":
        return None
    stored = value if isinstance(value, str) else as_configmap_string(value)
    if stored == text:
        return None
    return f'{text!r} is read by YAML as {stored!r}; quote it ("{text}") to keep it as written'


# A Go duration as Flux's CRDs write its pattern (``interval``, ``timeout``, ``retryInterval``).
GO_DURATION = re.compile(r"([0-9]+(\.[0-9]+)?(ms|s|m|h))+")
