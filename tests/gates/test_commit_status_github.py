"""The commitStatus gate on the github forge: statuses read from the (fake) GitHub API, every
page of them, on the merge commit and its descendants only."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.errors import GateFailed, GateTimedOut
from promoter.gates import GateContext, build_gate
from promoter.gates.runner import run_gates
from promoter.gitcmd import Git
from promoter.model import GateSpec, Source, Status
from promoter.runtime import build_runtime
from tests.support.fake_github import World, make_world
from tests.support.flux_statuses import NotificationController, Replay, clusters, per_cluster, stream
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


def test_flux_2_8_on_github_a_failed_cluster_is_silence_named_at_the_timeout(
    world: World, factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failed rollout's events through Flux 2.8's github provider (no failure status, fluxcd/
    notification-controller#1373), posted to the fake GitHub as the gate polls it."""
    merge = factory.commit_platform("qa", {"apps.yaml": "replicas: 2\n"})

    def post(sha: str, status: Status) -> None:
        world.fake.post_status("org/platform", sha, status.context, status.state, status.description)

    flux = NotificationController((2, 8), clusters(expr=per_cluster))
    clock = Replay(stream("rollout-failed", "qa", merge), flux, post)
    ctx = replace(_context(world, merge, monkeypatch), clock=clock, flux=((2, 8),))
    names = [f"kustomization/platform/{c}" for c in ("qa-east-1", "qa-west-1", "qa-west-2")]
    gate = build_gate(GateSpec("commitStatus", {"required": names, "interval": "30s"}, SRC))
    with pytest.raises(GateTimedOut) as err:
        run_gates([gate], ctx, 900, lambda _: None, progress_interval=3600)
    assert [o.state for o in err.value.outcomes] == ["pending"]
    assert str(err.value) == (
        "qa: gates did not pass within the timeout: commitStatus 3 required: pending "
        "(2 of 3 success (kustomization/platform/qa-east-1, kustomization/platform/qa-west-2); never reported "
        "(kustomization/platform/qa-west-1); Flux 2.8 posts no failure status: a failed reconciliation looks "
        "like silence; the hub gate sees it)"
    )
    assert clock.now() == 900
    statuses = [r for r in world.fake.calls("get_statuses") if merge in r.path]
    assert len(statuses) == 900 // 30 + 1  # a read per poll, one at the deadline included
