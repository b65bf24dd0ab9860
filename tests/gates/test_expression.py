"""The condition language of the prometheus gate: parsed and evaluated with no eval."""

from __future__ import annotations

import math
from typing import Any

import pytest

from promoter.gates.expression import EvaluationError, ExpressionError, parse, show


@pytest.mark.parametrize(
    ("text", "result", "expected"),
    [
        ("result[0] >= 0.95", [0.96], True),
        ("result[0] >= 0.95", [0.94, 1.0], False),
        ("result >= 0.95", 0.95, True),
        ("len(result) > 0 && result[0] < 1e-3", [0.0005], True),
        ("len(result) == 0 || result[0] < 1", [], True),  # short-circuit: no index error
        ("all(result, {# >= 0.9}) and any(result, {# == 1})", [0.9, 1.0], True),
        ("all(result, {# >= 0.9})", [], True),
        ("not any(result, {# > 5})", [1.0, 2.0], True),
        ("!(result[0] > 1) && result[1] != 3", [1.0, 2.0], True),
        ("sum(result) / len(result) >= 0.5", [0.2, 0.9], True),
        ("max(result) - min(result) < 0.1", [0.31, 0.35], True),
        ("abs(result - 1) <= 0.01", 0.995, True),
        ("-result[0] * 2 + 1 == -1", [1.0], True),
        ("10 % 4 == 2 && 2 * 3 + 1 == 7 && (2 + 3) * 2 == 10", [], True),
        ("isNaN(result[0])", [math.nan], True),
        ("isNaN(result[0]) == false && isInf(result[1])", [1.0, math.inf], True),
        ("result[0] / 0 > 1000", [1.0], True),  # IEEE: +Inf, as PromQL and Go give
        ("isNaN(0 / 0)", [], True),
        ("result == 'ok' or result == \"fine\"", "fine", True),
        ("result < 'b'", "a", True),
        ("result[0] == true", [1.0], False),  # a number is never a boolean
        ("true", None, True),
    ],
)
def test_conditions(text: str, result: Any, expected: bool) -> None:
    assert parse(text).evaluate(result) is expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("result[0] >=", "at column 13: unexpected the end"),
        ("result[0] >= 0.95)", "at column 18: unexpected ')'"),
        ("(result[0]", "at column 11: expected ')', found the end"),
        ("0.9 < result < 1", "at column 14: comparisons do not chain; use &&"),
        ("__import__('os')", "at column 1: unknown name '__import__'"),
        ("result.__class__", "at column 7: unexpected '.'"),
        ("len", "at column 1: unknown name 'len'"),
        ("all(result, # > 1)", "at column 13: expected '{', found '#'"),
        ("# > 1", "at column 1: '#' is only valid inside {...}"),
        ("result @ 2", "at column 8: unexpected '@'"),
        ("", "a condition must be a non-empty string"),
    ],
)
def test_syntax_errors_name_the_column(text: str, message: str) -> None:
    with pytest.raises(ExpressionError) as err:
        parse(text)
    assert str(err.value).startswith(message)


@pytest.mark.parametrize(
    ("text", "result", "message"),
    [
        ("result[0] > 1", [], "index 0 is out of range: the result is empty"),
        ("result[2] > 1", [1.0, 2.0], "index 2 is out of range: it has 2"),
        ("result[0.5] > 1", [1.0], "index 0.5 is not a whole number"),
        ("result > 1", [1.0], "> needs a number, got [1]"),
        ("result[0]", [0.99], "the condition gave 0.99, not true or false"),
        ("result && true", 1.0, "&& needs true or false, got 1"),
        ("len(result) > 0", 3.0, "len() needs a list or a string, got 3"),
        ("min(result) > 0", [], "min() of an empty list"),
        ("all(result, {#})", [1.0], "all needs true or false, got 1"),
    ],
)
def test_evaluation_errors_are_measurement_errors(text: str, result: Any, message: str) -> None:
    with pytest.raises(EvaluationError) as err:
        parse(text).evaluate(result)
    assert str(err.value) == message


def test_values_are_shown_as_prometheus_spells_them() -> None:
    assert show([0.998, 1.0, math.nan, math.inf, -math.inf]) == "[0.998, 1, NaN, +Inf, -Inf]"
    assert show(list(range(7))) == "[0, 1, 2, 3, 4, ...]"
    assert show(0.123456789) == "0.123457"
