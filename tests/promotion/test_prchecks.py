"""``prChecks`` (promoter/promotion/prchecks.py): how the required checks are judged, and the
promotion on the local forge, whose PR checks are the statuses posted on the promotion branch's
head with ``promoter report-status`` (nothing else runs checks there). The fake clock advances
only between runs."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.clock import FakeClock
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.forges.base import CheckState, PRCheck
from promoter.gitcmd import Git
from promoter.promotion.flows import Orchestrator
from promoter.promotion.options import Options
from promoter.promotion.prchecks import judge
from promoter.promotion.report import Report
from promoter.runtime import build_runtime
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline, stage


def check(name: str, state: CheckState, detail: str = "", kind: str = "check-run") -> PRCheck:
    return PRCheck(name, kind, state, detail or state, f"https://ci.example.com/{name}")  # type: ignore[arg-type]


# -------------------------------------------------------------- judging


def test_all_with_no_checks_waits_where_ci_starts_them_and_passes_where_nothing_does() -> None:
    assert judge("all", [], runs_checks=True).state == "pending"
    assert judge("all", [], runs_checks=True).why == "PR checks: none reported yet"
    passed = judge("all", [], runs_checks=False)
    assert (passed.state, passed.why) == (
        "success",
        "PR checks: none posted (nothing runs checks on this forge)",
    )
    assert judge("all", None, runs_checks=False).state == "success"  # a forge with no checks at all


def test_all_fails_on_any_failure_and_names_each_with_its_link() -> None:
    verdict = judge(
        "all",
        [
            check("lint", "success"),
            check("kubeconform", "failure"),
            check("policy/opa", "failure", "error", "status"),
        ],
        runs_checks=True,
    )
    assert verdict.state == "failure"
    assert verdict.why == (
        "PR check kubeconform failed (failure): https://ci.example.com/kubeconform; "
        "and policy/opa (error): https://ci.example.com/policy/opa"
    )
    assert [c.name for c in verdict.checks] == ["kubeconform", "policy/opa", "lint"]  # failed first


def test_named_patterns_judge_only_what_they_match_and_wait_for_each_to_match() -> None:
    found = [check("lint", "failure"), check("policy/opa/strict", "success", kind="status")]
    verdict = judge(("kubeconform", "policy/*"), found, runs_checks=True)
    assert (verdict.state, verdict.why) == ("pending", "PR checks pending: kubeconform (not reported yet)")
    assert [c.name for c in verdict.checks] == ["policy/opa/strict"]  # '*' takes '/' too

    found.append(check("kubeconform", "pending", "in_progress"))
    assert judge(("kubeconform", "policy/*"), found, runs_checks=True).why == (
        "PR checks pending: kubeconform (in_progress) https://ci.example.com/kubeconform"
    )
    found[-1] = check("kubeconform", "success")
    passed = judge(("kubeconform", "policy/*"), found, runs_checks=True)
    assert (passed.state, passed.why) == ("success", "PR checks passed: kubeconform, policy/opa/strict")


# -------------------------------------------------------------- on the local forge


def create(factory: ControlPlaneFactory, **dev: str) -> Path:
    text = pipeline(stage("dev", **dev), "qa", "prod")
    return factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})


def run(path: Path, clock: FakeClock) -> Report:
    """One run that does not wait, as a workflow's job makes it: fresh objects each time."""
    cp = ControlPlane(path)
    console = Console(quiet=True)
    runtime = build_runtime(cp, cp.main(cp.resolve(None)).pipeline, console, clock=clock)
    opts = Options(poll_interval=60.0, wait="none")
    orchestrator = Orchestrator(cp, runtime.platform, runtime.forge, clock, console, opts, runtime.routes)
    report = orchestrator.promote(Git(path).out("rev-parse", "main"), "dev")
    assert clock.slept == [], "a run that does not wait slept"
    return report


def report_status(platform: Path, state: str, context: str = "kubeconform") -> None:
    args = ["--repo", str(platform), "--commit", "promoter/dev", "--context", context, "--state", state]
    result = CliRunner().invoke(
        cli, ["report-status", *args, "--target-url", f"https://ci.example.com/{state}"]
    )
    assert result.exit_code == 0, result.output


def test_all_passes_with_a_note_when_nothing_posted_a_check(factory: ControlPlaneFactory) -> None:
    path = create(factory, prChecks="{require: all}")

    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--to", "dev"])

    assert result.exit_code == 0, result.output
    assert "dev: PR checks: none posted (nothing runs checks on this forge)\n" in result.output
    assert "dev: merged " in result.output


def test_a_named_check_waits_across_runs_for_its_status_then_merges(factory: ControlPlaneFactory) -> None:
    path = create(factory, prChecks="{require: [kubeconform]}")
    clock = FakeClock()
    waits, walls = [], []

    walls.append(clock.wall())
    waits.append(run(path, clock))
    report_status(factory.platform, "pending")
    clock.t += 60
    walls.append(clock.wall())
    waits.append(run(path, clock))
    merged_before = Git(factory.platform).commit_of("refs/heads/dev")
    report_status(factory.platform, "success")
    clock.t += 60
    done = run(path, clock)

    whys = ["kubeconform (not reported yet)", "kubeconform (pending) https://ci.example.com/pending"]
    for waiting, why, wall in zip(waits, whys, walls, strict=True):
        assert waiting.state == "waiting" and waiting.wait is not None
        assert (waiting.wait.waiting_for, waiting.wait.environment) == ("merge", "dev")
        assert waiting.wait.message.endswith(f": PR checks pending: {why}")
        assert waiting.wait.next_check == wall + 60  # the heartbeat looks again after the poll interval
    assert merged_before is None  # nothing merged (not even the branch made) while pending
    assert done.state == "done", [r.message for r in done.results]
    assert [(c.name, c.state, c.url) for c in done.results[0].checks] == [
        ("kubeconform", "success", "https://ci.example.com/success")
    ]
    assert Git(factory.platform).commit_of("refs/heads/dev") is not None


def test_a_failed_status_fails_a_manual_environment_before_anyone_merges(
    factory: ControlPlaneFactory,
) -> None:
    path = create(factory, merge="manual", prChecks="{require: all}")
    clock = FakeClock()
    first = run(path, clock)  # nothing posted: the PR waits for a person
    assert first.wait is not None and first.wait.message.startswith("dev: waiting for someone to merge ")
    before = Git(factory.platform).commit_of("refs/heads/dev")
    report_status(factory.platform, "failure", "policy/opa")

    failed = run(path, clock)

    assert failed.state == "failed"
    assert (
        failed.results[0].message
        == "dev: PR check policy/opa failed (failure): https://ci.example.com/failure"
    )
    assert Git(factory.platform).commit_of("refs/heads/dev") == before
    shown = CliRunner().invoke(cli, ["status", "--control-plane", str(path)])
    assert "    PR check policy/opa: failure (status) https://ci.example.com/failure\n" in shown.output
