"""Helpers to run the orchestrator in-process with a fake clock."""

from __future__ import annotations

from pathlib import Path

from promoter.app import build_runtime
from promoter.clock import FakeClock
from promoter.console import Console
from promoter.controlplane import ControlPlane
from promoter.orchestrator import Options, Orchestrator

GATED_PIPELINE = """\
apiVersion: promoter.dev/v1alpha1
kind: Pipeline
metadata: {name: platform}
spec:
  platformRepo: {url: ../platform.git}
  environments:
    - name: dev
      gates: [{soak: 30s}]
    - name: qa
      merge: MERGE_QA
      timeout: 10m
      gates: [{soak: 1m}]
    - name: prod
      merge: MERGE_PROD
      gates: [{soak: 1m}]
"""


def pipeline(qa: str = "auto", prod: str = "auto") -> str:
    return GATED_PIPELINE.replace("MERGE_QA", qa).replace("MERGE_PROD", prod)


def orchestrator(path: Path, clock: FakeClock | None = None, **options: object) -> Orchestrator:
    cp = ControlPlane(path)
    console = Console(quiet=True)
    runtime = build_runtime(cp, cp.main(cp.resolve(None)).pipeline, console)
    opts = Options(poll_interval=1.0, progress_interval=10.0, **options)  # type: ignore[arg-type]
    return Orchestrator(cp, runtime.platform, runtime.forge, clock or FakeClock(), console, opts)
