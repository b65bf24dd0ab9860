"""Resume: the run dies right after each side effect in turn; a rerun finishes the job with
exactly one merge per environment and true statuses."""

from __future__ import annotations

import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import promoter.promotion.gating as orchestrator_module
from promoter.gates import build_gate
from promoter.gitcmd import Git
from promoter.promotion.flows import Orchestrator
from tests.support.flows import orchestrator
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline, stage

PIPELINE = pipeline(
    stage("dev", gates="[{soak: 30s}]"),
    stage("qa", gates='[{soak: 30s}, {command: ["true"]}]'),
    stage("prod", merge="direct", gates="[{soak: 30s}]"),
)


class Died(BaseException):
    """Stands for SIGKILL: nothing in the promoter may catch it."""


class Counts(Counter[str]):
    """Side effects by kind, and which gate each gate check was of (the n-th gate built)."""

    def __init__(self) -> None:
        super().__init__()
        self.gates_built: list[int] = []
        self.gate_of: list[int] = []

    def points(self, kind: str) -> list[int]:
        """The n of each distinct point to die at. Every push, merge and status is its own point;
        of a gate's repeated checks (a soak polls many times) the first and the last are: dying
        at any check in between leaves the same state behind as dying at the first."""
        if kind != "gate":
            return list(range(1, self[kind] + 1))
        found = set()
        for n, serial in enumerate(self.gate_of, start=1):
            if n == 1 or self.gate_of[n - 2] != serial:
                found.add(n)
            if n == len(self.gate_of) or self.gate_of[n] != serial:
                found.add(n)
        return sorted(found)


def instrument(
    orch: Orchestrator, crash_at: tuple[str, int] | None, monkeypatch: pytest.MonkeyPatch
) -> Counts:
    """Count side effects by kind; die right after the n-th one of ``crash_at``'s kind."""
    counts = Counts()

    def wrap(kind: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            value = fn(*args, **kwargs)
            counts[kind] += 1
            if crash_at == (kind, counts[kind]):
                raise Died(f"after {kind} #{counts[kind]}")
            return value

        return wrapped

    monkeypatch.setattr(orch.platform, "push", wrap("push", orch.platform.push))
    monkeypatch.setattr(orch.forge, "merge_pr", wrap("merge", orch.forge.merge_pr))
    monkeypatch.setattr(orch.forge, "set_status", wrap("status", orch.forge.set_status))

    def build(spec: Any) -> Any:
        gate = build_gate(spec)
        checked = wrap("gate", gate.check)
        serial = len(counts.gates_built)
        counts.gates_built.append(serial)

        def check(*args: Any, **kwargs: Any) -> Any:
            counts.gate_of.append(serial)
            return checked(*args, **kwargs)

        gate.check = check  # type: ignore[method-assign]
        return gate

    monkeypatch.setattr(orchestrator_module, "build_gate", build)
    return counts


def run(path: Path, crash_at: tuple[str, int] | None) -> Counts:
    orch = orchestrator(path)
    with pytest.MonkeyPatch.context() as monkeypatch:
        counts = instrument(orch, crash_at, monkeypatch)
        report = orch.promote(Git(path).out("rev-parse", "main"))
    assert crash_at is None, f"expected to die at {crash_at}"
    assert report.ok, [r.message for r in report.results]
    return counts


def check_finished(factory: ControlPlaneFactory, path: Path) -> None:
    x = Git(path).out("rev-parse", "main")
    platform = str(factory.platform)

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", platform, *args], capture_output=True, text=True, check=True
        ).stdout

    for env in ("dev", "qa"):
        assert len(git("rev-list", "--first-parent", "--merges", env).split()) == 1, env
    assert len(git("rev-list", "--first-parent", "prod").split()) == 2  # seed + one direct push
    for env in ("dev", "qa", "prod"):
        assert f"mainCommit: {x}" in git("show", f"{env}:.promoter/promotion.yaml")
    statuses = orchestrator(path).forge.get_statuses(x)
    assert {k: v.state for k, v in statuses.items()} == {
        f"promoter/{e}": "success" for e in ("dev", "qa", "prod")
    }


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Counts:
    factory = ControlPlaneFactory(tmp_path_factory.mktemp("baseline"))
    path = factory.create(
        {"promoter.yaml": PIPELINE, "workloads/app.yaml": WORKLOAD}, platform_branches=("dev", "qa", "prod")
    )
    counts = run(path, None)
    check_finished(factory, path)
    return counts


@pytest.mark.parametrize("kind", ["push", "merge", "status", "gate"])
def test_dies_after_each_side_effect_and_a_rerun_finishes(
    kind: str, baseline: Counts, tmp_path: Path
) -> None:
    assert baseline[kind] >= 2, baseline
    for n in baseline.points(kind):
        factory = ControlPlaneFactory(tmp_path / f"{kind}-{n}")
        factory.root.mkdir()
        path = factory.create(
            {"promoter.yaml": PIPELINE, "workloads/app.yaml": WORKLOAD},
            platform_branches=("dev", "qa", "prod"),
        )
        with pytest.raises(Died):
            run(path, (kind, n))
        run(path, None)
        check_finished(factory, path)
