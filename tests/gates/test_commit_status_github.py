"""The commitStatus gate on the github forge: statuses read from the (fake) GitHub API, every
page of them, on the merge commit and its descendants only."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.errors import GateFailed
from promoter.gates import GateContext, build_gate
from promoter.gates.runner import run_gates
from promoter.gitcmd import Git
from promoter.model import GateSpec, Source
from promoter.runtime import build_runtime
from tests.support.fake_github import World, make_world
from tests.support.helpers import ControlPlaneFactory

SRC = Source("promoter.yaml", 14)
FLUX = "kustomization/platform/5f3c9a1e"


@pytest.fixture
def world(factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    w = make_world(factory, monkeypatch)
    yield w
    w.close()


def _context(world: World, merge: str, monkeypatch: pytest.MonkeyPatch) -> GateContext:
    monkeypatch.setenv("GITHUB_REPOSITORY", "org/control-plane")
    cp = ControlPlane(world.control_plane)
    runtime = build_runtime(cp, cp.main(cp.resolve(None)).pipeline, Console(quiet=True), clock=world.clock)
    return GateContext(
        "qa",
        cp.resolve(None),
        merge,
        runtime.platform.url,
        "qa",
        world.clock,
        forge=runtime.forge,
        platform=runtime.platform,
    )


def test_reads_every_page_of_the_merge_commit_and_its_descendants(
    world: World, factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = Git(world.platform).out("rev-parse", "qa")
    merge = factory.commit_platform("qa", {"apps.yaml": "replicas: 2\n"})
    later = factory.commit_platform("qa", {"apps.yaml": "replicas: 3\n"})
    world.fake.post_status("org/platform", older, FLUX, "failure", "the previous rollout")  # ignored
    world.fake.post_status("org/platform", merge, FLUX, "success", "reconciliation succeeded")
    for i in range(150):  # a busy commit: the status the gate needs is on the last page
        world.fake.post_status("org/platform", merge, f"ci/check-{i}", "success")
    gate = build_gate(GateSpec("commitStatus", {"contexts": ["kustomization/*"]}, SRC))
    [outcome] = run_gates([gate], _context(world, merge, monkeypatch), world.clock.now() + 60, lambda _: None)
    assert (outcome.state, outcome.message) == ("success", f"1 success ({FLUX})")
    pages = [r.query.get("page") for r in world.fake.calls("get_statuses") if merge in r.path]
    assert pages == ["1", "2"]
    assert any(later in r.path for r in world.fake.calls("get_statuses"))

    world.fake.post_status("org/platform", later, FLUX, "failure", "health check failed")
    with pytest.raises(GateFailed) as err:
        run_gates(
            [build_gate(GateSpec("commitStatus", "kustomization/*", SRC))],
            _context(world, merge, monkeypatch),
            60,
            lambda _: None,
        )
    assert str(err.value).endswith(f"{FLUX} failure on {later[:12]}: health check failed")
