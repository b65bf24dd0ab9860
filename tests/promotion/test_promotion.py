"""The promotion and scheduling flows on the local forge, with real git."""

from __future__ import annotations

import contextlib
import json
import subprocess
from pathlib import Path

import yaml
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.clock import FakeClock
from promoter.demos.promotion import build_repos
from promoter.gitcmd import Git
from tests.support.flows import orchestrator, pipeline
from tests.support.helpers import ENV, WORKLOAD, ControlPlaneFactory, stage
from tests.support.helpers import pipeline as build_pipeline


def _statuses(path: Path, commit: str | None = None) -> dict[str, str]:
    args = ["status", "--control-plane", str(path), "--output", "json"] + (
        ["--commit", commit] if commit else []
    )
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return {row["environment"]: row["state"] for row in json.loads(result.output)["environments"]}


def _merges(platform: Path, branch: str) -> list[str]:
    """Merge commits on the first-parent line of a platform branch."""
    out = subprocess.run(
        ["git", "-C", str(platform), "rev-list", "--first-parent", "--merges", branch],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def test_whole_sample_promotion_through_the_cli(tmp_path: Path, fake_time: FakeClock) -> None:
    control_plane, platform = build_repos(tmp_path)
    x = Git(control_plane).out("rev-parse", "main")
    result = CliRunner().invoke(
        cli,
        [
            "promote",
            "--control-plane",
            str(control_plane),
            "--poll-interval",
            "0.1s",
            "--progress-interval",
            "0.5s",
        ],
    )
    assert result.exit_code == 0, result.output
    # prod rolls out in two waves: the edge canary first, then the fleet
    assert "prod: 2 waves: canary (edge), fleet (east-large, west-small)" in result.output
    assert (
        "prod: wave canary (1/2): rendered 3 files for 4 assignments on 1 cluster types (+3 ~0 -0)"
        in result.output
    )
    assert (
        "prod: wave fleet (2/2): rendered 9 files for 4 assignments on 2 cluster types (+9 ~0 -0)"
        in result.output
    )
    assert "prod: wave canary (1/2): passed; baking 2.0s before the next wave" in result.output
    for env in ("dev", "qa", "prod"):
        if env != "prod":
            assert (
                f"{env}: rendered 12 files for 4 assignments on 3 cluster types (+12 ~0 -0)" in result.output
            )
        fleet = "prod: wave fleet (2/2)" if env == "prod" else env
        assert (
            f"{fleet}: gate command promoter check-platform: success (ok: 17 manifests in 4 folders"
            in result.output
        )
        prov = yaml.safe_load(Git(platform).out("show", f"{env}:.promoter/promotion.yaml"))
        assert prov["mainCommit"] == x and prov["environment"] == env
        assert prov["environmentCommit"] == Git(control_plane).out("rev-parse", env)
        assert Git(platform).out("show", f"{env}:README.md").startswith("Rendered by promoter")  # kept
        assert len(_merges(platform, env)) == (2 if env == "prod" else 1)
    assert _statuses(control_plane) == {"dev": "success", "qa": "success", "prod": "success"}
    # the statuses are git notes of the control plane: readable with git alone
    notes = Git(control_plane).out("notes", "--ref=promoter", "show", x)
    assert [json.loads(line)["context"] for line in notes.splitlines() if line][-1] == "promoter/prod"
    # the summary table
    assert result.output.splitlines()[-6].split() == [
        "environment",
        "result",
        "files",
        "changes",
        "merge",
        "commit",
        "gates",
    ]
    assert result.output.splitlines()[-3].startswith("prod          success          12  +12 ~0 -0")
    assert result.output.splitlines()[-2].startswith("  canary      success              +3 ~0 -0 ")
    assert result.output.splitlines()[-1].startswith("  fleet       success              +9 ~0 -0 ")


def test_rerun_is_a_noop_and_new_commit_without_render_changes_makes_no_pr(
    factory: ControlPlaneFactory,
) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    first = orchestrator(path).promote(Git(path).out("rev-parse", "main"))
    assert [r.state for r in first.results] == ["success"] * 3
    heads = factory.refs()
    again = orchestrator(path).promote(Git(path).out("rev-parse", "main"))
    assert [r.state for r in again.results] == ["skipped"] * 3
    y = factory.commit("main", {"README.md": "docs only\n"}, "docs", keep=True)
    third = orchestrator(path).promote(y)
    assert [r.state for r in third.results] == ["noop"] * 3
    moved = {k: v for k, v in factory.refs().items() if heads.get(k) != v}
    assert set(moved) == {"control-plane:refs/heads/main", "control-plane:refs/notes/promoter"}
    assert _statuses(path, y) == {"dev": "success", "qa": "success", "prod": "success"}


def test_stale_files_removed_dot_folders_and_other_files_kept(factory: ControlPlaneFactory) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    factory.commit_platform(
        "dev", {"README.md": "x\n", ".github/CODEOWNERS": "* @o\n", "notes/keep.txt": "k\n"}
    )
    assert orchestrator(path).promote(Git(path).out("rev-parse", "main")).ok
    assert "small/app-t/reconciler.yaml" in factory.platform_files("dev")
    # the target moves to a new cluster type; the old folder goes, everything else stays
    env = ENV.replace("name: small", "name: tiny")
    factory.commit("dev", {"env.yaml": env}, "rename cluster type")
    report = orchestrator(path, allow_removal=True).schedule("dev")  # small's clusters lose app-t
    assert report.ok and report.results[0].state == "success"
    assert factory.platform_files("dev") == [
        ".github/CODEOWNERS",
        ".promoter/promotion.yaml",
        "README.md",
        "notes/keep.txt",
        "tiny/app-t/namespace.yaml",
        "tiny/app-t/platform-config.yaml",
        "tiny/app-t/reconciler.yaml",
    ]


def test_scheduling_flow_rerenders_one_environment_with_last_promoted_commit(
    factory: ControlPlaneFactory,
) -> None:
    path = factory.create()
    x = Git(path).out("rev-parse", "main")
    assert orchestrator(path).promote(x).ok
    factory.commit(
        "main", {"workloads/app.yaml": WORKLOAD.replace("./qa", "./qa-next")}, "not yet promoted", keep=True
    )
    before = factory.refs()
    factory.commit("qa", {"env.yaml": ENV.replace("REGION: here", "REGION: there")}, "qa config")
    report = orchestrator(path).schedule("qa")
    assert report.flow == "scheduling" and report.main_commit == x and report.ok
    config = factory.platform_file("qa", "small/app-t2/platform-config.yaml")
    assert config is not None and "REGION: there" in config
    assert './qa"' in (factory.platform_file("qa", "small/app-t2/reconciler.yaml") or "")  # still main at x
    after = factory.refs()
    changed = {k for k in after if after[k] != before.get(k)}
    assert changed == {
        "control-plane:refs/heads/qa",
        "control-plane:refs/notes/promoter",
        "platform.git:refs/heads/qa",
        "platform.git:refs/heads/promoter/qa",
    }


def test_manual_merge_waits_for_a_human(factory: ControlPlaneFactory) -> None:
    path = factory.create({"promoter.yaml": pipeline(prod="manual"), "workloads/app.yaml": WORKLOAD})
    clock = FakeClock()
    orch = orchestrator(path, clock)
    platform = Git(factory.platform)
    merged: list[str] = []

    def human_merges(seconds: float) -> None:
        FakeClock.sleep(clock, seconds)
        head = platform.commit_of("refs/heads/promoter/prod")
        if head and not merged and clock.now() > 1300:
            base = platform.commit_of("refs/heads/prod")
            tree = platform.out("rev-parse", f"{head}^{{tree}}")
            sha = platform.out("commit-tree", tree, "-p", base or head, "-p", head, "-m", "merged by a human")
            platform.run("update-ref", "refs/heads/prod", sha)
            merged.append(sha)

    clock.sleep = human_merges  # type: ignore[method-assign]
    report = orch.promote(Git(path).out("rev-parse", "main"))
    assert report.ok, report.results[-1].message
    assert report.results[-1].merge_sha == merged[0]
    assert _statuses(path) == {"dev": "success", "qa": "success", "prod": "success"}


def test_manual_merge_times_out_and_fails(factory: ControlPlaneFactory) -> None:
    path = factory.create({"promoter.yaml": pipeline(qa="manual"), "workloads/app.yaml": WORKLOAD})
    report = orchestrator(path).promote(Git(path).out("rev-parse", "main"))
    assert [r.state for r in report.results] == ["success", "failure"]
    assert "was not merged within 10m" in report.results[1].message
    assert _statuses(path) == {"dev": "success", "qa": "failure", "prod": "none"}
    assert "prod" not in {
        p.split(":")[1].removeprefix("refs/heads/") for p in factory.refs() if p.startswith("platform")
    }


def test_failed_gate_stops_and_holds_the_commit(factory: ControlPlaneFactory) -> None:
    failing = pipeline().replace("gates: [{soak: 30s}]", "gates: []")
    failing = failing.replace(
        "gates: [{soak: 1m}]\n    - name: prod",
        "gates: [{command: ['sh', '-c', 'echo broken >&2; exit 3']}]\n    - name: prod",
    )
    path = factory.create({"promoter.yaml": failing, "workloads/app.yaml": WORKLOAD})
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--poll-interval", "0.1s"])
    assert result.exit_code == 1
    assert "qa: FAILED: gate command sh -c 'echo broken >&2; exit 3' failed: exit 3: broken" in result.output
    assert _statuses(path) == {"dev": "success", "qa": "failure", "prod": "none"}
    refs = factory.refs()
    again = CliRunner().invoke(cli, ["promote", "--control-plane", str(path)])
    assert again.exit_code == 1 and "held, use --force to retry" in again.output
    assert factory.refs() == refs  # nothing pushed, no status rewritten


def test_force_to_promotes_only_that_environment(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--to", "prod", "--force"])
    assert result.exit_code == 0, result.output
    assert _statuses(path) == {"dev": "none", "qa": "none", "prod": "success"}


def test_guard_requires_previous_environment(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    x = Git(path).out("rev-parse", "main")
    orch = orchestrator(path)
    orch.forge.set_status(x, "promoter/dev", "failure", "broken")
    report = orchestrator(path, force=False).promote(x, to="qa")
    assert report.results[0].state == "held"
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--to", "qa", "--force"])
    assert result.exit_code == 0 and _statuses(path)["qa"] == "success"


def test_dry_run_changes_nothing(factory: ControlPlaneFactory) -> None:
    path = factory.create(platform_branches=("dev",))
    refs = factory.refs()
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "dev: dry run: would push promoter/dev and merge into dev (auto)" in result.output
    assert factory.refs() == refs


def test_supersede_marks_the_older_pending_promotion(factory: ControlPlaneFactory) -> None:
    path = factory.create({"promoter.yaml": pipeline(qa="manual"), "workloads/app.yaml": WORKLOAD})
    x = Git(path).out("rev-parse", "main")
    assert orchestrator(path).promote(x, to="dev").ok

    class Killed(BaseException):
        pass

    clock = FakeClock()

    def killed(seconds: float) -> None:
        raise Killed

    clock.sleep = killed  # type: ignore[method-assign]
    with contextlib.suppress(Killed):
        orchestrator(path, clock).promote(x, to="qa")
    assert _statuses(path, x)["qa"] == "pending"
    y = factory.commit("main", {"workloads/app.yaml": WORKLOAD.replace("./qa", "./qa2")}, "newer", keep=True)
    assert orchestrator(path).promote(y, to="dev").ok
    report = orchestrator(path).promote(y, to="qa")
    assert report.results[-1].state == "failure"  # manual merge never came
    assert _statuses(path, x)["qa"] == "error"
    assert (
        "superseded by"
        in json.loads(
            CliRunner()
            .invoke(cli, ["status", "--control-plane", str(path), "--commit", x, "--output", "json"])
            .output
        )["environments"][1]["description"]
    )


def test_environments_sharing_a_branch_in_folders(factory: ControlPlaneFactory) -> None:
    shared = build_pipeline(
        stage("dev", gitops="{branch: main, path: envs/dev}"),
        stage("qa", gitops="{branch: main, path: envs/qa}"),
        stage("prod", gitops="{branch: main, path: ./envs/prod/}", merge="direct"),
    )
    path = factory.create(
        {"promoter.yaml": shared, "workloads/app.yaml": WORKLOAD}, platform_branches=("main",)
    )
    assert orchestrator(path).promote(Git(path).out("rev-parse", "main")).ok
    files = factory.platform_files("main")
    assert "README.md" in files and "envs/dev/.promoter/promotion.yaml" in files
    assert (
        "envs/qa/small/app-t2/reconciler.yaml" in files and "envs/prod/small/app-t3/reconciler.yaml" in files
    )
    assert len(_merges(factory.platform, "main")) == 2  # prod was pushed directly


def test_dry_run_goes_past_environments_without_changes(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    assert orchestrator(path).promote(Git(path).out("rev-parse", "main"), to="dev").ok
    y = factory.commit("main", {"README.md": "docs only\n"}, "docs", keep=True)
    refs = factory.refs()
    report = orchestrator(path, dry_run=True).promote(y)
    assert [r.state for r in report.results] == ["noop", "dry-run"] and report.ok
    assert factory.refs() == refs
