"""Crash and race: real processes killed with SIGKILL, concurrent promotions, a branch that
moves under a promotion. The platform branch never goes back; nothing is lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from promoter.gitcmd import Git
from tests.support import forkserver
from tests.support.flows import orchestrator
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline, stage
from tests.support.paths import ROOT

PIPELINE = pipeline(
    stage("dev", gates="[{soak: 0.1s}]"),
    stage("qa", gates='[{command: ["true"]}, {soak: 0.1s}]'),
    stage("prod", merge="direct"),
)


def promoter(
    *args: str, kill: tuple[str, int] | None = None, cache: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if cache:
        env["PROMOTER_CACHE_DIR"] = str(cache)
    if kill:
        return forkserver.run("tests.support.killhook", [kill[0], str(kill[1]), *args], cwd=ROOT, env=env)
    return forkserver.run("promoter", args, cwd=ROOT, env=env)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def finished(factory: ControlPlaneFactory, path: Path) -> None:
    x = Git(path).out("rev-parse", "main")
    for env in ("dev", "qa"):
        assert len(git(factory.platform, "rev-list", "--first-parent", "--merges", env).split()) == 1, env
    assert len(git(factory.platform, "rev-list", "--first-parent", "prod").split()) == 2
    for env in ("dev", "qa", "prod"):
        assert f"mainCommit: {x}" in git(factory.platform, "show", f"{env}:.promoter/promotion.yaml")
    states = {k: v.state for k, v in orchestrator(path).forge.get_statuses(x).items()}
    assert states == {f"promoter/{e}": "success" for e in ("dev", "qa", "prod")}


# A real SIGKILL after one side effect of each kind of a clean run of PIPELINE: the first push
# (promoter/dev), the direct push of prod (push 5), the first merge, the first status note, the
# first gate check. What only a real kill leaves behind (the cache lock held, no finally block
# run) is the same at every point of a kind; dying right after every single side effect in turn
# is tested in-process, where it costs no new interpreter (tests/promotion/test_resume.py).
KILL_POINTS = [("push", 1), ("push", 5), ("merge", 1), ("note", 1), ("gate", 1)]


@pytest.mark.parametrize(("kind", "n"), KILL_POINTS, ids=[f"{k}-{n}" for k, n in KILL_POINTS])
def test_sigkill_after_each_side_effect_then_rerun_finishes(
    factory: ControlPlaneFactory, kind: str, n: int
) -> None:
    path = factory.create(
        {"promoter.yaml": PIPELINE, "workloads/app.yaml": WORKLOAD}, platform_branches=("dev", "qa", "prod")
    )
    killed = promoter("promote", "--control-plane", str(path), "--poll-interval", "0.1s", kill=(kind, n))
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    rerun = promoter("promote", "--control-plane", str(path), "--poll-interval", "0.1s")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    finished(factory, path)


def test_an_older_commit_never_replaces_a_newer_one(factory: ControlPlaneFactory) -> None:
    path = factory.create()
    x = Git(path).out("rev-parse", "main")
    y = factory.commit("main", {"workloads/app.yaml": WORKLOAD.replace("./dev", "./dev-y")}, "y", keep=True)
    assert orchestrator(path).promote(y, to="dev").ok
    before = git(factory.platform, "rev-parse", "dev")
    report = orchestrator(path).promote(x, to="dev")
    assert report.results[0].state == "superseded"
    assert "already has the newer main commit" in report.results[0].message
    assert git(factory.platform, "rev-parse", "dev") == before
    assert orchestrator(path).forge.get_statuses(x)["promoter/dev"].state == "error"


def test_branch_moving_under_an_auto_merge_is_planned_again(factory: ControlPlaneFactory) -> None:
    path = factory.create(platform_branches=("dev",))
    orch = orchestrator(path)
    platform = Git(factory.platform)
    original = orch.forge.merge_pr
    moved: list[str] = []

    def someone_pushes_first(*args: object, **kwargs: object) -> str:
        if not moved:  # a human commits to the platform branch between our push and our merge
            base = platform.out("rev-parse", "refs/heads/dev")
            tree = platform.out("mktree", input=b"")
            readme = platform.out("hash-object", "-w", "--stdin", input=b"edited by hand\n")
            tree = platform.out("mktree", input=f"100644 blob {readme}\tREADME.md\n".encode())
            sha = platform.out("commit-tree", tree, "-p", base, "-m", "hand edit")
            platform.run("update-ref", "refs/heads/dev", sha, base)
            moved.append(sha)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    orch.forge.merge_pr = someone_pushes_first  # type: ignore[method-assign]
    report = orch.promote(Git(path).out("rev-parse", "main"), to="dev")
    assert report.ok, report.results[0].message
    files = git(factory.platform, "ls-tree", "-r", "--name-only", "dev").split()
    assert "README.md" in files and "small/app-t/reconciler.yaml" in files
    assert git(factory.platform, "show", "dev:README.md") == "edited by hand\n"
    assert moved[0] in git(factory.platform, "rev-list", "dev").split()


@pytest.mark.parametrize("round_", range(3))
def test_two_processes_race_and_the_branch_ends_at_the_newer(
    factory: ControlPlaneFactory, tmp_path: Path, round_: int
) -> None:
    path = factory.create(platform_branches=("dev",))
    x = Git(path).out("rev-parse", "main")
    y = factory.commit("main", {"workloads/app.yaml": WORKLOAD.replace("./dev", "./dev-y")}, "y", keep=True)
    env = dict(os.environ)
    procs = []
    for commit, cache in ((x, tmp_path / "cache-x"), (y, tmp_path / "cache-y")):
        env["PROMOTER_CACHE_DIR"] = str(cache)
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "promoter",
                    "promote",
                    "--control-plane",
                    str(path),
                    "--commit",
                    commit,
                    "--to",
                    "dev",
                    "--poll-interval",
                    "0.05s",
                ],
                cwd=ROOT,
                env=dict(env),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    assert procs[1].returncode == 0, outputs  # the newer commit always goes through
    history = git(factory.platform, "rev-list", "--first-parent", "dev").split()[:-1]  # minus the seed
    mains = [
        git(factory.platform, "show", f"{sha}:.promoter/promotion.yaml").split("mainCommit: ")[1][:40]
        for sha in history
    ]
    assert mains[0] == y, (mains, outputs)  # it ends at the newer commit ...
    assert x not in mains[: mains.index(y)], outputs  # ... and nothing older came after it
    x_state = orchestrator(path).forge.get_statuses(x).get("promoter/dev")
    if x in mains:
        assert x_state is not None and x_state.state in ("success", "error"), (
            outputs
        )  # done before y, or superseded
    else:
        assert procs[0].returncode == 1 and x_state is not None and x_state.state == "error", outputs
