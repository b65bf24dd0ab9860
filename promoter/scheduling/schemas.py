"""ConfigSchemas: the merged config of each assignment meets every schema whose labels match it;
verdicts memoised by the values a schema looks at."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from promoter.errors import SchemaError
from promoter.model import ConfigMap, ConfigSchema, Source
from promoter.scheduling.config import IMMUTABLE
from promoter.scheduling.targets import (
    Assignment,
    Fact,
    left_for_target,
    selects,
)

# Top-level keywords whose verdict on a mapping depends only on the keys they name: a schema
# made of these alone gives the same verdict to configs that agree on those keys.
_LOCAL_KEYWORDS = frozenset(
    {
        "type",
        "required",
        "properties",
        "$schema",
        "$id",
        "$defs",
        "definitions",
        "title",
        "description",
        "$comment",
        "default",
        "examples",
    }
)


class SchemaChecker:
    """Checks merged configs against the ConfigSchemas that match them, with one validator per
    schema. Assignments share most of their config, so verdicts are memoised: by the values of
    the keys a schema names when it is made only of ``_LOCAL_KEYWORDS``, else by config."""

    def __init__(
        self, schemas: dict[str, ConfigSchema], configmaps: dict[str, ConfigMap] | None = None
    ) -> None:
        self.configmaps = configmaps or {}  # where a wrong value was written, for the message
        self.schemas = sorted(schemas.values(), key=lambda s: s.name)
        self._validators: dict[str, Any] = {}
        if self.schemas:
            import jsonschema  # heavy (78 ms, a quarter of `promoter render`'s start): only with ConfigSchemas

            self._validators = {
                s.name: jsonschema.validators.validator_for(s.schema)(s.schema) for s in self.schemas
            }
        self._keys = {s.name: _named_keys(s.schema) for s in self.schemas}
        self._verdicts: dict[tuple[str, object], bool] = {}
        self._left: dict[tuple[str, str], tuple[Fact, ...] | None] = {}

    def check(self, a: Assignment, facts: frozenset[Fact] | None = None) -> None:
        """The merged config of ``a`` meets every ConfigSchema whose labels match it."""
        for schema in self.schemas:
            if not self._applies(schema, a, facts):
                continue
            key = (schema.name, self._memo_key(schema.name, a.config))
            valid = self._verdicts.get(key)
            if valid is None:
                valid = self._verdicts[key] = self._validators[schema.name].is_valid(a.config)
            if not valid:
                _raise_schema_error(
                    schema, a, self._validators[schema.name].iter_errors(a.config), self.configmaps
                )

    def _applies(self, schema: ConfigSchema, a: Assignment, facts: frozenset[Fact] | None) -> bool:
        if facts is None:
            return selects(schema.labels, a)
        key = (schema.name, a.cluster_type.name)
        if key not in self._left:
            self._left[key] = left_for_target(schema.labels, a.cluster_type)
        left = self._left[key]
        return left is not None and all(f in facts for f in left)

    def _memo_key(self, schema: str, config: dict[str, Any]) -> object:
        keys = self._keys[schema]
        if keys is None:
            return id(config)  # configs are memoised by ConfigIndex: alive and shared
        values: list[tuple[object, ...]] = []
        for k in keys:
            if k not in config:
                values.append((k,))
                continue
            value = config[k]
            if type(value) not in IMMUTABLE:
                return id(config)
            values.append((k, type(value), value))  # the type keeps True apart from 1
        return tuple(values)


def _named_keys(schema: dict[str, Any]) -> tuple[str, ...] | None:
    """The top-level keys a schema looks at, when its verdict depends on nothing else."""
    if not isinstance(schema, dict) or not set(schema) <= _LOCAL_KEYWORDS:
        return None
    required, properties = schema.get("required", []), schema.get("properties", {})
    if not isinstance(required, list) or not isinstance(properties, dict):
        return None
    return tuple(sorted({str(k) for k in required} | {str(k) for k in properties}))


def _raise_schema_error(
    schema: ConfigSchema, a: Assignment, errors: Iterable[Any], configmaps: dict[str, ConfigMap]
) -> None:
    from jsonschema.exceptions import best_match  # heavy, as above: loads only when a config fails its schema

    error = best_match(errors)
    if error is None:
        return
    where = "config" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    merged = ", ".join(a.config_sources) or "no ConfigMaps"
    written = _written_at(error.absolute_path, a, configmaps)
    if written is None:  # a missing key, or a value from nowhere known: the schema says what it wants
        raise SchemaError(
            f"ConfigSchema {schema.name!r}: assignment {a} ({merged}): {where}: {error.message}",
            file=schema.source.file,
            line=schema.source.line,
        )
    name, source = written
    raise SchemaError(
        f"{where}: {error.message} (ConfigMap {name!r}, checked by ConfigSchema {schema.name!r} at "
        f"{schema.source.file}:{schema.source.line} for assignment {a}, config merged from {merged})",
        file=source.file,
        line=source.line,
    )


def _written_at(path: Any, a: Assignment, configmaps: dict[str, ConfigMap]) -> tuple[str, Source] | None:
    """The most specific ConfigMap that wrote the value at ``path`` (mappings merge deeply, so
    the deepest key of the path it holds decides), and the line of the path's top key."""
    if not path or not isinstance(path[0], str):
        return None
    for name in reversed(a.config_sources):  # the most specific ConfigMap wins the merge
        cm = configmaps.get(name)
        if cm is not None and _holds(cm.data, list(path)):
            return name, Source(cm.source.file, cm.lines.get(path[0], cm.source.line))
    return None


def _holds(data: Any, path: list[Any]) -> bool:
    for step in path:
        if isinstance(data, dict) and step in data:
            data = data[step]
        else:
            return not isinstance(data, dict)  # a list or scalar is replaced whole by the merge
    return True


def check_schemas(a: Assignment, schemas: dict[str, ConfigSchema]) -> None:
    """The merged config of ``a`` meets every ConfigSchema whose labels match it."""
    SchemaChecker(schemas).check(a)
