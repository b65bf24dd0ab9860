"""The gap between waves: from a wave's gates passing to the next wave's PR being opened, which
must stay under the poll interval plus 2 s (DESIGN section 11).

Measured on the local forge on the wall clock, and on the fake GitHub of the tests, where the
promoter's own spacing of GitHub writes (``forges.github.policy``) passes on a fake clock: there
the gap is the fake clock's advance plus the wall time the promoter spent. Network latency is
not in either figure."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

LOCAL_POLL_S = 1.0
GITHUB_POLL_S = 5.0
SLACK_S = 2.0


class Gap:
    """Times of the first wave's gates passing and of the next PR being opened."""

    def __init__(self, now: Callable[[], float]) -> None:
        self.now = now
        self.passed: tuple[float, float] | None = None  # (clock, wall)
        self.opened: tuple[float, float] | None = None

    def seconds(self) -> float:
        if self.passed is None or self.opened is None:
            raise RuntimeError("the benchmark saw no wave pass and no next PR open")
        return (self.opened[0] - self.passed[0]) + (self.opened[1] - self.passed[1])

    def stamp(self) -> tuple[float, float]:
        return self.now(), time.perf_counter()


@contextmanager
def watched(forge_class: Any, gap: Gap) -> Iterator[None]:
    """Record the gap around ``Gating.check`` (the canary's) and ``forge_class.open_pr``."""
    import pytest

    from promoter.promotion.gating import Gating

    check, open_pr = Gating.check, forge_class.open_pr

    def timed_check(self: Any, main: Any, env: Any, step: Any, *args: Any, **kwargs: Any) -> Any:
        outcomes = check(self, main, env, step, *args, **kwargs)
        if step.name == "canary":
            gap.passed = gap.stamp()
        return outcomes

    def timed_open(self: Any, *args: Any) -> Any:
        pr = open_pr(self, *args)
        if gap.passed is not None and gap.opened is None:
            gap.opened = gap.stamp()
        return pr

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Gating, "check", timed_check)
        patch.setattr(forge_class, "open_pr", timed_open)
        yield


def _pipeline(platform: str) -> str:
    from tests.support.waves import waved_pipeline

    text = waved_pipeline(canary_gates='[{command: ["true"]}]', fleet_gates="[]", platform=platform)
    return text.replace("[{soak: 10s}]", "[]")


def local(root: Path) -> float:
    from promoter.clock import RealClock
    from promoter.console import Console
    from promoter.controlplane.repo import ControlPlane
    from promoter.forges.local import LocalForge
    from promoter.promotion.flows import Orchestrator
    from promoter.promotion.options import Options
    from promoter.runtime import build_runtime
    from tests.support.helpers import ControlPlaneFactory
    from tests.support.waves import create

    root.mkdir(parents=True)
    path = create(ControlPlaneFactory(root), _pipeline("{url: ../platform.git}"))
    clock = RealClock()
    gap = Gap(clock.now)
    cp, console = ControlPlane(path), Console(quiet=True)
    head = cp.resolve(None)
    runtime = build_runtime(cp, cp.main(head).pipeline, console)
    options = Options(poll_interval=LOCAL_POLL_S, progress_interval=10.0)
    with watched(LocalForge, gap):
        orch = Orchestrator(cp, runtime.platform, runtime.forge, clock, console, options)
        report = orch.promote(head)
    if not report.ok:
        raise RuntimeError(f"the local promotion in waves failed: {[r.message for r in report.results]}")
    return gap.seconds()


def github(root: Path) -> float:
    import pytest
    from click.testing import CliRunner

    from promoter.cli.main import cli
    from promoter.forges.github.forge import GitHubForge
    from tests.support.fake_github import make_world
    from tests.support.helpers import ControlPlaneFactory
    from tests.support.waves import QA_TYPES

    root.mkdir(parents=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PROMOTER_CACHE_DIR", str(root / "cache"))
        for name in ("GITHUB_ACTIONS", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_TOKEN"):
            patch.delenv(name, raising=False)
        factory = ControlPlaneFactory(root)
        world = make_world(factory, patch)
        try:
            text = _pipeline("{url: https://github.com/org/platform}")
            factory.commit("main", {"promoter.yaml": text}, "waves", keep=True)
            factory.commit("qa", {"env.yaml": QA_TYPES}, "qa: three cluster types")
            gap = Gap(world.clock.now)
            command = ["promote", "--control-plane", str(world.control_plane), "--poll-interval", "5s"]
            with watched(GitHubForge, gap):
                result = CliRunner().invoke(cli, [*command, "--control-plane-repo", "org/control-plane"])
            if result.exit_code != 0:
                raise RuntimeError(f"the promotion in waves on the fake GitHub failed:\n{result.output}")
            return gap.seconds()
        finally:
            world.close()


def measure(root: Path) -> dict[str, Any]:
    shutil.rmtree(root, ignore_errors=True)
    return {
        "local_s": local(root / "local"),
        "local_limit_s": LOCAL_POLL_S + SLACK_S,
        "github_s": github(root / "github"),
        "github_limit_s": GITHUB_POLL_S + SLACK_S,
    }


def line(gap: dict[str, Any]) -> str:
    return (
        f"gap between waves (gates passed -> next PR opened): local {gap['local_s']:.2f} s "
        f"(limit {gap['local_limit_s']:.0f} s), fake GitHub {gap['github_s']:.2f} s "
        f"(limit {gap['github_limit_s']:.0f} s)"
    )
