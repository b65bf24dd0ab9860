"""``promoter rehearse``: one run of promote.yml on a laptop against the local forge, as init
writes it: the advance job (``--wait none``), then for an environment held for approval the
approval and approved jobs, each step the promoter in a process of its own in GITHUB_ACTIONS
mode; a failed job stops the ones after it; a GitHub platform repo is refused (a rehearsal never
writes there); the next event is the next rehearsal."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.forges.notes import NoteStatuses
from promoter.ghactions.rehearsal import read_outputs
from promoter.gitcmd import Git
from tests.promotion.test_graph import create
from tests.support.helpers import ControlPlaneFactory, pipeline, stage


def rehearse(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["rehearse", *args])
    return result.exit_code, result.output


BASE = "promoter promote --main-branch=main --poll-interval=5s --progress-interval=30s --wait=none"


def test_one_run_advances_asks_for_prod_once_and_the_approved_job_starts_it(
    factory: ControlPlaneFactory, tmp_path: Path
) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    runner = tmp_path / "runner"
    code, output = rehearse("--control-plane", str(path), "--keep", str(runner))
    assert code == 0, output
    main = Git(path).out("rev-parse", "main")
    advance = read_outputs(runner / "advance.output")
    assert (advance["state"], advance["waiting-for"], advance["approval-requested"]) == (
        "waiting",
        "approval",
        "true",
    )
    steps = [line for line in output.splitlines() if line.startswith("rehearse: job ")]
    assert steps == [
        f"rehearse: job advance, step Promote, as far as it goes without waiting: {BASE} --hold-for-approval=prod",
        "rehearse: job approval: in GitHub, the required reviewers of the Environment prod approve here",
        f"rehearse: job approved, step Promote prod (approved): {BASE} --commit {main} "
        "--hold-for-approval=prod --approved=prod",
    ]
    statuses = NoteStatuses(Git(path)).latest(main)
    assert {env: statuses[f"promoter/{env}"].state for env in ("dev", "qa", "prod")} == dict.fromkeys(
        ("dev", "qa", "prod"), "success"
    )
    assert "| prod |" in (runner / "approved.summary.md").read_text()  # the step summary, as Actions shows it
    assert output.splitlines()[-1].startswith(f"rehearse: the run ends done (kept in {runner})")
    code, output = rehearse("--control-plane", str(path), "--event", "schedule")  # a heartbeat after it
    assert code == 0 and "promote.yml for the heartbeat" in output and "the run ends done" in output
    assert "job approval" not in output


def test_a_failed_job_stops_the_ones_after_it(factory: ControlPlaneFactory) -> None:
    failing = pipeline("dev", stage("qa", gates='[{command: ["false"]}]'), "prod")
    path = factory.create(main={"promoter.yaml": failing}, platform_branches=("dev", "qa", "prod"))
    result = CliRunner().invoke(cli, ["rehearse", "--control-plane", str(path)])
    assert result.exit_code == 1
    assert "rehearse: job advance failed (exit 1); the jobs after it do not run" in result.stderr
    assert "job approval" not in result.output
    assert not [f for f in factory.platform_files("prod") if f.startswith("small/")]  # nothing rendered there
    statuses = NoteStatuses(Git(path)).latest(Git(path).out("rev-parse", "main"))
    assert "promoter/prod" not in statuses and statuses["promoter/qa"].state == "failure"
    again = CliRunner().invoke(
        cli, ["rehearse", "--control-plane", str(path), "--event", "repository_dispatch"]
    )
    assert again.exit_code == 0 and "the run ends held" in again.output  # a wake-up of a held commit


def test_the_scheduling_flow_and_a_github_platform_repo(factory: ControlPlaneFactory) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    code, output = rehearse("--control-plane", str(path), "--to", "dev")
    assert code == 0, output
    code, output = rehearse("--control-plane", str(path), "--schedule", "dev", "--dry-run")
    assert code == 0, output
    assert (
        "step Render and diff: promoter diff --no-exit-code" in output
        and "--env=dev --deployed-main" in output
    )
    code, output = rehearse("--control-plane", str(path), "--schedule", "dev")
    assert code == 0, output
    assert (
        f"step Promote, as far as it goes without waiting: {BASE} --schedule dev --hold-for-approval=prod"
        in output
    )
    remote = factory.create(
        main={"promoter.yaml": pipeline("dev", platform="{url: https://github.com/acme/platform}")}
    )
    code, output = rehearse("--control-plane", str(remote))
    assert code == 2
    assert output.startswith("error: dev: the platform repo https://github.com/acme/platform is not local")


def test_step_outputs_are_read_as_the_runner_writes_them(tmp_path: Path) -> None:
    path = tmp_path / "output"
    path.write_text("commit=abc\ndiff<<EOF_1\nline one\nline=two\nEOF_1\nok=true\n")
    assert read_outputs(path) == {"commit": "abc", "diff": "line one\nline=two", "ok": "true"}
    assert read_outputs(tmp_path / "none") == {}


def test_a_graph_is_rehearsed_as_init_writes_it_every_leaf_held_for_approval(
    factory: ControlPlaneFactory,
) -> None:
    """``promoter init`` holds every environment nothing follows (prod-eu, prod-us and global-edge
    of a fan-out), and so does the rehearsal: the first leaf reached is asked for, the others wait
    their turn."""
    leaves = ("prod-eu", "prod-us", "global-edge")
    text = pipeline("staging", *(stage(env, follows="[staging]") for env in leaves))
    path = create(factory, text)
    code, output = rehearse("--control-plane", str(path))
    assert code == 0, output
    assert f"{BASE} --hold-for-approval=prod-eu,prod-us,global-edge" in output
    assert "the required reviewers of the Environment prod-eu approve here" in output
