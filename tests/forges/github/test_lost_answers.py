"""Writes whose answer was lost: the server carried the request out, then the connection broke
or a proxy answered 5xx. The retry checks first (the PR exists, the status is there, the PR is
merged, the branch is at the new commit), so nothing is created or merged twice. As in
test_faults.py, a lost 500 runs the whole promotion on after the retry, the others promote dev,
where the write is first made."""

from __future__ import annotations

import pytest

from tests.forges.github.test_faults import WHOLE, WRITES, assert_promoted_once, inject, main_head, run
from tests.support.fake_github import make_world
from tests.support.helpers import ControlPlaneFactory


@pytest.mark.parametrize("kind", ("500", "502", "reset", "timeout"))
@pytest.mark.parametrize("call", WRITES)
def test_a_lost_answer_creates_nothing_twice(
    call: str, kind: str, factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(factory, monkeypatch, git_http=call == "push")
    try:
        inject(world, call, kind, 1, after=True)
        to = "prod" if kind == WHOLE else "dev"
        result = run(world, to=to)
        assert [f.times for f in world.fake.faults + world.git.faults] == [0]
        assert result.exit_code == 0, result.output
        assert_promoted_once(world, main_head(world), to=to)
    finally:
        world.close()
