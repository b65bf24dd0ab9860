"""When a commit is deployed to a fleet whose clusters come and go (promoter/hub/fleet.py): the
first moment at which the clusters that counted then had all reached it."""

from __future__ import annotations

import pytest

from promoter.hub.fleet import Registration, completed_at, types_between


def _r(cluster: str, registered: float, first: float | None, revoked: float | None = None) -> Registration:
    return Registration(cluster, "small", registered, revoked, first)


@pytest.mark.parametrize(
    ("fleet", "reached", "expected"),
    [
        ([], {}, None),  # no cluster: never deployed
        ([_r("a", 0, None)], {}, None),  # registered, never reported: counts for nothing
        ([_r("a", 0, 10)], {"a": 50}, 50),
        ([_r("a", 0, 10), _r("b", 0, 20)], {"a": 50, "b": 70}, 70),  # the last of them
        ([_r("a", 0, 10), _r("b", 60, 65)], {"a": 50, "b": 90}, 50),  # b came after: not waited for
        ([_r("a", 0, 10), _r("b", 0, None)], {"a": 50}, 50),  # b never reported
        ([_r("a", 0, 10), _r("b", 0, 20, revoked=80)], {"a": 50}, 80),  # b held it until revoked
        ([_r("a", 0, 10, revoked=40), _r("b", 0, 20)], {"a": 50, "b": 30}, 40),  # a held it until it left
        ([_r("a", 0, 10, revoked=40)], {}, None),  # the last cluster left: nobody to deploy to
        # a reached it in an earlier registration: it counts, reached, from its next first report
        ([_r("a", 0, 10, revoked=40), _r("a", 90, 95)], {"a": 30}, 30),
        ([_r("a", 0, 10, revoked=20), _r("a", 90, 95)], {"a": 30}, 95),
        # several events at one moment: b's revocation and c's first report at 80
        ([_r("a", 0, 10), _r("b", 0, 20, revoked=80), _r("c", 70, 80)], {"a": 50, "c": 100}, 100),
    ],
)
def test_completed_at(fleet: list[Registration], reached: dict[str, float], expected: float | None) -> None:
    assert completed_at(fleet, reached) == expected


def test_types_between_names_the_types_registered_in_a_window() -> None:
    fleet = [
        Registration("a", "small", 0, 100, 10),
        Registration("b", "large", 200, None, None),
        Registration("c", "edge", 0, 50, None),
    ]
    assert types_between(fleet, 60, 150) == ["small"]
    assert types_between(fleet, 60, 300) == ["large", "small"]
    assert types_between(fleet, 0, 10) == ["edge", "small"]
