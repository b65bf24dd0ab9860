"""Helpers of the hydrator contract's tests (docs/hydrator.md): a Pipeline that opts in, one run
of a fresh process on the local forge, and what a person does to the platform repo."""

from __future__ import annotations

import subprocess
from pathlib import Path

from promoter.clock import FakeClock
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.gitcmd import Git
from promoter.model import Status
from promoter.promotion.flows import Orchestrator
from promoter.promotion.options import Options
from promoter.promotion.report import Report
from promoter.runtime import build_runtime
from tests.support.helpers import Env, pipeline

NOTES = "refs/notes/hydrator.metadata"


def hydrating(*environments: str | Env) -> str:
    return pipeline(*environments).replace("spec:\n", "spec:\n  hydrator: {metadata: true}\n")


def run(path: Path, clock: FakeClock, wait: str = "none") -> Report:
    """One run of a fresh process (fresh objects, nothing kept but the repos)."""
    cp = ControlPlane(path)
    console = Console(quiet=True)
    runtime = build_runtime(cp, cp.main(cp.resolve(None)).pipeline, console, clock=clock)
    opts = Options(poll_interval=60.0, wait=wait)  # type: ignore[arg-type]
    orchestrator = Orchestrator(cp, runtime.platform, runtime.forge, clock, console, opts, runtime.routes)
    return orchestrator.promote(Git(path).out("rev-parse", "main"))


def forge_statuses(path: Path, commit: str) -> dict[str, Status]:
    """The statuses of a main commit, as a fresh process reads them."""
    cp = ControlPlane(path)
    runtime = build_runtime(cp, cp.main(cp.resolve(None)).pipeline, Console(quiet=True))
    return dict(runtime.forge.get_statuses(commit))


def statuses(path: Path) -> dict[str, tuple[str, str]]:
    cp = ControlPlane(path)
    runtime = build_runtime(cp, cp.main(cp.resolve(None)).pipeline, Console(quiet=True))
    found = runtime.forge.get_statuses(Git(path).out("rev-parse", "main"))
    return {c.removeprefix("promoter/"): (s.state, s.description) for c, s in sorted(found.items())}


def show(platform: Path, rev: str) -> str | None:
    proc = subprocess.run(["git", "-C", str(platform), "show", rev], capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else None


def head(platform: Path, branch: str) -> str | None:
    return Git(platform).commit_of(f"refs/heads/{branch}")


def merge_with_git(root: Path, platform: Path, source: str, into: str) -> None:
    """What a person does: clone, ``git merge --no-ff``, push."""
    clone = root / f"person-{into}"
    subprocess.run(["git", "clone", "-q", "-b", into, str(platform), str(clone)], check=True)
    subprocess.run(
        ["git", "-C", str(clone), "merge", "-q", "--no-ff", "-m", "merge it", f"origin/{source}"], check=True
    )
    subprocess.run(["git", "-C", str(clone), "push", "-q", "origin", into], check=True)
