"""Kalypso's own template functions (kalypso-scheduler ``scheduler/templater.go``): ``toYaml``
and ``stringify`` (yaml.v3 since 97c555b, yaml.v2 before), ``hash`` (hashstructure v1.1.0) and
``unquote``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from promoter.gotemplate import goyaml, goyaml3
from promoter.gotemplate.hashing import go_hash
from promoter.gotemplate.values import NO_VALUE, ExecError, Limits, plain_arg

YamlVersion = Literal["v2", "v3"]
Function = Callable[..., Any]


def go_value(value: Any) -> Any:
    """A value as the YAML writers take it: plain dicts (keys keep their types) and lists."""
    if value is NO_VALUE:
        return None
    if isinstance(value, dict):
        return {k: go_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [go_value(v) for v in value]
    return value


MARSHAL: dict[YamlVersion, Callable[[Any], str]] = {"v2": goyaml.marshal, "v3": goyaml3.marshal}


def go_to_yaml(value: Any, version: YamlVersion = "v3") -> str:
    """Kalypso's ``toYaml`` (``toYAML``): ``yaml.Marshal``, one final newline trimmed; yaml.v3
    since 97c555b, yaml.v2 before."""
    return MARSHAL[version](go_value(value)).removesuffix("\n")


def go_stringify(value: Any, version: YamlVersion = "v3") -> str:
    """Kalypso's ``stringify``: a ``map[string]interface{}`` (a sprig ``dict``, ``.ConfigData``)
    is copied with each value that is a ``map[string]interface{}`` or a ``[]interface{}``
    replaced by its YAML (final newline kept), then written as ``toYaml``; anything else is
    ``toYaml`` of it. A config map (yaml.v2's ``map[interface{}]interface{}``) is neither, so it
    stays nested YAML."""
    if type(value) is dict:
        value = {
            k: MARSHAL[version](go_value(v)) if type(v) is dict or isinstance(v, list | tuple) else v
            for k, v in value.items()
        }
    return go_to_yaml(value, version)


def hash_of(limits: Limits, value: Any) -> str:
    """Kalypso's ``hash``: ``hashstructure.Hash(value, nil)`` of v1.1.0 (see ``hashing``), in
    decimal."""
    return str(go_hash(plain_arg(value), limits.steps))


def unquote(limits: Limits, value: Any) -> str:
    """Kalypso's ``unquote``: a string with surrounding white space trimmed, then every leading
    and trailing ``"``, then every leading and trailing ``'``; ``""`` for a value that is not a
    string."""
    if not isinstance(value, str):
        return ""
    return value.strip().strip('"').strip("'")


def _bounded(limits: Limits, value: str) -> str:
    if len(value) > limits.output:
        raise ExecError(f"a string of {len(value)} characters, over the limit of {limits.output}")
    return value


def _yaml_functions(version: YamlVersion) -> dict[str, Function]:
    return {
        "toYaml": lambda limits, v: _bounded(limits, go_to_yaml(v, version)),
        "stringify": lambda limits, v: _bounded(limits, go_stringify(v, version)),
    }


YAML_FUNCTIONS: dict[YamlVersion, dict[str, Function]] = {v: _yaml_functions(v) for v in ("v2", "v3")}

KALYPSO: dict[str, Function] = {"hash": hash_of, "unquote": unquote}
