"""The removal guard's rule and words (pure); end to end in tests/controlplane/test_bad_input_safety.py."""

from __future__ import annotations

import pytest

from promoter.model import DEFAULT_REMOVAL_LIMIT, RemovalLimit
from promoter.promotion.removals import Removals, assignment_folders
from promoter.scheduling.removed import label_change


@pytest.mark.parametrize(
    ("limit", "removed", "held", "allowed"),
    [
        (DEFAULT_REMOVAL_LIMIT, 0, 0, True),  # a first render removes nothing
        (DEFAULT_REMOVAL_LIMIT, 2, 4, True),  # 50% is not more than 50%
        (DEFAULT_REMOVAL_LIMIT, 3, 4, False),
        (DEFAULT_REMOVAL_LIMIT, 1, 1, False),  # all of them, whatever the bound
        (RemovalLimit(100, percent=True), 4, 4, False),
        (RemovalLimit(100, percent=True), 3, 4, True),
        (RemovalLimit(0), 1, 10, False),
        (RemovalLimit(2), 2, 10, True),
        (RemovalLimit(2), 3, 10, False),
    ],
)
def test_what_the_bound_allows(limit: RemovalLimit, removed: int, held: int, allowed: bool) -> None:
    assert limit.allows(removed, held) is allowed


def test_the_lines_it_prints() -> None:
    found = Removals("prod", "", 9, tuple(f"c/w-{i}" for i in range(7)), RemovalLimit(3), ("one", "two"))
    assert found.refused
    assert found.refusal() == (
        "prod: would remove 7 of its 9 assignments (c/w-0, c/w-1, c/w-2, c/w-3, c/w-4 and 2 more), "
        "more than its removalLimit of 3 allows, because one; two; nothing was pushed "
        "(--allow-removal lets a wanted removal through)"
    )
    assert found.body().startswith("**Removes 7 assignments** (one; two):\n\n- `c/w-0`\n")
    assert found.body().endswith("- `c/w-6`\n\n")
    wave = Removals("qa", "canary", 1, ("small/app-t",), DEFAULT_REMOVAL_LIMIT, ())
    assert wave.warning() == (
        "warning: qa, wave canary: removes all 1 assignment (small/app-t), because the render no longer "
        "produces them (a promotion stops here without --allow-removal: all of them)"
    )


def test_assignment_folders_and_label_changes() -> None:
    files = ["a/x/reconciler.yaml", "a/x/namespace.yaml", "b/y/r.yaml", "a/loose.yaml", ".promoter/p.yaml"]
    assert assignment_folders(files, {"a", ".promoter"}) == {"a/x"}
    assert label_change({"size": "large", "tier": "web"}, {"size": "big", "zone": "a"}) == (
        "size: large -> big, tier=web removed, zone=a added"
    )
