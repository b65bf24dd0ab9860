"""Config values read as go-yaml v2 reads them into ``interface{}`` (``resolve.go``
``resolve``, ``decode.go``: a timestamp stays its text), so that ``hash`` sees Kalypso's Go
types and templates print what Go prints. Each case is go-yaml v2's reading, where PyYAML's
YAML 1.1 resolver reads several of them otherwise."""

from __future__ import annotations

import math
from typing import Any

import pytest

from promoter.gotemplate import GoTemplate
from promoter.gotemplate.goyaml import load_first, marshal, parse_int


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


@pytest.mark.parametrize(
    ("keys", "want"),
    [
        (["a10", "a2"], ["a2", "a10"]),  # runs of digits by their number
        (["AB", "A_B"], ["A_B", "AB"]),  # a non-letter before a letter (ASCII says otherwise)
        (["ab", "aB"], ["aB", "ab"]),  # two letters by code point
        (["a1", "a"], ["a", "a1"]),  # a prefix first
        (["f10", "f09", "f9"], ["f9", "f09", "f10"]),  # equal numbers: the shorter run first
        (["b", None, 2, 1.5], [1.5, 2, None, "b"]),  # numbers by value, then by kind
    ],
)
def test_marshal_orders_keys_as_go_yaml_v2s_sorter(keys: list[Any], want: list[Any]) -> None:
    dumped = marshal(dict.fromkeys(keys, "x"))
    written = [line.split(": ")[0] for line in dumped.splitlines()]
    assert written == [str(k) if k is not None else "null" for k in want]


def test_marshal_writes_scalars_as_go_yaml_v2() -> None:
    value = {
        "floats": [1.0, 1e6, 0.5, 123456.0, 1e-05, math.inf, -math.inf],
        "others": [True, None, 2**64 - 1, -3],
        "s": ["y", "1e3", "0o17", "1:30", "", "2024-01-01", "2024-13-01", "*.yaml", "a: b", "plain", "a\nb"],
    }
    assert marshal(value) == (
        "floats:\n- 1\n- 1e+06\n- 0.5\n- 123456\n- 1e-05\n- .inf\n- -.inf\n"
        "others:\n- true\n- null\n- 18446744073709551615\n- -3\n"
        's:\n- "y"\n- "1e3"\n- "0o17"\n- "1:30"\n- ""\n- "2024-01-01"\n- 2024-13-01\n'
        "- '*.yaml'\n- 'a: b'\n- plain\n- |-\n  a\n  b\n"
    )


def test_to_yaml_in_a_template_is_go_yaml_v2s_marshal_without_the_final_newline() -> None:
    """Kalypso before 97c555b (the 2024 generation); its stringify of a map[string]interface{}
    writes a nested list as YAML text first."""
    data = {"C": {"a10": 1.0, "a2": "y", "A_B": [1e6]}}
    got = GoTemplate("{{ toYaml .C }}|{{ stringify .C }}", "t", yaml="v2").render(data)
    assert got == 'A_B:\n- 1e+06\na2: "y"\na10: 1|A_B: |\n  - 1e+06\na2: "y"\na10: 1'


def test_marshal_folds_long_lines_at_80_columns_as_go_yaml_v2_4_does() -> None:
    """libyaml's plain-scalar rule: at a space past column 80, a new line (v2.4.0's default;
    ``FutureLineWrap`` would turn it off)."""
    words = " ".join(["word"] * 30)
    assert marshal({"key": words}) == (
        "key: " + " ".join(["word"] * 16) + "\n  " + " ".join(["word"] * 14) + "\n"
    )
