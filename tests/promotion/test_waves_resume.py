"""Waves and crashes: the run dies right after each side effect of an environment rolled out in
waves (in process, and by a real SIGKILL); a rerun continues at the right wave, merges each wave
exactly once and ends with true statuses. And a newer main commit arriving during wave 1."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

import promoter.promotion.gating as gating_module
from promoter.gates import build_gate
from promoter.gitcmd import Git
from tests.promotion.test_resume import Died, instrument
from tests.support import forkserver
from tests.support.flows import orchestrator
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline, stage
from tests.support.paths import ROOT
from tests.support.waves import QA_TYPES, first_parent_merges, folder_commits

WAVES = (
    '\n        - {name: canary, clusterTypes: [edge], bake: 5m, gates: [{command: ["true"]}]}'
    '\n        - {name: fleet, selector: {matchLabels: {size: large}}, gates: [{command: ["true"]}]}'
)
# one environment, so that every side effect counted is one of its waves
QA_ONLY = (
    WORKLOAD.split("    - {name: t,")[0]
    + "    - {name: t2"
    + WORKLOAD.split("    - {name: t2")[1].split("\n")[0]
    + "\n"
)
PIPELINE = pipeline(stage("qa", gates='[{command: ["true"]}]', waves=WAVES))
# the same with no bake, for runs on the real clock
QUICK = PIPELINE.replace("bake: 5m", "bake: 0s")


def make(root: Path, text: str = PIPELINE) -> tuple[ControlPlaneFactory, Path]:
    factory = ControlPlaneFactory(root)
    root.mkdir(exist_ok=True)
    path = factory.create(
        {"promoter.yaml": text, "workloads/app.yaml": QA_ONLY},
        {"qa": {"env.yaml": QA_TYPES}},
        platform_branches=("qa",),
    )
    return factory, path


def run(path: Path, crash_at: tuple[str, int] | None) -> Counter[str]:
    orch = orchestrator(path)
    with pytest.MonkeyPatch.context() as monkeypatch:
        counts = instrument(orch, crash_at, monkeypatch)
        report = orch.promote(Git(path).out("rev-parse", "main"))
    assert crash_at is None, f"expected to die at {crash_at}"
    assert report.ok, [r.message for r in report.results]
    return counts


def check_finished(factory: ControlPlaneFactory, path: Path) -> None:
    x = Git(path).out("rev-parse", "main")
    assert len(first_parent_merges(factory.platform, "qa")) == 3  # one merge per wave, no more
    assert folder_commits(factory) == {"edge": x, "large": x, "small": x}
    statuses = orchestrator(path).forge.get_statuses(x)
    assert statuses["promoter/qa"].state == "success", statuses


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Counter[str]:
    factory, path = make(tmp_path_factory.mktemp("baseline") / "repos")
    counts = run(path, None)
    check_finished(factory, path)
    return counts


@pytest.mark.parametrize("kind", ["push", "merge", "status", "gate"])
def test_dies_after_each_side_effect_of_a_wave_and_a_rerun_finishes(
    kind: str, baseline: Counter[str], tmp_path: Path
) -> None:
    assert baseline[kind] >= 3, baseline
    for n in range(1, baseline[kind] + 1):
        factory, path = make(tmp_path / f"{kind}-{n}")
        with pytest.raises(Died):
            run(path, (kind, n))
        run(path, None)
        check_finished(factory, path)


def _killed(path: Path, kind: str, n: int) -> subprocess.CompletedProcess[str]:
    args = ["promote", "--control-plane", str(path), "--poll-interval", "0.05s"]
    return forkserver.run("tests.support.killhook", [kind, str(n), *args], cwd=ROOT)


@pytest.mark.parametrize(("kind", "n"), [("push", 3), ("gate", 2)])
def test_sigkill_inside_wave_two_then_rerun_continues_there(tmp_path: Path, kind: str, n: int) -> None:
    """A real SIGKILL in the middle of the second wave (or just after the first passed)."""
    factory, path = make(tmp_path / "repos", QUICK)
    died = _killed(path, kind, n)
    assert died.returncode == -9, died.stderr
    rerun = _killed(path, "none", 0)
    assert rerun.returncode == 0, rerun.stderr + rerun.stdout
    assert "qa: wave canary (1/3)" in rerun.stdout + rerun.stderr
    check_finished(factory, path)


def test_a_newer_main_commit_during_wave_one_supersedes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    factory, path = make(tmp_path / "repos")
    x = Git(path).out("rev-parse", "main")
    y = factory.commit("main", {"workloads/app.yaml": QA_ONLY.replace("./qa", "./qa-v2")}, "v2", keep=True)
    state = {"nested": False}

    def build(spec: Any) -> Any:
        gate = build_gate(spec)
        check = gate.check

        def during_canary(ctx: Any) -> Any:
            if ctx.commit == x and ctx.cluster_types == ("edge",) and not state["nested"]:
                state["nested"] = True  # y is pushed to main and promoted while x's canary bakes
                assert orchestrator(path).promote(y).ok
            return check(ctx)

        gate.check = during_canary  # type: ignore[method-assign]
        return gate

    monkeypatch.setattr(gating_module, "build_gate", build)
    report = orchestrator(path).promote(x)
    assert state["nested"]
    result = report.results[0]
    assert result.state == "superseded" and "already has the newer main commit" in result.message
    assert [(w.name, w.state) for w in result.waves] == [("canary", "success"), ("fleet", "superseded")]
    assert folder_commits(factory) == {"edge": y, "large": y, "small": y}
    statuses = orchestrator(path).forge.get_statuses(x)
    assert statuses["promoter/qa"].state == "error"
    assert orchestrator(path).forge.get_statuses(y)["promoter/qa"].state == "success"
    # x never reached the fleet: no commit of qa has x in the large or small folders
    platform = Git(factory.platform)
    for sha in platform.out("rev-list", "--first-parent", "qa").split():
        text = platform.run("show", f"{sha}:.promoter/promotion.yaml", check=False).stdout.decode()
        if "folders:" in text:
            folders = yaml.safe_load(text)["folders"]
            assert folders["large"]["mainCommit"] != x and folders["small"]["mainCommit"] != x
