"""``promoter rehearse``: the control plane's promotion workflow on a laptop. The jobs and steps
of ``.github/workflows/promote.yml`` run as GitHub runs them for a push to main (or, with
``--schedule``, to an environment branch), with the arguments the composite actions build, in
``GITHUB_ACTIONS`` mode (step outputs, step summaries, workflow commands), against the local
forge: the plan job's render and diff, then one job per environment in the Pipeline's order,
each promoting the commit the plan rendered, stopping at the first that fails (``fail-fast``)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import click

from promoter.cli.commands.common import CONTROL_PLANE, MAIN_BRANCH
from promoter.cli.commands.common import control_plane as control_plane_at
from promoter.cli.commands.completion import complete_environments
from promoter.controlplane.repo import ControlPlane
from promoter.errors import UsageError
from promoter.urls import url_problem

# The composite actions' defaults (actions/promote/action.yml), which the workflow leaves as they are.
POLL_INTERVAL = "5s"
PROGRESS_INTERVAL = "30s"

EXAMPLES = """\b
Examples:
  promoter rehearse                          # a push to main: plan, then dev, qa, prod
  promoter rehearse --to qa --dry-run        # the by-hand workflow's inputs
  promoter rehearse --schedule dev           # a push to the dev branch: the scheduling flow
"""


@click.command(epilog=EXAMPLES)
@CONTROL_PLANE
@click.option(
    "--commit", default=None, metavar="REF", help="The workflow's commit input (default: main's head)."
)
@click.option(
    "--to",
    default=None,
    metavar="ENV",
    shell_complete=complete_environments,
    help="The workflow's to input: promote up to and including this environment.",
)
@click.option(
    "--schedule",
    default=None,
    metavar="ENV",
    shell_complete=complete_environments,
    help="Rehearse a push to this environment's branch: the scheduling flow.",
)
@click.option("--force", is_flag=True, help="The workflow's force input.")
@click.option("--dry-run", is_flag=True, help="The workflow's dry-run input: the plan job alone.")
@click.option(
    "--keep",
    default=None,
    type=click.Path(file_okay=False),
    help="Keep each job's step outputs and summary in this folder (default: a temporary one, removed).",
)
@MAIN_BRANCH
def rehearse(
    control_plane: str | None,
    commit: str | None,
    to: str | None,
    schedule: str | None,
    force: bool,
    dry_run: bool,
    keep: str | None,
    main_branch: str,
) -> None:
    """Run the promotion workflow's jobs and steps here, against the local forge."""
    if to and schedule:
        raise UsageError("--to and --schedule exclude each other, as the workflow's inputs do")
    cp = control_plane_at(control_plane, main_branch)
    _local_only(cp)
    with tempfile.TemporaryDirectory(prefix="promoter-rehearse-") as temp:
        runner = Path(keep) if keep else Path(temp)
        runner.mkdir(parents=True, exist_ok=True)
        rehearsal = Rehearsal(cp, runner, main_branch)
        click.echo(f"rehearse: promote.yml for {_event(schedule)}, on this machine against the local forge")
        plan = rehearsal.job("plan", "Render and diff", _plan_args(commit, to, schedule, force, runner))
        if dry_run:
            click.echo("rehearse: dry-run: the plan job alone, as the workflow runs it")
            return
        environments = [schedule] if schedule else json.loads(plan.get("environments", "[]"))
        for env in environments:
            click.echo(f"rehearse: in GitHub, the required reviewers of the Environment {env} approve here")
            args = ["--commit", commit] if schedule and commit else []
            args += ["--schedule", env] if schedule else ["--commit", plan["commit"], "--to", env]
            rehearsal.job(env, "Promote", _promote_args(main_branch, args, force))
        where = f" (kept in {runner})" if keep else ""
        click.echo(f"rehearse: done: {', '.join(environments) or 'nothing to promote'}{where}")


def _event(schedule: str | None) -> str:
    return f"a push to the {schedule} branch (the scheduling flow)" if schedule else "a push to main"


def _local_only(cp: ControlPlane) -> None:
    """A rehearsal writes to the platform repo: only a local one, never GitHub's."""
    pipeline = cp.main(cp.resolve(None)).pipeline
    for env in pipeline.environments:
        url = pipeline.platform_of(env)
        if url_problem(url, "local") is not None:
            raise UsageError(
                f"{env.name}: the platform repo {url} is not local: rehearse runs against the local forge; "
                "rehearse a copy of the control plane whose platformRepo.url is a path (docs/github-actions.md#rehearsing-the-workflows-on-a-laptop)"
            )


def _plan_args(
    commit: str | None, to: str | None, schedule: str | None, force: bool, runner: Path
) -> list[str]:
    """actions/render's arguments, from promote.yml's plan job."""
    args = ["diff", "--no-exit-code", f"--comment-file={runner / 'promoter-diff.md'}"]
    if schedule:  # the workflow renders the environment's deployed main commit, or none given
        return [*args, f"--env={schedule}", *([] if commit else ["--deployed-main"])]
    args += [f"--commit={commit}"] if commit else []
    return args + ([f"--env={to}"] if force and to else [f"--to={to}"] if to else [])


def _promote_args(main: str, flow: list[str], force: bool) -> list[str]:
    """actions/promote's arguments, from promote.yml's promote job."""
    args = [
        "promote",
        f"--main-branch={main}",
        f"--poll-interval={POLL_INTERVAL}",
        f"--progress-interval={PROGRESS_INTERVAL}",
    ]
    return args + flow + (["--force"] if force else [])


class Rehearsal:
    """The jobs of one run: each step is the promoter in a process of its own, with the
    environment a runner gives it."""

    def __init__(self, cp: ControlPlane, runner: Path, main: str) -> None:
        self.cp = cp
        self.runner = runner
        self.main = main

    def job(self, name: str, step: str, args: list[str]) -> dict[str, str]:
        """Run one job's promoter step; its step outputs. A failed step ends the rehearsal with
        its exit code, as a failed job cancels the ones after it."""
        output, summary = self.runner / f"{name}.output", self.runner / f"{name}.summary.md"
        env = {
            **os.environ,
            "GITHUB_ACTIONS": "true",
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "RUNNER_TEMP": str(self.runner),
            "PROMOTER_CONTROL_PLANE": str(self.cp.path),
        }
        click.echo(f"rehearse: job {name}, step {step}: promoter {shlex.join(args)}")
        done = subprocess.run([sys.executable, "-m", "promoter", *args], env=env, check=False)
        if done.returncode != 0:
            click.echo(
                f"rehearse: job {name} failed (exit {done.returncode}); the jobs after it do not run",
                err=True,
            )
            sys.exit(done.returncode)
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
