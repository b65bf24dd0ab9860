"""The measured runs, each in-process through the same objects the CLI builds (control plane,
runtime, orchestrator), with the phases timed (``benchmarks.phases``).

- ``full``: main promoted to dev with a fresh cache, onto a platform branch holding a README.
- ``incremental``: one config value changed on one cluster type; the scheduling flow for dev.
- ``noop``: the scheduling flow for dev again, nothing changed: no platform commit.
- ``cold``: the no-op again with an empty cache, against a platform repo whose other
  environments hold their own full trees: what a fresh CI runner pays, and what it fetches.
"""

from __future__ import annotations

import resource
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import promoter.promotion.environment
from benchmarks.phases import Phases
from promoter.clock import RealClock
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.promotion.flows import Orchestrator
from promoter.promotion.options import Options
from promoter.promotion.report import Report
from promoter.runtime import build_runtime
from promoter.scheduling.environment import EnvironmentSchedule


def refs(repo: Path) -> dict[str, str]:
    out = subprocess.run(
        ["git", "-C", str(repo), "for-each-ref", "--format=%(refname) %(objectname)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return dict(line.split(" ", 1) for line in out.splitlines())


def count_files(repo: Path, ref: str) -> int:
    out = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "-z", ref], capture_output=True, check=True
    ).stdout
    return sum(1 for p in out.split(b"\0") if p and not p.startswith(b".") and b"/" in p)


def objects_in(repo: Path) -> dict[str, int]:
    """Objects and bytes in a repo's object store, by git's own count."""
    out = subprocess.run(
        ["git", "-C", str(repo), "count-objects", "-v"], capture_output=True, text=True, check=True
    ).stdout
    values = dict(line.split(": ", 1) for line in out.splitlines())
    return {
        "objects": int(values["count"]) + int(values["in-pack"]),
        "kib": int(values["size"]) + int(values["size-pack"]),
    }


def peak_mb() -> float:
    """Peak resident memory of this process (VmHWM: unlike ru_maxrss, not inherited through
    exec from the process that started it)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_flow(control_plane: Path, *, env: str, scheduling: bool) -> dict[str, Any]:
    """One promoter run (``promote --to env``, or ``promote --schedule env``), timed by phase."""
    phases = Phases()
    cpu = cpu_s()
    start = time.perf_counter()
    with ExitStack() as stack:
        stack.enter_context(phases.patch(promoter.promotion.environment, "render_environment", "render"))
        for method in ("__init__", "assign"):  # pairs, then config merged and checked per cluster type
            stack.enter_context(phases.patch(EnvironmentSchedule, method, "schedule"))
        cp = ControlPlane(control_plane)
        phases.wrap(cp, "main", "load")
        phases.wrap(cp, "environment", "load")
        console = Console(quiet=True)
        sha = cp.resolve(None)
        runtime = build_runtime(cp, cp.main(sha).pipeline, console)
        platform = runtime.platform
        for method in ("plan", "commit", "merge"):
            phases.wrap(platform, method, "commit")
        for method in ("fetch", "push", "remote_heads"):
            phases.wrap(platform, method, "push")
        orchestrator = Orchestrator(cp, platform, runtime.forge, RealClock(), console, Options())
        with platform.locked():
            report = orchestrator.schedule(env) if scheduling else orchestrator.promote(sha, env)
    whole = time.perf_counter() - start
    return {
        "whole_s": whole,
        "cpu_s": cpu_s() - cpu,
        "phases": phases.seconds,
        "other_s": whole - sum(phases.seconds.values()),
        "report": _summary(report),
        "cache": str(platform.path),
    }


def _summary(report: Report) -> dict[str, Any]:
    [result] = report.results[-1:]
    return {
        "state": result.state,
        "files": result.files,
        "changed": sum(c.total for k, c in result.changes.items() if k != ".promoter"),
        "requests": result.requests,
        "message": result.message,
    }
