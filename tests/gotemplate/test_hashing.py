"""Kalypso's ``hash``: hashstructure v1.1.0 (``Hash(v, nil)``) over Go's FNV-1 64.

The expected numbers come from outside the implementation: FNV-1's published vectors, the v1
library's own example (``hashstructure_examples_test.go``, ``ExampleHash``: 6691276962590150517),
and values built here by hand from the algorithm (``hashstructure.go``: ``visit``,
``hashUpdateOrdered``, ``hashUpdateUnordered``: no finishing step after a map or a struct field)
with ``struct.pack`` and a loop of their own. The oracle's numbers are in
``tests/kalypso/test_vectors.py``."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from promoter.gotemplate import GoTemplate, StringMap
from promoter.gotemplate.hashing import fnv1_64, go_hash
from promoter.gotemplate.scheduler import scheduler_data
from promoter.gotemplate.values import NO_VALUE, ExecError, Struct


def fnv1(data: bytes) -> int:
    """FNV-1 64 written out: offset basis, then per byte multiply by the prime and XOR."""
    h = 14695981039346656037
    for b in data:
        h = (h * 1099511628211) % 2**64
        h ^= b
    return h


def le(*numbers: int) -> bytes:
    return b"".join(struct.pack("<Q", n % 2**64) for n in numbers)


def s(text: str) -> int:
    return fnv1(text.encode())


def pair(a: int, b: int) -> int:  # hashUpdateOrdered
    return fnv1(le(a, b))


@pytest.mark.parametrize(
    ("data", "want"),
    [(b"", 14695981039346656037), (b"a", 0xAF63BD4C8601B7BE), (b"abc", 0xD8DCCA186BAFADCB)],
)
def test_fnv1_64_gives_the_published_vectors(data: bytes, want: int) -> None:
    assert fnv1_64(data) == want == fnv1(data)


def test_the_librarys_own_example_gives_its_documented_number() -> None:
    """``ExampleHash`` of hashstructure v1: a struct ``ComplexStruct`` with a string, a
    ``uint`` and a ``map[string]interface{}`` of a bool, a string and a ``[]string``."""

    class ComplexStruct(Struct):
        type_name = "hashstructure.ComplexStruct"

    value = ComplexStruct(
        Name="mitchellh",
        Age=64,
        Metadata={"car": True, "location": "California", "siblings": ["Bob", "John"]},
    )
    assert go_hash(value) == 6691276962590150517


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("a", 0xAF63BD4C8601B7BE),  # a string: its bytes
        ("é", fnv1("é".encode())),  # UTF-8
        (0, fnv1(bytes(8))),  # int widened to int64, little-endian
        (1, fnv1(b"\x01" + bytes(7))),
        (-1, fnv1(b"\xff" * 8)),  # two's complement
        (2**64 - 1, fnv1(b"\xff" * 8)),  # a uint64 writes the same bytes
        (None, fnv1(bytes(8))),  # nil is the zero int
        (True, fnv1(b"\x01")),  # bool is one int8 byte
        (False, fnv1(b"\x00")),
        (1.5, fnv1(struct.pack("<d", 1.5))),  # float64: its IEEE bits
        (1.0, fnv1(struct.pack("<d", 1.0))),
        (float("nan"), fnv1(le(0x7FF8000000000001))),  # Go's math.NaN()
        ([], 0),  # a slice folds from 0 and is not finished
        (["a"], pair(0, s("a"))),
        (["a", "b"], pair(pair(0, s("a")), s("b"))),
        ({}, 0),  # a map: XOR of its entries, nothing after (v2's FormatV2 hashes it again)
        ({"a": "b"}, pair(s("a"), s("b"))),
        ({"a": "b", "c": 1}, pair(s("a"), s("b")) ^ pair(s("c"), fnv1(le(1)))),
        ({"m": {"k": None}}, pair(s("m"), pair(s("k"), fnv1(le(0))))),  # nested
        ({1: ["x"]}, pair(fnv1(le(1)), pair(0, s("x")))),  # yaml.v2's int keys
    ],
)
def test_each_kind_hashes_as_hashstructure_v1_does(value: Any, want: int) -> None:
    assert go_hash(value) == want


def test_what_tells_values_apart_and_what_does_not() -> None:
    assert go_hash({"a": "1", "b": [1, 2]}) == go_hash({"b": [1, 2], "a": "1"})  # map order
    assert go_hash([1, 2]) != go_hash([2, 1])  # slice order counts
    assert len({go_hash(v) for v in (1, 1.0, "1", True)}) == 4  # int, float64, string, bool
    assert go_hash(None) == go_hash(0) == go_hash(NO_VALUE)  # nil and int 0: the same
    assert go_hash(StringMap(a="b")) == go_hash({"a": "b"})  # map[string]string too
    assert go_hash(2**70) == go_hash(float(2**70))  # beyond 64 bits: go-yaml's float64


def test_a_value_too_large_or_too_deep_is_an_error_not_a_hang() -> None:
    deep: list[Any] = []
    for _ in range(200):
        deep = [deep]
    with pytest.raises(ExecError, match="nested over"):
        go_hash(deep)
    with pytest.raises(ExecError, match="step limit"):
        go_hash([list(range(100))] * 100, budget=1000)
    with pytest.raises(ExecError, match="unknown kind"):
        go_hash(object())


def data(**config: Any) -> Struct:
    return scheduler_data(
        name="app-web",
        namespace="dev-big-app-web",
        environment="dev",
        workspace="team",
        workload="app",
        labels={"tier": "gold"},
        manifests={"repo": "r"},
        cluster_type="big",
        config=config,
    )


@pytest.mark.parametrize(
    ("source", "want"),
    [
        ('{{ hash "a" }}', s("a")),
        ("{{ hash 1 }}", fnv1(le(1))),  # a literal integer is an int
        ("{{ hash 1.0 }}", fnv1(struct.pack("<d", 1.0))),  # with a dot, a float64
        ("{{ hash true }}", fnv1(b"\x01")),
        ("{{ hash .ClusterType }}", s("big")),
        ("{{ hash .Labels }}", pair(s("tier"), s("gold"))),  # map[string]string
        ("{{ hash .Labels.nope }}", fnv1(le(0))),  # no value, given to interface{}: nil
        ('{{ hash (index .Labels "nope") }}', s("")),  # index: the element's zero value
        ("{{ hash .ConfigData.nope }}", fnv1(le(0))),  # of map[string]interface{}: nil
        ("{{ hash .ConfigData.LIST }}", pair(pair(0, s("x")), fnv1(le(2)))),
        ('{{ hash (list "x" 2) }}', pair(pair(0, s("x")), fnv1(le(2)))),
        ('{{ hash (dict "a" "b") }}', pair(s("a"), s("b"))),
        ("{{ hash (add 1 1) }}", fnv1(le(2))),  # sprig's int64
    ],
)
def test_hash_in_a_template_sees_the_go_types_of_kalypsos_data(source: str, want: int) -> None:
    got = GoTemplate(source, "t").render(data(LIST=["x", 2], REGION="west"))
    assert got == str(want)


def test_hash_of_the_whole_data_hashes_kalypsos_data_type_struct() -> None:
    """``hash .``: the struct ``dataType``, its fields in declaration order."""
    value = data(REGION="west")
    fields = [
        ("DeploymentTargetName", s("app-web")),
        ("Namespace", s("dev-big-app-web")),
        ("Environment", s("dev")),
        ("Workspace", s("team")),
        ("Workload", s("app")),
        ("Labels", pair(s("tier"), s("gold"))),
        ("Manifests", pair(s("repo"), s("r"))),
        ("ClusterType", s("big")),
        ("ConfigData", pair(s("REGION"), s("west"))),
    ]
    want = s("dataType")
    for name, hashed in fields:
        want ^= pair(s(name), hashed)
    assert GoTemplate("{{ hash . }}", "t").render(value) == str(want)
