"""The fast reader of rendered YAML gives exactly what PyYAML's safe loader gives, or steps
aside: compared over the golden trees and over scalars chosen to differ between YAML 1.1 and 1.2."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
import yaml

from promoter.rendering import parse
from promoter.rendering.parse import _fast, load_rendered
from tests.support.paths import TESTS


def pyyaml(data: bytes) -> list[Any]:
    return [d for d in yaml.load_all(data, Loader=yaml.SafeLoader) if d is not None]


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        pairs = zip(a.items(), b.items(), strict=False)
        return len(a) == len(b) and all(same(ka, kb) and same(va, vb) for (ka, va), (kb, vb) in pairs)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def test_the_fast_reader_is_in_use() -> None:
    assert parse.yaml_rs is not None, "yaml-rs is a dependency: without it every file is read by PyYAML"
    assert _fast(b"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\nb: [1, 2.5, x]\n") is not None


def test_golden_trees_read_the_same() -> None:
    files = [p for folder in ("golden", "golden-sources") for p in (TESTS / folder).rglob("*.yaml")]
    assert len(files) > 50
    fast = 0
    for path in files:
        data = path.read_bytes()
        assert same(load_rendered(data), pyyaml(data)), path
        fast += _fast(data) is not None
    assert fast > len(files) // 2  # most rendered files take the fast path


SCALARS = [
    "yes",
    "No",
    "ON",
    "off",
    "y",
    "n",
    "true",
    "False",
    "TRUE",
    "null",
    "Null",
    "~",
    "",
    "0755",
    "09",
    "0o17",
    "0b101",
    "0x1F",
    "+5",
    "-3",
    "1_000",
    "1e3",
    "1.5e3",
    "1.5e+3",
    "1.10",
    ".5",
    "1.",
    ".inf",
    "-.Inf",
    ".NaN",
    "12:30",
    "1:20:30.5",
    "2024-01-01",
    "2001-12-14t21:59:43.10-05:00",
    "=",
    "<<",
    "!!str 1",
    "&a 1",
    "*a",
    "? x",
    "a: b",
    "- x",
    "x # c",
    "'quoted'",
    '"dq\\u00e9"',
    "9223372036854775808",
    "123456789012345678901",
    "v1.2",
    "no-cache",
    "on-call",
    "http://x:80/a",
    "a b",
    "-",
    "--",
    "---",
    "...",
    "%x",
    "@x",
    "`x",
    "x\ty",
    "1,2",
    "[1, 2]",
    "{a: 1}",
    "{a: yes}",
]


@pytest.mark.parametrize("value", SCALARS)
def test_scalars_read_the_same_or_step_aside(value: str) -> None:
    for text in (f"key: {value}\n", f"list:\n  - {value}\n  - x\n", f"m: {{k: {value}}}\n", f"{value}: v\n"):
        data = text.encode()
        try:
            expected = pyyaml(data)
        except yaml.YAMLError:
            continue  # rendered text PyYAML cannot read was refused by the renderer already
        got = _fast(data)
        assert got is None or same(got, expected), (text, got, expected)
        assert same(load_rendered(data), expected), text


def test_random_documents_read_the_same_or_step_aside() -> None:
    rng = random.Random(12)
    pieces = [*SCALARS, "abc", "1", "2.5", "x-y", "a.b", "0", "10", "-1", "3.0", '"q"', "'s'"]
    for _ in range(800):
        lines = [f"k{i}: {rng.choice(pieces)}" for i in range(rng.randint(1, 6))]
        if rng.random() < 0.3:
            lines.insert(rng.randint(0, len(lines)), "---")
        data = ("\n".join(lines) + "\n").encode()
        try:
            expected = pyyaml(data)
        except yaml.YAMLError:
            continue
        got = _fast(data)
        assert got is None or same(got, expected), (data, got, expected)


def test_what_pyyaml_refuses_is_refused() -> None:
    with pytest.raises(yaml.YAMLError):
        load_rendered(b"a: [1\n")
