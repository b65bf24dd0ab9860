"""Holds and change windows stop a promotion before it lands anything, whatever starts the run:
the promotion flow (a push, a wake-up, the heartbeat, a dispatch), the scheduling flow, the CLI.
A hold wins over a window, both over an approval; only --force with a reason passes, recorded."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from promoter.changecontrol.holds import HOLDS_REF, Hold, HoldBook
from promoter.changecontrol.records import Records
from promoter.cli.main import cli
from promoter.clock import FAKE_EPOCH, FakeClock
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.gitcmd import Git
from promoter.promotion.control import ChangeControl
from promoter.promotion.flows import Orchestrator
from promoter.promotion.options import Options
from promoter.promotion.report import Report
from promoter.runtime import build_runtime
from tests.support.helpers import ENV, WORKLOAD, ControlPlaneFactory, pipeline, stage

# FAKE_EPOCH is Thursday 2026-01-01 00:00Z: prod's window opens at 09:00 UTC that day.
WINDOWS = "{timeZone: UTC, allow: [{days: Mon-Fri, hours: '09:00-17:00'}]}"


def create(factory: ControlPlaneFactory, **prod: str) -> Path:
    text = pipeline("dev", "qa", stage("prod", **prod))
    return factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})


def run(path: Path, clock: FakeClock, *, wait: str = "none", **options: object) -> Report:
    cp = ControlPlane(path)
    console = Console(quiet=True)
    runtime = build_runtime(cp, cp.main(cp.resolve(None)).pipeline, console, clock=clock)
    opts = Options(poll_interval=1.0, wait=wait, **options)  # type: ignore[arg-type]
    control = ChangeControl(
        HoldBook(Records(cp.git, HOLDS_REF)), clock, console, opts, cp.main(cp.resolve(None)).pipeline
    )
    orchestrator = Orchestrator(
        cp, runtime.platform, runtime.forge, clock, console, opts, runtime.routes, control
    )
    return orchestrator.promote(Git(path).out("rev-parse", "main"))


def hold(path: Path, env: str = "prod", wave: str | None = None) -> None:
    HoldBook(Records(Git(path), HOLDS_REF)).hold(Hold(env, wave, "incident 4711", "alice", FAKE_EPOCH - 60))


def states(report: Report) -> dict[str, str]:
    return {r.environment: r.state for r in report.results if r.environment != "qa"}


def test_a_hold_stops_every_run_until_released(factory: ControlPlaneFactory) -> None:
    path = create(factory)
    hold(path)
    clock = FakeClock()
    report = run(path, clock)
    assert states(report) == {"dev": "success", "prod": "waiting"}
    assert report.wait is not None and report.wait.to_json() == {
        "for": "hold",
        "environment": "prod",
        "wave": None,
        "since": "2025-12-31T23:59:00Z",
        "nextCheck": None,
        "message": "prod: held by alice since 2025-12-31T23:59:00Z: incident 4711",
        "approvalRequested": False,
    }
    assert states(run(path, clock, wait="all")) == {"dev": "skipped", "prod": "waiting"}  # the local CLI too
    assert states(run(path, clock, force=True))["prod"] == "waiting"  # --force without a reason
    HoldBook(Records(Git(path), HOLDS_REF)).release("prod", None, "bob", clock.wall())
    assert states(run(path, clock)) == {"dev": "skipped", "prod": "success"}


def test_force_with_a_reason_passes_a_hold_and_is_recorded(factory: ControlPlaneFactory) -> None:
    path = create(factory)
    hold(path)
    report = run(path, FakeClock(), force=True, reason="hotfix 12 for the incident")
    assert states(report)["prod"] == "success"
    git = Git(path)
    subject = git.out("log", "-1", "--format=%s", operands=[HOLDS_REF])
    assert subject == f"override prod for {git.out('rev-parse', 'main')[:12]}: hotfix 12 for the incident"
    body = Git(factory.platform).out("log", "-1", "--format=%B", operands=["promoter/prod"])
    assert (
        "- change control: held by alice since 2025-12-31T23:59:00Z: incident 4711; "
        "passed with --force: hotfix 12 for the incident\n"
    ) in body


def test_a_closed_window_waits_until_it_opens_then_the_next_run_goes_on(factory: ControlPlaneFactory) -> None:
    path = create(factory, windows=WINDOWS)
    clock = FakeClock()  # 00:00 UTC on a Thursday
    report = run(path, clock)
    assert states(report) == {"dev": "success", "prod": "waiting"}
    wait = report.wait
    assert wait is not None and (wait.waiting_for, wait.environment) == ("window", "prod")
    assert wait.next_check == FAKE_EPOCH + 9 * 3600  # the heartbeat is useful from 09:00
    assert wait.message == (
        "prod: outside its change window (outside the allowed hours); opens 2026-01-01 09:00 UTC (2026-01-01T09:00Z)"
    )
    clock.t += 9 * 3600  # the heartbeat at 09:00
    assert states(run(path, clock)) == {"dev": "skipped", "prod": "success"}
    body = Git(factory.platform).out("log", "-1", "--format=%B", operands=["promoter/prod"])
    assert (
        "- change control: merges only inside its change windows (UTC: allowed Mon,Tue,Wed,Thu,Fri 09:00-17:00)"
        in body
    )


def test_waiting_in_the_run_sleeps_until_the_window_opens(factory: ControlPlaneFactory) -> None:
    path = create(factory, windows=WINDOWS)
    clock = FakeClock()
    assert states(run(path, clock, wait="all")) == {"dev": "success", "prod": "success"}
    assert sum(clock.slept) >= 9 * 3600 - 120  # the window's wait, on the injected clock


def test_a_hold_wins_over_a_window_and_both_over_an_approval(factory: ControlPlaneFactory) -> None:
    path = create(factory, windows=WINDOWS)
    hold(path)
    approvals = frozenset({"prod"})
    report = run(path, FakeClock(), approvals=approvals)
    assert report.wait is not None and report.wait.waiting_for == "hold"
    HoldBook(Records(Git(path), HOLDS_REF)).release("prod", None, "bob", FAKE_EPOCH)
    report = run(path, FakeClock(), approvals=approvals)
    assert report.wait is not None and report.wait.waiting_for == "window"


def test_the_scheduling_flow_respects_a_hold(factory: ControlPlaneFactory) -> None:
    path = create(factory)
    clock = FakeClock()
    run(path, clock, wait="all")
    hold(path, "dev")
    factory.commit("dev", {"env.yaml": ENV.replace("REGION: here", "REGION: there")}, "new dev values")
    cp = ControlPlane(path)
    console = Console(quiet=True)
    runtime = build_runtime(cp, cp.main(cp.resolve(None)).pipeline, console, clock=clock)
    opts = Options(wait="none")
    control = ChangeControl(HoldBook(Records(cp.git, HOLDS_REF)), clock, console, opts)
    orchestrator = Orchestrator(cp, runtime.platform, runtime.forge, clock, console, opts, None, control)
    report = orchestrator.schedule("dev")
    assert report.results[0].state == "waiting" and report.wait is not None
    assert report.wait.waiting_for == "hold"


def test_a_hold_label_on_the_promotion_pr_holds_the_environment(factory: ControlPlaneFactory) -> None:
    path = create(factory, merge="manual")
    clock = FakeClock()
    report = run(path, clock)
    assert report.wait is not None and report.wait.waiting_for == "merge"  # the PR waits for a human
    platform = Git(factory.platform)
    head = platform.out("rev-parse", "promoter/prod")
    platform.run("notes", "--ref=promoter-labels", "add", "-m", "promoter/hold", operands=[head])
    report = run(path, clock)
    assert report.wait is not None and report.wait.waiting_for == "hold"
    assert report.wait.message.startswith("prod: held by the label promoter/hold on ")


def test_the_cli_holds_shows_and_releases(factory: ControlPlaneFactory) -> None:
    path = create(factory)
    runner = CliRunner()
    held = runner.invoke(
        cli, ["hold", "prod", "--control-plane", str(path), "--reason", "incident 4711", "--until", "2h"]
    )
    assert held.exit_code == 0, held.output
    assert held.output.startswith("held prod: held by ")
    shown = runner.invoke(cli, ["status", "--control-plane", str(path), "-o", "json"])
    assert shown.exit_code == 0, shown.output
    assert '"held": {' in shown.output and '"reason": "incident 4711"' in shown.output
    released = runner.invoke(cli, ["release", "prod", "--control-plane", str(path)])
    assert released.exit_code == 0 and released.output.startswith("released prod (it was held by ")
    again = runner.invoke(cli, ["release", "prod", "--control-plane", str(path)])
    assert again.output == "prod is not held\n"
    bad = runner.invoke(cli, ["hold", "stage", "--control-plane", str(path), "--reason", "x"])
    assert bad.exit_code == 2 and "stage: no such environment (the Pipeline has dev, qa, prod)" in bad.output
