"""Config values read as go-yaml v2 reads them into ``interface{}`` (``resolve.go``
``resolve``, ``decode.go``: a timestamp stays its text), so that ``hash`` sees Kalypso's Go
types and templates print what Go prints. Each case is go-yaml v2's reading, where PyYAML's
YAML 1.1 resolver reads several of them otherwise."""

from __future__ import annotations

import math
from typing import Any

import pytest

from promoter.gotemplate.hashing import go_hash
from promoter.kalypso.goyaml import load_first, parse_int
from promoter.kalypso.schedule import config_value


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("y", True),  # PyYAML: the string "y"
        ("N", False),
        ("On", True),
        ("off", False),
        ("~", None),
        ("1e3", 1000.0),  # PyYAML: a string (its floats need a dot)
        ("017", 15),  # ParseInt base 0: octal
        ("0o17", 15),  # PyYAML: a string
        ("0x1F", 31),
        ("0b101", 5),
        ("1_000", 1000),
        ("09", 9.0),  # not octal, but go-yaml's float pattern
        ("+1", 1),
        ("-0x10", -16),
        ("18446744073709551615", 2**64 - 1),  # ParseUint
        ("18446744073709551616", float(2**64)),  # beyond: a float64
        ("1e400", "1e400"),  # ParseFloat's overflow: a string
        ("2001-12-14", "2001-12-14"),  # PyYAML: a date
        ("1:30", "1:30"),  # PyYAML: 90
        (".5", 0.5),
        ("-.inf", -math.inf),
        ("yes please", "yes please"),
        ('"1"', "1"),  # quoted: a string
    ],
)
def test_a_plain_scalar_is_what_go_yaml_v2_makes_of_it(text: str, want: Any) -> None:
    got = load_first(f"v: {text}\n")["v"]
    assert got == want and type(got) is type(want)


def test_nan_merge_keys_and_the_first_document() -> None:
    assert math.isnan(load_first("v: .NaN")["v"])
    assert load_first("b: &x {k: v}\nc: {<<: *x, z: 1}\n")["c"] == {"k": "v", "z": 1}
    assert load_first("a: 1\n---\nb: 2\n") == {"a": 1}
    assert load_first("") is None


@pytest.mark.parametrize("text", ["", "+", "0x", "1.5", "abc", "0b2", "-"])
def test_what_parse_int_refuses(text: str) -> None:
    assert parse_int(text) is None


def test_a_config_value_hashes_with_go_yamls_types() -> None:
    """``hosts: [y]`` is ``[]interface{}{true}`` in Kalypso: hashed as a bool, not a string."""
    value = config_value("hosts: [y]\nport: 0x50\n")
    assert value == {"hosts": [True], "port": 80}
    assert go_hash(value) == go_hash({"hosts": [True], "port": 80}) != go_hash({"hosts": ["y"], "port": 80})
