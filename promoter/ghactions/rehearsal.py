"""The promotion workflow rehearsed on this machine (``promoter rehearse``): one run of
promote.yml's jobs, each step the promoter in a process of its own with the environment a runner
gives it (``$GITHUB_OUTPUT``, ``$GITHUB_STEP_SUMMARY``), against the local forge; and the step
outputs read back as the next job reads them
(docs/github-actions.md#rehearsing-the-workflows-on-a-laptop)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from promoter.controlplane.repo import ControlPlane

# The composite actions' defaults (actions/promote/action.yml), which the workflow leaves as they are.
POLL_INTERVAL = "5s"
PROGRESS_INTERVAL = "30s"


class JobFailed(Exception):
    """A job's promoter step failed: the jobs after it do not run, as in a workflow."""

    def __init__(self, name: str, code: int) -> None:
        super().__init__(f"rehearse: job {name} failed (exit {code}); the jobs after it do not run")
        self.code = code


def plan_args(
    commit: str | None, to: str | None, schedule: str | None, force: bool, runner: Path
) -> list[str]:
    """actions/render's arguments, from promote.yml's plan job."""
    args = ["diff", "--no-exit-code", f"--comment-file={runner / 'promoter-diff.md'}"]
    if schedule:  # the workflow renders the environment's deployed main commit, or none given
        return [*args, f"--env={schedule}", *([] if commit else ["--deployed-main"])]
    args += [f"--commit={commit}"] if commit else []
    return args + ([f"--env={to}"] if force and to else [f"--to={to}"] if to else [])


def _promote_args(main: str, flow: list[str], force: bool) -> list[str]:
    """actions/promote's arguments, from promote.yml's advance and approved jobs."""
    args = [
        "promote",
        f"--main-branch={main}",
        f"--poll-interval={POLL_INTERVAL}",
        f"--progress-interval={PROGRESS_INTERVAL}",
        "--wait=none",
    ]
    return args + flow + (["--force"] if force else [])


class Rehearsal:
    """The jobs of one run: each step is the promoter in a process of its own, with the
    environment a runner gives it."""

    def __init__(self, cp: ControlPlane, runner: Path, main: str, say: Callable[[str], None]) -> None:
        self.cp = cp
        self.runner = runner
        self.main = main
        self.say = say

    def run(self, flow: list[str], held: str, schedule: str | None, force: bool) -> str:
        """promote.yml's jobs for one event: advance, then approval and approved when the run
        reached an environment held for approval (or, first, a push to a held environment's
        branch: one push, one approval); the run's state."""
        args = _promote_args(self.main, [*flow, f"--hold-for-approval={held}"], force)
        if schedule and schedule in held.split(","):
            self.say(f"rehearse: job advance: the scheduling flow of {schedule} is approved first")
            advance = {"approval-requested": "true", "waiting-environment": schedule}
        else:
            advance = self.job("advance", "Promote, as far as it goes without waiting", args)
        if advance.get("approval-requested") != "true":
            return advance.get("state", "")
        env = advance.get("waiting-environment", "")
        self.say(
            f"rehearse: job approval: in GitHub, the required reviewers of the Environment {env} approve here"
        )
        given = flow[:1] == ["--commit"]
        commit = advance.get("commit") or (flow[1] if given else "")  # the advance job's commit
        again = (["--commit", commit] if commit else []) + (flow[2:] if given else flow)
        approved = [] if schedule else [f"--approved={env}"]
        args = _promote_args(self.main, [*again, f"--hold-for-approval={held}", *approved], force)
        return self.job("approved", f"Promote {env} (approved)", args).get("state", "")

    def job(self, name: str, step: str, args: list[str]) -> dict[str, str]:
        """Run one job's promoter step; its step outputs. A failed step ends the rehearsal with
        its exit code (``JobFailed``), as a failed job cancels the ones after it."""
        output, summary = self.runner / f"{name}.output", self.runner / f"{name}.summary.md"
        env = {
            **os.environ,
            "GITHUB_ACTIONS": "true",
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "RUNNER_TEMP": str(self.runner),
            "PROMOTER_CONTROL_PLANE": str(self.cp.path),
        }
        self.say(f"rehearse: job {name}, step {step}: promoter {shlex.join(args)}")
        done = subprocess.run([sys.executable, "-m", "promoter", *args], env=env, check=False)
        if done.returncode != 0:
            raise JobFailed(name, done.returncode)
        return read_outputs(output)


def read_outputs(path: Path) -> dict[str, str]:
    """The step outputs of a ``$GITHUB_OUTPUT`` file (``name=value`` and ``name<<END`` blocks)."""
    if not path.exists():
        return {}
    outputs: dict[str, str] = {}
    lines = iter(path.read_text().splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, end = line.split("<<", 1)
            outputs[name] = "\n".join(iter(lambda: next(lines), end))
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs
