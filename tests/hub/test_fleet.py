"""When a commit is deployed to a fleet whose clusters come and go (promoter/hub/fleet.py): the
first moment at which the clusters that counted then (registered, reported, not lost) had all
reached it; and the spans in which a cluster was lost, from the intervals it was heard in."""

from __future__ import annotations

import math

import pytest

from promoter.hub.fleet import Registration, Span, completed_at, lost_spans, types_between


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


@pytest.mark.parametrize(
    ("lost", "reached", "expected"),
    [
        ({"b": [(30, math.inf)]}, {"a": 50}, 50),  # b lost before a reached it: not waited for
        ({"b": [(60, math.inf)]}, {"a": 50}, 60),  # b held it up until it was lost
        ({"b": [(30, 90)]}, {"a": 50}, 50),  # b lost when a reached it: deployed then, b back later
        ({"b": [(30, 40)]}, {"a": 50}, None),  # b back before a reached it: it waits for b again
        ({"b": [(30, 40)]}, {"a": 50, "b": 70}, 70),
        ({"b": [(30, 40), (60, math.inf)]}, {"a": 50}, 60),  # lost twice: the second time frees it
        ({"a": [(30, 40)], "b": [(35, 45)]}, {}, None),  # each holds it up, lost or not
        ({"a": [(0, math.inf)], "b": [(0, math.inf)]}, {"a": 50, "b": 50}, None),  # nobody counts
    ],
)
def test_a_lost_cluster_holds_up_nothing_until_it_is_back(
    lost: dict[str, list[Span]], reached: dict[str, float], expected: float | None
) -> None:
    assert completed_at([_r("a", 0, 10), _r("b", 0, 20)], reached, lost) == expected


def test_a_lost_span_outside_a_registration_changes_nothing() -> None:
    revoked = [_r("a", 0, 10), _r("b", 0, 20, revoked=45)]
    assert completed_at(revoked, {"a": 50}, {"b": [(60, math.inf)]}) == 50
    later = [_r("a", 0, 10), _r("b", 70, 80)]
    assert completed_at(later, {"a": 50}, {"b": [(5, 75)]}) == 50


@pytest.mark.parametrize(
    ("seen", "heartbeats", "expected"),
    [
        ([], True, []),  # never heard: the registration never counts anyway
        ([(0, 100)], True, [(1900, math.inf)]),
        ([(0, 100)], False, []),  # nothing heartbeats: silence is no sign of trouble
        ([(0, 100), (2000, 2500)], True, [(1900, 2000), (4300, math.inf)]),
        ([(0, 100), (2000, 2500)], False, [(1900, 2000)]),  # a silence of when it heartbeated stays
    ],
)
def test_lost_spans(seen: list[Span], heartbeats: bool, expected: list[Span]) -> None:
    assert lost_spans(seen, heartbeats) == expected
