"""Helpers to run the orchestrator in-process with a fake clock."""

from __future__ import annotations

from pathlib import Path

from promoter.clock import FakeClock
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.promotion.flows import Orchestrator
from promoter.promotion.options import Options
from promoter.runtime import build_runtime
from tests.support.helpers import pipeline as build_pipeline
from tests.support.helpers import stage


def pipeline(qa: str = "auto", prod: str = "auto") -> str:
    """Gated environments: a soak on each, qa and prod merged by the given policies."""
    return build_pipeline(
        stage("dev", gates="[{soak: 30s}]"),
        stage("qa", merge=qa, timeout="10m", gates="[{soak: 1m}]"),
        stage("prod", merge=prod, gates="[{soak: 1m}]"),
    )


def orchestrator(path: Path, clock: FakeClock | None = None, **options: object) -> Orchestrator:
    cp = ControlPlane(path)
    console = Console(quiet=True)
    runtime = build_runtime(cp, cp.main(cp.resolve(None)).pipeline, console)
    # the CLI's default interval: the fake clock makes a wait free, but not its polls (a 10m
    # merge timeout polled each second was 600 rounds of git)
    opts = Options(poll_interval=5.0, progress_interval=10.0, **options)  # type: ignore[arg-type]
    return Orchestrator(cp, runtime.platform, runtime.forge, clock or FakeClock(), console, opts)
