"""Kalypso's ``hash``: ``hashstructure.Hash(v, nil)`` of github.com/mitchellh/hashstructure
**v1.1.0** (the v1 module: no ``/v2`` path, no format argument; ``hashstructure.go`` ``Hash``,
``(*walker).visit``, ``hashUpdateOrdered``, ``hashUpdateUnordered``), over the Go value a template
value stands for (kalypso-scheduler ``scheduler/templater.go`` since d6154e8, 2024-01-12).

The hasher is Go's ``fnv.New64()``: FNV-1, 64 bits (multiply, then XOR; not FNV-1a). By kind:

- a string: its UTF-8 bytes;
- a number: its 8 bytes little-endian as ``binary.Write`` writes them. Go's ``int`` and
  ``uint`` are widened to 64 bits first, so every integer a template meets (``int``, ``int64``
  or ``uint64``: literals, sprig's arithmetic, go-yaml's numbers) is 8 bytes; ``float64`` is its
  IEEE 754 bits (NaN as Go's ``math.NaN()``);
- a bool: one byte, 0 or 1 (an ``int8``);
- nil (a missing map key of ``map[string]interface{}``, a YAML ``null``): the zero ``int``;
- a slice: ``h = ordered(h, element)`` from ``h = 0``, where ``ordered(a, b)`` is the hash of
  the two as 8 bytes each;
- a map: the XOR of ``ordered(key, value)`` over its entries, and nothing after it (so the
  order of entries does not count, and an empty map is 0);
- a struct (``.`` itself, Kalypso's ``dataType``): its type name's hash, XORed with
  ``ordered(name, value)`` of each field.

v2's ``FormatV2`` hashes the XOR once more after every map and every struct field; v1 does not,
so the two differ on any value holding a map.

Python's values stand for Go's as ``values.go_type`` says: ``bool`` a bool, ``int`` an integer,
``float`` a ``float64``, ``str`` a string, ``None`` nil, a list a slice, a dict a map, a
``Struct`` a struct. An integer beyond 64 bits is a ``float64``, as go-yaml v2 reads one."""

from __future__ import annotations

import struct
from typing import Any

from promoter.gotemplate.values import NO_VALUE, ExecError, Struct, go_type

_OFFSET = 0xCBF29CE484222325
_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1
_GO_NAN = 0x7FF8000000000001  # math.NaN()'s bits; Python's float("nan") has others
_INT64_MIN = -(1 << 63)
_DEPTH = 100


def fnv1_64(data: bytes) -> int:
    """FNV-1 (Go's ``hash/fnv.New64``): for each byte, multiply by the prime, then XOR."""
    digest = _OFFSET
    for byte in data:
        digest = ((digest * _PRIME) & _MASK) ^ byte
    return digest


def _u64(value: int) -> bytes:
    return (value & _MASK).to_bytes(8, "little")


def _ordered(a: int, b: int) -> int:
    return fnv1_64(_u64(a) + _u64(b))


class _Walker:
    """One ``Hash`` call: counts the values visited, so YAML aliases that fan out (a few
    lines standing for millions of values) stop at the step limit instead of running on."""

    def __init__(self, budget: int) -> None:
        self.budget = budget

    def visit(self, value: Any, depth: int) -> int:
        self.budget -= 1
        if self.budget < 0:
            raise ExecError("hash: the value has more parts than the step limit")
        if depth > _DEPTH:
            raise ExecError(f"hash: the value is nested over {_DEPTH} levels deep")
        if isinstance(value, Struct):
            return self._struct(value, depth)
        if isinstance(value, dict):
            return self._map(value, depth)
        if isinstance(value, list | tuple):
            current = 0
            for item in value:
                current = _ordered(current, self.visit(item, depth + 1))
            return current
        return _scalar(value)

    def _map(self, value: dict[Any, Any], depth: int) -> int:
        current = 0
        for key, item in value.items():
            current ^= _ordered(self.visit(key, depth + 1), self.visit(item, depth + 1))
        return current

    def _struct(self, value: Struct, depth: int) -> int:
        current = fnv1_64(value.type_name.rsplit(".", 1)[-1].encode())
        for name, item in value.items():
            current ^= _ordered(fnv1_64(name.encode()), self.visit(item, depth + 1))
        return current


def _scalar(value: Any) -> int:
    if value is None or value is NO_VALUE:
        return fnv1_64(_u64(0))
    if isinstance(value, bool):
        return fnv1_64(b"\x01" if value else b"\x00")
    if isinstance(value, int):
        return _integer(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return fnv1_64(value.encode("utf-8", "surrogatepass"))
    raise ExecError(f"hash: unknown kind to hash: {go_type(value)}")


def _integer(value: int) -> int:
    """An integer as 8 bytes; one beyond 64 bits as the ``float64`` go-yaml reads it into."""
    if _INT64_MIN <= value <= _MASK:
        return fnv1_64(_u64(value))
    try:
        widened = float(value)
    except OverflowError as err:
        raise ExecError(f"hash: {value} is beyond what a Go number holds") from err
    return _float(widened)


def _float(value: float) -> int:
    bits = _GO_NAN if value != value else struct.unpack("<Q", struct.pack("<d", value))[0]
    return fnv1_64(_u64(bits))


def go_hash(value: Any, budget: int = 1_000_000) -> int:
    """``hashstructure.Hash(value, nil)`` of v1.1.0: an unsigned 64-bit number."""
    return _Walker(budget).visit(value, 0)
