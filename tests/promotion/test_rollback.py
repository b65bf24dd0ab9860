"""onFailure: rollback, and ``promoter rollback`` by hand, on the local forge."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.gitcmd import Git
from tests.support.flows import orchestrator
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline, stage

# qa's gate fails when the rendered tree at the merged commit mentions BROKEN
PIPELINE = pipeline(
    "dev",
    stage(
        "qa",
        onFailure="rollback",
        merge="MERGE",
        gates="""[{command: {run: '! git -C "$PROMOTER_PLATFORM_REPO" grep -q BROKEN "$PROMOTER_PLATFORM_SHA"', shell: true}}]""",
    ),
    "prod",
)


def tree(platform: Path, ref: str) -> str:
    return subprocess.run(
        ["git", "-C", str(platform), "rev-parse", f"{ref}^{{tree}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def setup(factory: ControlPlaneFactory, merge: str = "auto") -> tuple[Path, str, str]:
    path = factory.create({"promoter.yaml": PIPELINE.replace("MERGE", merge), "workloads/app.yaml": WORKLOAD})
    x = Git(path).out("rev-parse", "main")
    assert orchestrator(path).promote(x).ok
    y = factory.commit(
        "main", {"workloads/app.yaml": WORKLOAD.replace("./qa", "./BROKEN")}, "break qa", keep=True
    )
    return path, x, y


def test_failed_gate_rolls_qa_back_and_leaves_prod_alone(factory: ControlPlaneFactory) -> None:
    path, x, y = setup(factory)
    good_qa, prod = tree(factory.platform, "qa"), tree(factory.platform, "prod")
    report = orchestrator(path).promote(y)
    assert [r.state for r in report.results] == ["noop", "failure"]  # y changes nothing in dev
    message = report.results[1].message
    assert "gate command" in message and f"rolled back to {x[:12]} with " in message
    assert tree(factory.platform, "qa") == good_qa  # the tree of the last good promotion
    assert tree(factory.platform, "prod") == prod
    statuses = orchestrator(path).forge.get_statuses(y)
    assert statuses["promoter/qa"].state == "failure" and "rolled back" in statuses["promoter/qa"].description
    assert "promoter/prod" not in statuses
    # held: the next automatic run does not promote y again
    refs = factory.refs()
    again = orchestrator(path).promote(y)
    assert again.results[-1].state == "held" and factory.refs() == refs


def test_direct_rollback_is_a_commit_on_the_branch(factory: ControlPlaneFactory) -> None:
    path, x, y = setup(factory, merge="direct")
    good_qa = tree(factory.platform, "qa")
    report = orchestrator(path).promote(y)
    assert report.results[1].state == "failure"
    assert tree(factory.platform, "qa") == good_qa
    log = Git(factory.platform).out("log", "-1", "--format=%s", "qa")
    assert log == f"Roll back qa to {x[:7]}: {y[:12]} failed its gates"


def test_rollback_by_hand(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    x = Git(path).out("rev-parse", "main")
    assert orchestrator(path).promote(x).ok
    x_prod = tree(factory.platform, "prod")
    z = factory.commit(
        "main", {"workloads/app.yaml": WORKLOAD.replace("./prod", "./prod-v2")}, "v2", keep=True
    )
    assert orchestrator(path).promote(z).ok
    assert tree(factory.platform, "prod") != x_prod
    result = CliRunner().invoke(
        cli, ["rollback", "--control-plane", str(path), "--env", "prod", "--poll-interval", "0.1s"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].startswith(f"prod: rolling back to main {x[:12]} (platform ")
    assert tree(factory.platform, "prod") == x_prod
    assert orchestrator(path).forge.get_statuses(z)["promoter/prod"].state == "failure"
    # and forward again, by hand, to z with --to
    result = CliRunner().invoke(
        cli, ["rollback", "--control-plane", str(path), "--env", "prod", "--to", z, "--poll-interval", "0.1s"]
    )
    assert result.exit_code == 0, result.output
    assert f"rolled back to {z[:12]}" in result.output


def test_rollback_dry_run_says_what_it_would_restore_and_pushes_nothing(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    x = Git(path).out("rev-parse", "main")
    assert orchestrator(path).promote(x).ok
    z = factory.commit(
        "main", {"workloads/app.yaml": WORKLOAD.replace("./prod", "./prod-v2")}, "v2", keep=True
    )
    assert orchestrator(path).promote(z).ok
    refs = factory.refs()
    head = Git(factory.platform).out("rev-parse", "prod")
    args = ["rollback", "--control-plane", str(path), "--env", "prod", "--dry-run"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(
        f"prod: would roll back prod@{head[:12]} (main {z[:12]}) to main {x[:12]} (platform "
    )
    assert lines[0].endswith("merged by policy auto: 2 files change")
    assert lines[1:] == [
        "  .promoter/promotion.yaml",
        "  small/app-t3/reconciler.yaml",
        "dry run: nothing pushed",
    ]
    as_json = CliRunner().invoke(cli, [*args, "-o", "json"])
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.stdout)
    assert data["platformCommit"] == head and data["deployedMainCommit"] == z
    assert data["target"]["mainCommit"] == x and data["files"] == [
        ".promoter/promotion.yaml",
        "small/app-t3/reconciler.yaml",
    ]
    assert factory.refs() == refs
    assert orchestrator(path).forge.get_statuses(z)["promoter/prod"].state == "success"


def test_rollback_with_nothing_to_go_back_to(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    assert orchestrator(path).promote(Git(path).out("rev-parse", "main"), to="dev").ok
    result = CliRunner().invoke(cli, ["rollback", "--control-plane", str(path), "--env", "dev"])
    assert (result.exit_code, result.output.splitlines()[-1]) == (
        1,
        "error: dev: no earlier healthy promotion to roll back to",
    )
    result = CliRunner().invoke(
        cli, ["rollback", "--control-plane", str(path), "--env", "dev", "--to", "nope"]
    )
    assert (
        result.exit_code == 2
        and "--to nope: neither a commit of dev nor a main commit promoted to dev" in result.output
    )
