"""Durations follow Go's time.ParseDuration grammar, as Flux and Argo CD read them."""

from __future__ import annotations

from typing import Any

import pytest

from promoter.clock import parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1.5m", 90),
        ("1.5h", 5400),
        ("2h45m", 9900),
        ("1m30.5s", 90.5),
        (".5s", 0.5),
        ("300ms", 0.3),
        ("1500us", 0.0015),
        ("1h0m0s", 3600),
        ("10m\n", 600),
        ("0s", 0),
        ("45", 45),
        ("1", 1),
    ],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "text", ["", "m", "1d", "-5m", "1h 30m", "5 m", "1.5.5s", "1hm", "ten seconds", True, -3]
)
def test_not_durations(text: Any) -> None:
    with pytest.raises(ValueError, match=r"expected a duration|cannot be negative"):
        parse_duration(text)
