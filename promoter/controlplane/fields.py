"""The one strict field reader, for control-plane objects and for gate specs: unknown fields,
wrong types, bad names and bad durations are errors naming the file, the line and the field
(``Fields`` words them by field path, ``GateFields`` as the gate and the quoted key)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Any, NoReturn

from promoter.clock import parse_duration
from promoter.controlplane.yamlfile import LDict, line_of, plain
from promoter.errors import ConfigError
from promoter.model import Source

# Matched with ``fullmatch`` only (see ``matches``): ``$`` would also match before a final "\n".
NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
LABEL_KEY = re.compile(r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")

_TYPE_NAMES = {str: "a string", int: "an integer", list: "a list", dict: "a mapping", bool: "a boolean"}


class Fields:
    """One YAML mapping being read: each accessor marks its key as known."""

    NOT_A_MAPPING = "must be a mapping"

    def __init__(self, value: Any, file: str, path: str, line: int | None = None) -> None:
        self.file = file
        self.path = path
        if not isinstance(value, dict):
            where = line_of(value, default=line)
            self.fail(f"{self.NOT_A_MAPPING}, got {kind_of(value)}", line=where)
        self.value: dict[str, Any] = value
        self.line = line_of(value, default=line)
        self.seen: set[str] = set()

    def sub(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def line_of(self, key: str) -> int | None:
        return line_of(self.value, key, self.line)

    def fail(
        self, message: str, key: str | None = None, line: int | None = None, *, named: bool = False
    ) -> NoReturn:
        """Raise a ConfigError at ``key``'s line; the message starts with the field path unless
        it names the field itself (``named``)."""
        path = "" if named else (self.sub(key) if key else self.path)
        where = line if line is not None else (self.line_of(key) if key else self.line)
        prefix = f"{path}: " if path else ""
        raise ConfigError(f"{prefix}{message}", file=self.file, line=where)

    def problem(self, key: str, message: str, *, colon: bool = False) -> NoReturn:
        """Field ``key``'s value is wrong: ``message`` says how (``colon``: it is a sentence of
        its own, as a parser's error is)."""
        self.fail(message, key)

    def get(self, key: str, kind: type | tuple[type, ...] | None = None, *, required: bool = False) -> Any:
        self.seen.add(key)
        if key not in self.value or self.value[key] is None:
            if required:
                self._missing(key)
            return None
        value = self.value[key]
        if kind is not None and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
            kinds = kind if isinstance(kind, tuple) else (kind,)
            wanted = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
            self.problem(key, f"must be {wanted}, got {kind_of(value)}")
        return value

    def name(self, key: str, *, required: bool = True, default: str = "") -> str:
        """A DNS-1123 name; ``default`` when absent and not required."""
        value = self.str(key, required=required)
        if value is None:
            return default
        check_name(value, lambda msg: self.fail(msg, key))
        return value

    def choice(self, key: str, choices: tuple[str, ...], default: str) -> str:
        value = self.str(key, default=default)
        assert value is not None
        if value not in choices:
            self.problem(key, f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    def fields(self, key: str, *, required: bool = False) -> Fields | None:
        value = self.get(key, dict, required=required)
        if value is None:
            return None
        return Fields(value, self.file, self.sub(key), self.line_of(key))

    def items(self, key: str, *, required: bool = False) -> Iterator[tuple[str, int | None, Any]]:
        """(field path, line, value) of each item of a list field."""
        value = self.get(key, list, required=required) or []
        for i, item in enumerate(value):
            yield f"{self.sub(key)}[{i}]", line_of(value, i, self.line_of(key)), item

    def labels(self, key: str) -> dict[str, str]:
        value = self.get(key, dict) or {}
        out: dict[str, str] = {}
        for k, v in value.items():
            if not matches(LABEL_KEY, k) or len(k) > 253:
                self.fail(f"invalid label key {k!r}", key, line=line_of(value, k))
            if not isinstance(v, str):
                self.fail(
                    f"label {k!r} must be a string (quote it), got {kind_of(v)}", key, line=line_of(value, k)
                )
            if not matches(LABEL_VALUE, v) or len(v) > 63:
                self.fail(f"invalid label value {v!r} for {k!r}", key, line=line_of(value, k))
            out[k] = v
        return out

    def any(self, key: str) -> Any:
        self.seen.add(key)
        return plain(self.value.get(key))

    def has(self, key: str) -> bool:
        return self.value.get(key) is not None

    def text(self, key: str, default: str | None = None, *, required: bool = False) -> str | None:
        """A string with more than blanks in it."""
        value = self.get(key, required=required)
        if value is None:
            return default
        if not isinstance(value, str) or not value.strip():
            self.problem(key, f"must be a non-empty string, got {kind_of(value)}")
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.problem(key, f"must be true or false, got {kind_of(value)}")
        return value

    def integer(self, key: str, default: int | None, *, minimum: int = 0) -> int | None:
        value = self.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.problem(key, f"must be a whole number of at least {minimum}, got {value!r}")
        return value

    def duration(self, key: str, default: str, *, positive: bool = True) -> float:
        """Seconds, from a duration in Go's grammar (``default`` when absent)."""
        value = self.get(key)
        if unitless(value):
            self.problem(key, unit_needed(value), colon=True)
        try:
            seconds = parse_duration(default if value is None else value)
        except ValueError as err:
            self.problem(key, str(err), colon=True)
        if positive and seconds <= 0:
            self.problem(key, "must be longer than zero")
        return seconds

    def strings(self, key: str) -> list[str] | None:
        """A list of non-empty strings (a single string is a list of one); None when absent."""
        value = self.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(v, str) and v.strip() for v in value)
        ):
            self.problem(key, "must be a non-empty list of strings")
        return list(value)

    def _missing(self, key: str) -> NoReturn:
        """A required field is absent: a key not read yet that is spelled like it is the typo
        to name (``enviroment`` for ``environment``), else the field is missing."""
        unread = [k for k in self.value if isinstance(k, str) and k not in self.seen]
        typo = difflib.get_close_matches(key, unread, n=1, cutoff=0.8)
        if typo:
            self.fail(f"unknown field '{self.sub(typo[0])}', did you mean '{key}'?", typo[0], named=True)
        self.fail(f"missing required field '{self.sub(key)}'", line=self.line, named=True)

    def done(self) -> None:
        """Unknown fields are errors; one spelled like a known field says which."""
        for key in self.value:
            if key not in self.seen:
                near = difflib.get_close_matches(str(key), sorted(self.seen), n=1, cutoff=0.7)
                hint = f", did you mean '{near[0]}'?" if near else ""
                if not near and "labelSelector" in self.seen:  # a label written where a selector is
                    hint = f"; a selector's labels go under labelSelector: {{labelSelector: {{{key}: ...}}}}"
                self.fail(f"unknown field '{self.sub(key)}'{hint}", key, named=True)

    # Defined last: in the class body, later annotations would take ``str`` to mean this method.
    def str(self, key: str, *, required: bool = False, default: str | None = None) -> str | None:
        value = self.get(key, str, required=required)
        return default if value is None else value


class GateFields(Fields):
    """A gate's spec being read: the same reader, its errors worded as ``gate <type>: 'key' ...``
    at the gate's line in the Pipeline."""

    NOT_A_MAPPING = "expects a mapping"

    def __init__(self, gate: str, spec: Any, source: Source) -> None:
        self.gate, self.source = gate, source
        super().__init__(spec, source.file, "", source.line)

    def fail(
        self, message: str, key: str | None = None, line: int | None = None, *, named: bool = False
    ) -> NoReturn:
        raise ConfigError(f"gate {self.gate}: {message}", file=self.source.file, line=self.source.line)

    def problem(self, key: str, message: str, *, colon: bool = False) -> NoReturn:
        self.fail(f"'{key}'{':' if colon else ''} {message}")


def unitless(value: Any) -> bool:
    """A duration written as a bare number (``24``, ``"90"``): no silent seconds."""
    if isinstance(value, bool):
        return False
    number = isinstance(value, int | float) and value >= 0  # a negative one is refused as such
    return number or (isinstance(value, str) and value.strip().replace(".", "", 1).isdigit())


def unit_needed(value: Any) -> str:
    return (
        f"{value!r} has no unit: write {value}s, {value}m or {value}h (the promoter would read seconds, and "
        "Flux and Argo CD refuse a duration without a unit)"
    )


def matches(pattern: re.Pattern[str], value: str) -> bool:
    """The one way names, label keys and label values are checked: the whole string, or no."""
    return pattern.fullmatch(value) is not None


def check_name(value: str, fail: Any) -> None:
    if len(value) > 63:
        fail(f"name {value[:20]!r}... is {len(value)} characters, over 63")
    if not matches(NAME, value):
        fail(
            f"invalid name {value!r}: use lowercase letters, digits and '-', starting and ending with a letter or digit"
        )


def check_relative_path(value: str, fail: Any) -> str:
    """A folder inside a repo: relative, no '..'; returns it normalised ('' for the root)."""
    if "\x00" in value or value.startswith("/") or "\\" in value:
        fail(f"invalid path {value!r}: must be relative to the repo root")
    parts = [p for p in value.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        fail(f"invalid path {value!r}: '..' is not allowed")
    if any(p.startswith(".") for p in parts):
        fail(f"invalid path {value!r}: dot-folders are reserved")
    return "/".join(parts)


def kind_of(value: object) -> str:
    """What a wrong value is, in the words of error messages ("got a list")."""
    if value is None:
        return "nothing"
    if isinstance(value, float):
        return "a number"
    for t, n in _TYPE_NAMES.items():
        if isinstance(value, t) and not (t is int and isinstance(value, bool)):
            return n
    return type(value).__name__


__all__ = ["Fields", "GateFields", "LDict", "check_name", "check_relative_path", "kind_of"]
