"""``--wait none`` (DESIGN section 12): each run does what needs no waiting and stops where the
promotion waits; the clocks of gates, soaks and bakes are read back from the statuses, so
they span runs. The fake clock advances only between runs: a run that slept would show in
``clock.slept``."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.clock import FakeClock
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.forges.notes import NoteStatuses
from promoter.gitcmd import Git
from promoter.model import Status
from promoter.promotion.flows import Orchestrator
from promoter.promotion.options import Options
from promoter.promotion.report import Report
from promoter.runtime import build_runtime
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline, stage
from tests.support.waves import create, waved_pipeline


def waiting_orchestrator(path: Path, clock: FakeClock, **options: object) -> Orchestrator:
    cp = ControlPlane(path)
    console = Console(quiet=True)
    runtime = build_runtime(cp, cp.main(cp.resolve(None)).pipeline, console, clock=clock)
    opts = Options(poll_interval=60.0, wait="none", **options)  # type: ignore[arg-type]
    return Orchestrator(cp, runtime.platform, runtime.forge, clock, console, opts, runtime.routes)


def run(path: Path, clock: FakeClock, **options: object) -> Report:
    """One run, as a workflow's job makes it: a fresh process (here: fresh objects)."""
    report = waiting_orchestrator(path, clock, **options).promote(Git(path).out("rev-parse", "main"))
    assert clock.slept == [], "a run that does not wait slept"
    return report


def where(report: Report) -> tuple[str, str, str, str] | str:
    wait = report.wait
    return (wait.waiting_for, wait.environment, wait.wave, report.state) if wait else report.state


def merge_by_hand(platform: Path, env: str) -> str:
    git = Git(platform)
    head, base = git.commit_of(f"refs/heads/promoter/{env}"), git.commit_of(f"refs/heads/{env}")
    assert head is not None
    tree = git.out("rev-parse", f"{head}^{{tree}}")
    sha = git.out("commit-tree", tree, "-p", base or head, "-p", head, "-m", "merged by a human")
    git.run("update-ref", f"refs/heads/{env}", sha)
    return sha


def statuses(path: Path) -> dict[str, str]:
    cp = ControlPlane(path)
    runtime = build_runtime(cp, cp.main(cp.resolve(None)).pipeline, Console(quiet=True))
    found = runtime.forge.get_statuses(Git(path).out("rev-parse", "main"))
    return {c.removeprefix("promoter/"): s.state for c, s in sorted(found.items())}


def test_a_promotion_advances_run_by_run_and_its_clocks_span_runs(factory: ControlPlaneFactory) -> None:
    text = waved_pipeline(bake="30m", canary_gates='[{command: ["true"]}]', fleet_gates="[{soak: 5m}]")
    path = create(
        factory,
        text.replace("    - name: prod\n", "    - name: prod\n      merge: manual\n      timeout: 24h\n"),
    )
    clock = FakeClock()

    steps = [where(run(path, clock))]  # dev's soak (10s) starts: recorded on its status
    clock.t += 10
    steps.append(where(run(path, clock)))  # dev done; qa's canary passes and starts baking
    clock.t += 5 * 60
    baking = run(path, clock)  # five minutes into the bake: it only says how long is left
    steps.append(where(baking))
    assert baking.wait is not None and baking.wait.next_check == baking.wait.since + 30 * 60
    assert "baking, 25m00s to go" in baking.wait.message
    clock.t += 25 * 60
    steps.append(where(run(path, clock)))  # baked: the fleet wave lands; its 5m soak starts
    clock.t += 5 * 60
    steps.append(where(run(path, clock)))  # soaked: qa done, prod's PR waits for a human
    clock.t += 2 * 3600
    steps.append(where(run(path, clock)))  # a heartbeat: still waiting, nothing restarted
    merge_by_hand(factory.platform, "prod")
    done = run(path, clock)

    assert steps == [
        ("gates", "dev", "", "waiting"),
        ("bake", "qa", "canary", "waiting"),
        ("bake", "qa", "canary", "waiting"),
        ("gates", "qa", "fleet", "waiting"),
        ("merge", "prod", "", "waiting"),
        ("merge", "prod", "", "waiting"),
    ]
    assert done.state == "done", [r.message for r in done.results]
    assert statuses(path) == {"dev": "success", "qa": "success", "prod": "success"}
    assert run(path, clock).results[0].message == "already promoted"  # the next heartbeat: nothing


def test_a_run_after_the_timeout_fails_the_gates_at_once_and_rolls_back(factory: ControlPlaneFactory) -> None:
    never = "[{commitStatus: {contexts: [kustomization/*]}}]"
    text = pipeline("dev", stage("qa", timeout="1h", onFailure="rollback", gates=never), "prod")
    path = factory.create(
        {"promoter.yaml": text, "workloads/app.yaml": WORKLOAD}, platform_branches=("dev", "qa", "prod")
    )
    clock = FakeClock()
    before = Git(factory.platform).commit_of("refs/heads/qa")

    first = run(path, clock)
    clock.t += 30 * 60
    second = run(path, clock)
    clock.t += 31 * 60  # past the hour counted from the first run's merge
    late = run(path, clock)

    assert (where(first), where(second)) == (("gates", "qa", "", "waiting"),) * 2
    assert first.wait is not None and second.wait is not None and second.wait.since == first.wait.since
    assert late.state == "failed", late.results[-1].message
    assert "gates did not pass within the timeout" in late.results[-1].message
    # the rollback was asked for at once (qa had no healthy promotion to go back to)
    assert "nothing to roll back to" in late.results[-1].message
    assert statuses(path) == {"dev": "success", "qa": "failure"}
    assert Git(factory.platform).commit_of("refs/heads/qa") != before


def test_an_environment_held_for_approval_is_asked_once(factory: ControlPlaneFactory) -> None:
    path = factory.create({"promoter.yaml": pipeline("dev", "qa", "prod"), "workloads/app.yaml": WORKLOAD})
    clock = FakeClock()

    first = run(path, clock, approvals=frozenset({"prod"}))
    again = run(path, clock, approvals=frozenset({"prod"}))
    by_hand = waiting_orchestrator(path, clock, approvals=frozenset({"prod"}), force=True).promote(
        Git(path).out("rev-parse", "main"), "prod"
    )
    approved = run(path, clock, approvals=frozenset({"prod"}), approved=frozenset({"prod"}))

    assert where(first) == where(again) == ("approval", "prod", "", "waiting")
    assert first.wait is not None and first.wait.approval_requested
    assert again.wait is not None and not again.wait.approval_requested  # asked once
    assert by_hand.wait is not None and by_hand.wait.approval_requested  # forced by hand: asked again
    assert approved.state == "done"
    assert statuses(path) == {"dev": "success", "prod": "success", "qa": "success"}


def test_the_cli_reports_the_state_as_data(factory: ControlPlaneFactory) -> None:
    text = pipeline("dev", stage("qa", merge="manual"), "prod")
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    args = ["promote", "--control-plane", str(path), "--wait", "none"]

    as_json = CliRunner().invoke(cli, [*args, "-o", "json"])
    as_text = CliRunner().invoke(cli, args)
    bad = CliRunner().invoke(cli, [*args, "--hold-for-approval", "stage"])
    as_yaml = CliRunner().invoke(cli, [*args, "-o", "yaml"])

    assert as_json.exit_code == 0, as_json.output
    report = json.loads(as_json.stdout)
    assert (report["state"], report["waiting"]["for"], report["waiting"]["environment"]) == (
        "waiting",
        "merge",
        "qa",
    )
    assert report["waiting"]["nextCheck"] is None  # a human's merge: only an event moves it on
    assert as_text.exit_code == 0
    assert "waiting for merge: qa, since " in as_text.output
    assert "until an event (qa: waiting for someone to merge " in as_text.output
    assert yaml.safe_load(as_yaml.stdout)["waiting"]["for"] == "merge"  # the same data as YAML
    assert bad.exit_code == 2 and "--hold-for-approval stage: no such environment" in bad.output


def test_status_shows_what_each_waiting_promotion_waits_for_and_since_when(
    factory: ControlPlaneFactory,
) -> None:
    text = waved_pipeline(bake="30m", canary_gates="[]", fleet_gates="[]")
    path = create(factory, text)
    clock = FakeClock()
    run(path, clock)  # dev done (its soak of 10s is recorded) ... stops in dev's gates
    clock.t += 10
    run(path, clock)  # qa's canary passed: baking

    shown = CliRunner().invoke(cli, ["status", "--control-plane", str(path)])
    data = CliRunner().invoke(cli, ["status", "--control-plane", str(path), "-o", "json"])

    assert shown.exit_code == 0, shown.output
    assert "    waiting for bake (wave canary) since 2026-01-01T00:00:10Z (" in shown.output
    rows = {r["environment"]: r["waiting"] for r in json.loads(data.stdout)["environments"]}
    assert rows == {
        "dev": None,
        "qa": {"for": "bake", "wave": "canary", "since": "2026-01-01T00:00:10Z"},
        "prod": None,
    }


def test_a_gate_timeout_counts_from_the_gates_start_even_once_a_soak_started(
    factory: ControlPlaneFactory,
) -> None:
    gates = "[{commitStatus: {contexts: [kustomization/*]}}, {soak: 5m}]"
    text = pipeline(stage("dev", timeout="10m", gates=gates), "qa", "prod")
    path = factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    clock = FakeClock()

    first = run(path, clock)  # merged: the gates start, Flux has posted nothing yet
    clock.t += 8 * 60
    merge = Git(factory.platform).commit_of("refs/heads/dev")
    assert merge is not None
    NoteStatuses(Git(factory.platform), wall=clock.wall).post(merge, Status("kustomization/app/1", "success"))
    soaking = run(path, clock)  # the cluster is healthy after 8 minutes: the 5-minute soak starts
    clock.t += 3 * 60
    late = run(path, clock)  # 11 minutes after the gates started: over dev's 10-minute timeout

    assert (where(first), where(soaking)) == (("gates", "dev", "", "waiting"),) * 2
    assert first.wait is not None and soaking.wait is not None
    assert soaking.wait.since == first.wait.since  # still the gates' start, not the soak's
    assert late.state == "failed" and "did not pass within the timeout" in late.results[0].message
