"""Strict reading of a gate's spec: unknown keys, wrong types and bad durations are ConfigError
(exit 2 at load time) naming the gate and the Pipeline line, as ``spec_error`` does."""

from __future__ import annotations

from typing import Any, NoReturn

from promoter.clock import parse_duration
from promoter.gates.base import spec_error
from promoter.model import Source


class SpecReader:
    """One gate's mapping being read; ``done()`` rejects the keys nobody asked for."""

    def __init__(self, gate: str, spec: Any, source: Source) -> None:
        self.gate = gate
        self.source = source
        if not isinstance(spec, dict):
            self.fail(f"expects a mapping, got {_kind(spec)}")
        self.spec: dict[str, Any] = spec
        self.seen: set[str] = set()

    def fail(self, message: str) -> NoReturn:
        raise spec_error(self.source, self.gate, message)

    def has(self, key: str) -> bool:
        return self.spec.get(key) is not None

    def raw(self, key: str) -> Any:
        self.seen.add(key)
        return self.spec.get(key)

    def string(self, key: str, default: str | None = None, *, required: bool = False) -> str | None:
        value = self.raw(key)
        if value is None:
            if required:
                self.fail(f"missing required field '{key}'")
            return default
        if not isinstance(value, str) or not value.strip():
            self.fail(f"'{key}' must be a non-empty string, got {_kind(value)}")
        return str(value)

    def choice(self, key: str, choices: tuple[str, ...], default: str) -> str:
        value = self.string(key, default)
        if value not in choices:
            self.fail(f"'{key}' must be one of {', '.join(choices)}, got {value!r}")
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self.raw(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.fail(f"'{key}' must be true or false, got {_kind(value)}")
        return value

    def integer(self, key: str, default: int | None, *, minimum: int = 0) -> int | None:
        value = self.raw(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.fail(f"'{key}' must be a whole number of at least {minimum}, got {value!r}")
        return value

    def duration(self, key: str, default: str, *, positive: bool = True) -> float:
        value = self.raw(key)
        try:
            seconds = parse_duration(default if value is None else value)
        except ValueError as err:
            self.fail(f"'{key}': {err}")
        if positive and seconds <= 0:
            self.fail(f"'{key}' must be longer than zero")
        return seconds

    def strings(self, key: str) -> list[str] | None:
        """A list of non-empty strings (a single string is a list of one); None when absent."""
        value = self.raw(key)
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(v, str) and v.strip() for v in value)
        ):
            self.fail(f"'{key}' must be a non-empty list of strings")
        return list(value)

    def done(self) -> None:
        unknown = sorted(set(self.spec) - self.seen)
        if unknown:
            self.fail(f"unknown field '{unknown[0]}'")


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "a mapping", list: "a list", str: "a string", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )
