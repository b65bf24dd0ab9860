"""Environments as a graph through the example workflows, driven by events (DESIGN sections 12
and 14): staging, then prod-eu (merged by hand) and prod-us (merged by the promoter, then a soak)
side by side, then global-edge, which needs both. prod-eu's gate fails: global-edge never starts,
prod-us goes on. Time is faked in the repos as in test_waking.py; runner time is measured."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.actions.github_stand_in import GitHubStandIn
from tests.actions.test_waking import PROMOTE, Timeline, github, merge_by_hand, platform_wake, statuses
from tests.actions.test_workflow_harness import Workflows, head, workflows
from tests.support.helpers import ENV, ControlPlaneFactory, pipeline, stage

__all__ = ["github", "workflows"]  # the harness's fixtures, shared

ENVS = ("staging", "prod-eu", "prod-us", "global-edge")


def fan_out(factory: ControlPlaneFactory) -> None:
    text = pipeline(
        "staging",
        stage("prod-eu", follows="[staging]", merge="manual", timeout="24h", gates='[{command: ["false"]}]'),
        stage("prod-us", follows="[staging]", gates="[{soak: 5m}]"),
        stage("global-edge", follows="[prod-eu, prod-us]"),
    )
    targets = "".join(
        f"    - {{name: {env}, environment: {env}, manifests: {{repo: https://example.com/app, path: ./{env}}}}}\n"
        for env in ENVS
    )
    workload = f"apiVersion: promoter.dev/v1alpha1\nkind: Workload\nmetadata: {{name: app}}\nspec:\n  workspace: team\n  deploymentTargets:\n{targets}"
    factory.commit(
        "main",
        {"promoter.yaml": text, "workloads/app.yaml": workload},
        "staging -> prod-eu, prod-us -> global-edge",
    )
    for env in ENVS:
        factory.commit(env, {"env.yaml": ENV}, f"{env} values")


def caller(factory: ControlPlaneFactory) -> Path:
    """The example's promote.yml with both prod environments held for their own approval."""
    text = PROMOTE.read_text()
    assert text.count("hold-for-approval: prod\n") == 1
    path = factory.root / "promote.yml"
    path.write_text(text.replace("hold-for-approval: prod\n", "hold-for-approval: prod-eu,prod-us\n"))
    return path


def test_a_fan_out_promotes_side_by_side_and_a_failure_stops_only_what_follows_it(
    workflows: Callable[[dict[str, Any]], Workflows], factory: ControlPlaneFactory, github: GitHubStandIn
) -> None:
    """prod-eu and prod-us each under its own approval (one asked per run), prod-eu merged by a
    person 40 minutes on and failing its gate, prod-us merged by the promoter after a soak."""
    fan_out(factory)
    x = head(factory)
    line = Timeline(factory, workflows, github, caller=caller(factory))

    pushed = line.event("push")  # staging; prod-eu approved and its PR opened; prod-us asked next
    asked = line.heartbeats(until=10 * 60)  # prod-us approved, merged, soaking
    soaked = line.heartbeats(until=20 * 60)  # prod-us's soak is over
    quiet = line.heartbeats(until=40 * 60)  # only a person moves prod-eu on: no heartbeat runs
    platform_wake(line, merge_by_hand(factory, "prod-eu"), "prod-eu")
    woken = line.event("repository_dispatch", event={"action": "promoter-wake"})
    line.report(
        "(graph) staging -> prod-eu (approved, merged by hand 40m later, its gate fails),"
        " prod-us (approved, soak 5m) -> global-edge"
    )

    assert (pushed.state, pushed.waiting, pushed.jobs) == (
        "waiting",
        "merge prod-eu",
        ["advance", "approval", "approved"],
    )
    assert [(r.state, r.jobs) for r in asked] == [("waiting", ["advance", "approval", "approved"])]
    assert [(r.state, r.waiting, r.jobs) for r in soaked] == [("waiting", "merge prod-eu", ["advance"])]
    assert {r.state for r in quiet} == {"skipped"}  # a person's merge only: not billed
    assert (woken.state, woken.jobs) == ("failed", ["advance"])
    assert statuses(factory, x) == {"staging": "success", "prod-eu": "failure", "prod-us": "success"}
    assert factory.platform_file("global-edge", ".promoter/promotion.yaml") is None  # never started
    assert line.billed() <= 10  # the push (3 jobs), two heartbeats (3 + 1), the relay, the dispatch
