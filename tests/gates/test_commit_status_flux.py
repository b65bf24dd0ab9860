"""The commitStatus gate against what each Flux release really posts: a healthy and a failed
rollout on three clusters (tests/fixtures/flux), replayed through a stand-in of
notification-controller's github provider (tests/support/flux_statuses.py) onto the local forge's
statuses, on a clock the replay drives: success when all three applied; a failure at once where
Flux posts it; where it does not (2.8, or 2.9 with DisableCommitStatusEvent), a timeout that
names the silent clusters and says why, never a pass."""

from __future__ import annotations

from typing import Any

import pytest

from promoter.errors import GateFailed, GateTimedOut
from promoter.forges.local import LocalForge
from promoter.forges.notes import NoteStatuses
from promoter.gates import GateContext, Observation, build_gate
from promoter.gates.runner import GateOutcome, run_gates
from promoter.gitcmd import Git
from promoter.model import GateSpec, Release, Source, Status
from promoter.platform.repo import PlatformRepo
from tests.support.flux_statuses import Cluster, NotificationController, Replay, clusters, per_cluster, stream
from tests.support.helpers import ControlPlaneFactory

SRC = Source("promoter.yaml", 14)
# Flux's default contexts: kustomization/<name>/<first part of each cluster's Provider UID>.
EAST, WEST1, WEST2 = (
    "kustomization/platform/5f3c9a1e",
    "kustomization/platform/a81d44c2",
    "kustomization/platform/0c9c2e41",
)
COUNT = {"contexts": ["kustomization/platform/*"], "minCount": 3, "interval": "10s"}
NAMED = {
    "required": [f"kustomization/platform/{c}" for c in ("qa-east-1", "qa-west-1", "qa-west-2")],
    "interval": "10s",
}
TIMEOUT = 600.0
SILENT_28 = (
    "Flux 2.8 posts no failure status: a failed reconciliation looks like silence; the hub gate sees it"
)


class Platform:
    """The qa branch of a real platform repo: the previous rollout's commit, then the merge M."""

    def __init__(self, factory: ControlPlaneFactory) -> None:
        Git(factory.root).run("init", "-q", "--bare", str(factory.platform))
        self.path = factory.platform
        self.before = factory.commit_platform("qa", {"apps.yaml": "replicas: 1\n"})
        self.merge = factory.commit_platform("qa", {"apps.yaml": "replicas: 2\n"})
        self.notes = NoteStatuses(Git(self.path))

    def post(self, sha: str, status: Status) -> None:
        self.notes.post(sha, status)

    def replay(
        self, release: Release, name: str, spec: Any, fleet: dict[str, Cluster], silent: str = ""
    ) -> tuple[list[GateOutcome], Replay]:
        """What the previous rollout posted on the commit before M (a healthy one), then
        ``name``'s events on M (none from the cluster ``silent``) as the gate waits, until it
        passes, fails or times out."""
        earlier = NotificationController(release, fleet)
        for sent in stream("rollout-healthy", "qa", self.before):
            if posted := earlier.status_for(sent):
                self.post(*posted)
        events = [e for e in stream(name, "qa", self.merge) if e.cluster != silent]
        clock = Replay(events, NotificationController(release, fleet), self.post)
        ctx = self.context(clock, release)
        gate = build_gate(GateSpec("commitStatus", spec, SRC))
        self.clock = clock
        return run_gates([gate], ctx, TIMEOUT, lambda _: None, progress_interval=3600), clock

    def context(self, clock: Replay, release: Release) -> GateContext:
        """The gate's view of qa: M on the real platform repo, its statuses, the Flux release."""
        platform = PlatformRepo(str(self.path))
        forge = LocalForge(Git(self.path), platform)
        return GateContext(
            "qa",
            "c" * 40,
            self.merge,
            str(self.path),
            "qa",
            clock,
            forge=forge,
            platform=platform,
            flux=(release,),
        )

    def posted(self) -> list[tuple[str, str, str]]:
        return [(s.context, s.state, s.description) for s in self.notes.history(self.merge)]


@pytest.fixture
def platform(factory: ControlPlaneFactory) -> Platform:
    factory.platform.parent.mkdir(parents=True, exist_ok=True)
    return Platform(factory)


@pytest.mark.parametrize("release", [(2, 7), (2, 8), (2, 9)])
def test_a_healthy_rollout_passes_when_the_third_cluster_applied_it(
    platform: Platform, release: Release
) -> None:
    [outcome], clock = platform.replay(release, "rollout-healthy", COUNT, clusters())
    assert (outcome.state, outcome.message) == ("success", f"3 success ({WEST2}, {EAST}, {WEST1})")
    # qa-west-1 applied M at 150 s; Flux 2.7 posted `success: dependency not ready` for it at
    # 20 s, before applying anything: counted, the gate would have passed at 120 s.
    assert clock.now() == 150


def test_flux_2_7_posts_success_for_a_dependency_not_ready_which_is_no_verdict(platform: Platform) -> None:
    events = stream("rollout-healthy", "qa", platform.merge)
    clock = Replay(events, NotificationController((2, 7), clusters()), platform.post)
    clock.sleep(45)  # qa-west-1's dependencies were not ready at 20 s; qa-east-1 applied M at 42 s
    assert platform.posted() == [
        (WEST1, "success", "dependency not ready"),
        (EAST, "success", "reconciliation succeeded"),
    ]
    observed = build_gate(GateSpec("commitStatus", COUNT, SRC)).check(platform.context(clock, (2, 7)))
    assert observed == Observation(
        "pending", f"1 of 3 success; {WEST1} success: dependency not ready (not applied yet)"
    )


@pytest.mark.parametrize("release", [(2, 7), (2, 9)])
def test_a_failed_rollout_fails_at_once_where_flux_posts_the_failure(
    platform: Platform, release: Release
) -> None:
    with pytest.raises(GateFailed) as err:
        platform.replay(release, "rollout-failed", COUNT, clusters())
    assert not isinstance(err.value, GateTimedOut)
    assert str(err.value) == (
        f"qa: gate commitStatus kustomization/platform/* min 3 failed: {WEST1} failure on "
        f"{platform.merge[:12]}: health check failed"
    )
    assert platform.clock.now() == 350  # the health check's failure, read at the next look


def test_flux_2_8_posts_no_failure_so_the_timeout_names_the_silent_cluster(platform: Platform) -> None:
    with pytest.raises(GateTimedOut) as err:
        platform.replay((2, 8), "rollout-failed", COUNT, clusters())
    assert platform.posted() == [
        (EAST, "success", "reconciliation succeeded"),
        (WEST2, "success", "reconciliation succeeded"),
    ]
    assert [o.state for o in err.value.outcomes] == ["pending"]  # two of three is not a pass
    assert str(err.value) == (
        "qa: gates did not pass within the timeout: commitStatus kustomization/platform/* min 3: pending "
        f"(2 of 3 success ({WEST2}, {EAST}); 1 of minCount 3 missing; reported on {platform.before[:12]}, "
        f"the commit before, and not since: {WEST1}; {SILENT_28})"
    )
    assert platform.clock.now() == TIMEOUT


def test_flux_2_8_with_a_context_per_cluster_names_it_in_required(platform: Platform) -> None:
    with pytest.raises(GateTimedOut) as err:
        platform.replay((2, 8), "rollout-failed", NAMED, clusters(expr=per_cluster))
    assert str(err.value) == (
        "qa: gates did not pass within the timeout: commitStatus 3 required: pending "
        "(2 of 3 success (kustomization/platform/qa-east-1, kustomization/platform/qa-west-2); "
        f"never reported (kustomization/platform/qa-west-1); {SILENT_28})"
    )


@pytest.mark.parametrize("name", ["rollout-healthy", "rollout-failed"])
def test_flux_2_9_with_disable_commit_status_event_never_passes(platform: Platform, name: str) -> None:
    fleet = clusters(disable_commit_status_event=True)
    if name == "rollout-failed":  # failures are still posted: it fails at once
        with pytest.raises(
            GateFailed, match=f"{WEST1} failure on {platform.merge[:12]}: health check failed"
        ):
            platform.replay((2, 9), name, COUNT, fleet)
        return
    with pytest.raises(GateTimedOut) as err:  # every cluster applied M, and none can say so
        platform.replay((2, 9), name, COUNT, fleet)
    assert platform.posted() == []
    assert str(err.value) == (
        "qa: gates did not pass within the timeout: commitStatus kustomization/platform/* min 3: pending "
        f"(no status matching kustomization/platform/* on {platform.merge[:12]}; 3 of minCount 3 missing; "
        "Flux 2.9 posts failures, so the silent clusters have not applied it yet, or run kustomize-controller "
        "with DisableCommitStatusEvent, which posts no success)"
    )


def test_on_flux_2_7_silence_is_a_cluster_that_has_not_applied_it(platform: Platform) -> None:
    with pytest.raises(GateTimedOut) as err:  # qa-west-2 never fetches M: none of its events come
        platform.replay((2, 7), "rollout-healthy", NAMED, clusters(expr=per_cluster), silent="qa-west-2")
    assert str(err.value).endswith(
        "never reported (kustomization/platform/qa-west-2); Flux 2.7 posts failures, so the silent clusters "
        "have not applied it yet (not fetched, health checks running, suspended) or cannot post (Alert, "
        "Provider, token))"
    )
