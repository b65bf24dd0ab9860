"""Environments as a graph (DESIGN section 14): staging, then prod-eu and prod-us side by side,
then global-edge, which needs both. A run advances every environment whose upstreams are done;
a failure stops only what follows it (unless ``failFast``); the guard needs every upstream."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.clock import FakeClock
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.gitcmd import Git
from promoter.promotion.flows import Orchestrator
from promoter.promotion.options import Options
from promoter.promotion.report import Report
from promoter.runtime import build_runtime
from tests.support.helpers import ControlPlaneFactory, pipeline, stage

ENVS = ("staging", "prod-eu", "prod-us", "global-edge")


def workload() -> str:
    targets = "".join(
        f"    - {{name: {env}, environment: {env}, manifests: {{repo: https://example.com/app, branch: main, path: ./{env}}}}}\n"
        for env in ENVS
    )
    return (
        "apiVersion: promoter.dev/v1alpha1\nkind: Workload\nmetadata: {name: app}\n"
        f"spec:\n  workspace: team\n  deploymentTargets:\n{targets}"
    )


def fan_out(eu_gates: str = "[]", eu_merge: str = "auto", *, fail_fast: bool = False) -> str:
    text = pipeline(
        "staging",
        stage("prod-eu", follows="[staging]", merge=eu_merge, gates=eu_gates),
        stage("prod-us", follows="[staging]"),
        stage("global-edge", follows="[prod-eu, prod-us]"),
    )
    return text.replace("  environments:\n", "  failFast: true\n  environments:\n") if fail_fast else text


ENV = """\
apiVersion: promoter.dev/v1alpha1
kind: ClusterType
metadata: {name: small}
spec: {reconciler: flux}
---
apiVersion: promoter.dev/v1alpha1
kind: SchedulingPolicy
metadata: {name: all}
spec: {}
"""


def create(factory: ControlPlaneFactory, text: str) -> Path:
    return factory.create(
        main={"promoter.yaml": text, "workloads/app.yaml": workload()},
        envs={env: {"env.yaml": ENV} for env in ENVS},
    )


def orchestrator(path: Path, clock: FakeClock, **options: object) -> Orchestrator:
    cp = ControlPlane(path)
    console = Console(quiet=True)
    runtime = build_runtime(cp, cp.main(cp.resolve(None)).pipeline, console, clock=clock)
    opts = Options(poll_interval=1.0, **options)  # type: ignore[arg-type]
    return Orchestrator(cp, runtime.platform, runtime.forge, clock, console, opts, runtime.routes)


def promote(path: Path, clock: FakeClock | None = None, to: str | None = None, **options: object) -> Report:
    return orchestrator(path, clock or FakeClock(), **options).promote(Git(path).out("rev-parse", "main"), to)


def states(report: Report) -> dict[str, str]:
    return {r.environment: r.state for r in report.results}


def statuses(path: Path) -> dict[str, str]:
    cp = ControlPlane(path)
    runtime = build_runtime(cp, cp.main(cp.resolve(None)).pipeline, Console(quiet=True))
    found = runtime.forge.get_statuses(Git(path).out("rev-parse", "main"))
    return {c.removeprefix("promoter/"): s.state for c, s in sorted(found.items())}


def test_a_failure_stops_what_follows_it_and_its_sibling_goes_on(factory: ControlPlaneFactory) -> None:
    path = create(factory, fan_out(eu_gates='[{command: ["false"]}]'))

    report = promote(path)

    assert states(report) == {"staging": "success", "prod-eu": "failure", "prod-us": "success"}
    assert report.state == "failed"
    assert statuses(path) == {"staging": "success", "prod-eu": "failure", "prod-us": "success"}
    assert "global-edge" not in factory.platform_files("refs/heads/prod-us") and not Git(
        factory.platform
    ).commit_of("refs/heads/global-edge")


def test_fail_fast_stops_the_whole_promotion(factory: ControlPlaneFactory) -> None:
    path = create(factory, fan_out(eu_gates='[{command: ["false"]}]', fail_fast=True))

    report = promote(path)

    assert states(report) == {"staging": "success", "prod-eu": "failure"}
    assert statuses(path) == {"staging": "success", "prod-eu": "failure"}


def test_without_waiting_the_siblings_advance_in_one_run_and_the_join_waits_for_both(
    factory: ControlPlaneFactory,
) -> None:
    """prod-eu is merged by hand, prod-us by itself: one run opens both PRs and finishes prod-us;
    global-edge starts in the run after the human merge."""
    path = create(factory, fan_out(eu_merge="manual"))
    clock = FakeClock()

    first = promote(path, clock, wait="none")

    assert states(first) == {"staging": "success", "prod-eu": "waiting", "prod-us": "success"}
    assert first.state == "waiting" and first.wait is not None and first.wait.environment == "prod-eu"
    platform = Git(factory.platform)
    assert platform.commit_of("refs/heads/promoter/prod-eu") is not None  # its PR is open
    assert platform.commit_of("refs/heads/global-edge") is None
    assert clock.slept == []

    head = platform.commit_of("refs/heads/promoter/prod-eu")
    assert head is not None
    platform.run("update-ref", "refs/heads/prod-eu", head)  # a human merges (fast-forward)
    second = promote(path, clock, wait="none")

    assert states(second) == {
        "staging": "skipped",
        "prod-eu": "success",
        "prod-us": "skipped",
        "global-edge": "success",
    }
    assert statuses(path) == dict.fromkeys(["global-edge", "prod-eu", "prod-us", "staging"], "success")
    assert clock.slept == []


def test_to_takes_the_environments_before_it_in_the_graph_only(factory: ControlPlaneFactory) -> None:
    path = create(factory, fan_out())

    report = promote(path, to="prod-us")

    assert states(report) == {"staging": "success", "prod-us": "success"}


def test_the_guard_needs_every_upstream(factory: ControlPlaneFactory) -> None:
    path = create(factory, fan_out())
    promote(path, to="prod-us")
    orch = orchestrator(path, FakeClock())
    main = orch.cp.main(Git(path).out("rev-parse", "main"))
    edge = main.pipeline.environment("global-edge")
    assert edge is not None

    result = orch.run.promote(main, edge)

    assert result.state == "failure"
    assert "guard:" in result.message and "has not succeeded in prod-eu yet" in result.message


def test_status_and_graph_show_what_waits_on_what(factory: ControlPlaneFactory) -> None:
    path = create(factory, fan_out(eu_gates='[{command: ["false"]}]'))
    promote(path)

    status = CliRunner().invoke(cli, ["status", "--control-plane", str(path)])
    graph = CliRunner().invoke(cli, ["graph", "--control-plane", str(path), "--states"])

    assert status.exit_code == 0, status.output
    edge = status.output[status.output.index("  global-edge") :]
    assert "follows prod-eu, prod-us" in edge
    assert "waits on prod-eu (failure)" in edge
    assert graph.exit_code == 0, graph.output
    assert graph.output.splitlines()[:6] == [
        "flowchart LR",
        '  e0["staging<br/>success"]',
        '  e1["prod-eu<br/>failure"]',
        '  e2["prod-us<br/>success"]',
        '  e3["global-edge<br/>not promoted"]',
        "  e0 --> e1",
    ]
    assert "  class e1 failure" in graph.output and "  class e0,e2 success" in graph.output


@pytest.mark.parametrize(
    ("text", "order"),
    [
        (pipeline("dev", "qa", "prod"), ["dev", "qa", "prod"]),
        # listed before what it follows: promoted after it all the same
        (
            pipeline(
                stage("edge", follows="[eu, us]"),
                stage("eu", follows="[stage]"),
                stage("us", follows="[stage]"),
                stage("stage", follows="[]"),
                stage("sandbox", follows="[]"),
            ),
            ["stage", "eu", "us", "edge", "sandbox"],
        ),
    ],
)
def test_order_of_promotion(factory: ControlPlaneFactory, text: str, order: list[str]) -> None:
    path = factory.create(main={"promoter.yaml": text}, envs={})
    pipe = ControlPlane(path).main(Git(path).out("rev-parse", "main")).pipeline

    assert [e.name for e in pipe.ordered()] == order


def test_siblings_held_for_approval_are_asked_one_run_at_a_time(factory: ControlPlaneFactory) -> None:
    """The workflow runs one approval job per run, for the environment that run asked about: a
    second sibling waits to be asked by the next run (a check due at once), never recorded as
    asked without a job to answer it."""
    path = create(factory, fan_out())
    clock = FakeClock()
    held = frozenset({"prod-eu", "prod-us"})

    first = promote(path, clock, wait="none", approvals=held)
    waits = {r.environment: r.wait for r in first.results if r.wait}

    assert first.wait is not None and first.wait.environment == "prod-eu" and first.wait.approval_requested
    assert waits["prod-us"] is not None and not waits["prod-us"].approval_requested
    assert waits["prod-us"].next_check == clock.wall()
    assert "to be asked by the next run (this one is for prod-eu)" in waits["prod-us"].message
    assert statuses(path) == {"prod-eu": "pending", "staging": "success"}

    approved = promote(path, clock, wait="none", approvals=held, approved=frozenset({"prod-eu"}))
    assert states(approved)["prod-eu"] == "success"
    assert approved.wait is not None and approved.wait.environment == "prod-us"
    assert not approved.wait.approval_requested  # an approved run asks for nothing: no job follows it

    third = promote(path, clock, wait="none", approvals=held)
    assert third.wait is not None and third.wait.environment == "prod-us" and third.wait.approval_requested
