"""A burst is one wake (issue 31, scenario (e)): an environment of 200 clusters whose Flux posts a
status per Kustomization per cluster during a rollout costs a bounded handful of relay jobs and
control-plane runs.

The platform repo's real ``promoter-wake.yml`` runs once here, as GitHub runs it (bash, curl,
``date``), against GitHub's loopback stand-in while statuses keep arriving: it dispatches only once
the burst is quiet. The 200-cluster rollout is then counted on a simulated clock with GitHub's
concurrency rules (per group one job runs and one waits; a newer one replaces the waiting one,
which is cancelled before it gets a runner) and the workflow's own settings (its `if:`, its groups,
``PROMOTER_SETTLE`` and ``PROMOTER_SETTLE_MAX``, its step's loop)."""

from __future__ import annotations

import heapq
import math
import random
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from tests.actions.github_stand_in import GitHubStandIn
from tests.actions.test_workflow_harness import EXAMPLES, Workflows, condition

WAKE = EXAMPLES / "platform-repo/.github/workflows/promoter-wake.yml"
SHA = "4" * 40
#: A job's start on a GitHub-hosted runner, and a control-plane run (start-up, checkout, the
#: install, the run: the workflow harness measures 2 to 35 s for the run itself).
STARTUP, CONTROL_PLANE_RUN = 10.0, 60.0


def settings() -> dict[str, Any]:
    doc = yaml.safe_load(WAKE.read_text())
    step = doc["jobs"]["wake"]["steps"][-1]
    return {
        "doc": doc,
        "settle": float(step["env"]["PROMOTER_SETTLE"]),
        "most": float(step["env"]["PROMOTER_SETTLE_MAX"]),
    }


def test_the_relay_waits_for_the_burst_to_end_then_wakes_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    github = GitHubStandIn().start()
    try:
        quick = tmp_path / "promoter-wake.yml"  # the real file, its settle shortened for a test
        quick.write_text(re.sub(r"PROMOTER_SETTLE: \d+", "PROMOTER_SETTLE: 2", WAKE.read_text()))
        monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "outputs"))
        context = {"event_name": "status", "event": {"state": "success", "sha": SHA}, "repository": "org/platform",
                   "api_url": github.url, "token": "ghs_platform-job-token"}  # fmt: skip
        flows = Workflows(SimpleNamespace(workspace=tmp_path), context)  # type: ignore[arg-type]
        posted: list[float] = []

        def burst() -> None:  # the clusters' statuses, for 3 s
            for i in range(10):
                posted.append(time.time())
                github.post_status(
                    "org/platform", SHA, f"kustomization/apps/cluster-{i}", "success", posted[-1]
                )
                time.sleep(0.3)

        clusters = threading.Thread(target=burst)
        clusters.start()
        flows.run(quick, variables={"PROMOTER_CONTROL_PLANE": "org/control-plane"})
        sent = time.time()
        clusters.join()
    finally:
        github.stop()
    (job,) = flows.jobs
    assert not job.failed, [getattr(r, "stderr", "") for _, r in job.steps]
    assert github.dispatches == [
        (
            "org/control-plane",
            {"event_type": "promoter-wake", "client_payload": {"event": "status", "sha": SHA}},
        )
    ]
    reads = [r for r in github.requests if r.startswith("GET /repos/org/platform/commits/")]
    assert len(reads) >= 2 and sent - posted[-1] >= 1.0  # it read again while the burst went on


@dataclass
class Group:
    """A GitHub concurrency group: one job running, at most one waiting."""

    running: bool = False
    waiting: Any = None
    ran: list[tuple[float, float]] = field(default_factory=list)  # (start, end) of each job that ran
    cancelled: int = 0


@dataclass
class Burst:
    """Statuses at ``times`` through the platform repo's workflow and the control plane's."""

    times: list[float]
    settle: float
    most: float
    relay: Group = field(default_factory=Group)
    control_plane: Group = field(default_factory=Group)
    queue: list[tuple[float, int, str, Any]] = field(default_factory=list)
    n: int = 0

    def at(self, t: float, kind: str, data: Any = None) -> None:
        self.n += 1
        heapq.heappush(self.queue, (t, self.n, kind, data))

    def run(self) -> Burst:
        for t in self.times:
            self.at(t, "status")
        while self.queue:
            t, _, kind, data = heapq.heappop(self.queue)
            getattr(self, f"_{kind}")(t, data)
        return self

    def _queue(self, group: Group, t: float, start: str) -> None:
        if not group.running:
            group.running = True
            self.at(t + STARTUP, start, t)
        else:
            group.cancelled += group.waiting is not None
            group.waiting = start

    def _status(self, t: float, _: Any) -> None:
        self._queue(self.relay, t, "relay")

    def _relay(self, t: float, queued: float) -> None:
        """The step's loop: sleep, read the newest status, until quiet or PROMOTER_SETTLE_MAX."""
        check = t
        while check < t + self.most:
            check += self.settle
            newest = max((s for s in self.times if s <= check), default=0.0)
            if check - newest >= self.settle:
                break
        self.at(check + 1.0, "dispatched", (self.relay, t - STARTUP))

    def _dispatched(self, t: float, data: tuple[Group, float]) -> None:
        group, started = data
        self._end(group, started, t)
        if group is self.relay:
            self._queue(self.control_plane, t, "control")

    def _control(self, t: float, _: Any) -> None:
        self.at(t + CONTROL_PLANE_RUN - STARTUP, "dispatched", (self.control_plane, t - STARTUP))

    def _end(self, group: Group, started: float, t: float) -> None:
        group.ran.append((started, t))
        group.running = False
        if group.waiting is not None:
            start, group.waiting = group.waiting, None
            group.running = True
            self.at(t + STARTUP, start, t)

    def billed(self) -> int:
        return sum(math.ceil((end - start) / 60) for start, end in self.relay.ran + self.control_plane.ran)


def rollout(clusters: int, kustomizations: int, spread: float, seed: int = 31) -> list[float]:
    """When each cluster's Flux posts each Kustomization's status: within ``spread`` seconds of
    the merge (its GitRepository interval and the reconciliation), one apart per Kustomization."""
    rng = random.Random(seed)
    return sorted(rng.uniform(0, spread) + k for _ in range(clusters) for k in range(kustomizations))


@pytest.mark.parametrize("spread", [60.0, 300.0, 600.0])
def test_200_clusters_posting_statuses_cost_a_handful_of_jobs(spread: float) -> None:
    s = settings()
    job = s["doc"]["jobs"]["wake"]
    status = {"github": {"event_name": "status", "event": {"state": "success"}}, "vars": {}}
    assert condition(job["if"], status)  # a status wakes, unless the hub does
    assert not condition(job["if"], {**status, "vars": {"PROMOTER_WAKE_ON_STATUS": "false"}})
    times = rollout(200, 2, spread)
    burst = Burst(times, s["settle"], s["most"]).run()
    jobs = len(burst.relay.ran) + len(burst.control_plane.ran)
    last_run = max(start for start, _ in burst.control_plane.ran)
    print(
        f"\n(e) 200 clusters x 2 Kustomizations over {spread:.0f}s: {len(times)} statuses, "
        f"{len(burst.relay.ran)} relay jobs ({burst.relay.cancelled} cancelled before a runner), "
        f"{len(burst.control_plane.ran)} control-plane runs, {burst.billed()} billed minutes; "
        f"the last status to the last run's start: {last_run - times[-1]:.0f}s"
    )
    assert jobs <= 10
    assert last_run > times[-1]  # a run after the last status: the gate sees every cluster


def test_scenario_b_with_its_clusters_statuses_counted() -> None:
    """Scenario (b) of tests/actions/test_waking.py bills 8 minutes counting only the merged PR's
    wake; every merge also makes each cluster's Flux post a status per Kustomization, and each
    burst goes through the platform repo's relay and the control plane's runs. Here its four
    merges (dev; qa's canary wave, then the rest; prod) with 10, 2, 18 and 50 clusters of 2
    Kustomizations each, posting over 5 minutes: what (b) costs with its statuses, and with the
    hub waking instead (PROMOTER_WAKE_ON_STATUS false: no status starts a job)."""
    s = settings()
    bursts = [
        Burst(rollout(n, 2, 300.0, seed=31 + i), s["settle"], s["most"]).run()
        for i, n in enumerate((10, 2, 18, 50))
    ]
    statuses = sum(b.billed() for b in bursts)
    jobs = sum(len(b.relay.ran) + len(b.control_plane.ran) for b in bursts)
    print(
        f"\n(b) with its clusters' statuses: 8 + {statuses} = {8 + statuses} billed minutes "
        f"({jobs} jobs for {sum(len(b.times) for b in bursts)} statuses); with the hub waking: 8"
    )
    assert jobs <= 40  # a sparse burst (2 clusters over 5 minutes) settles more often than a dense one
    assert 8 + statuses <= 60
