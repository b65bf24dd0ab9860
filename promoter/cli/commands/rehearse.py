"""``promoter rehearse``: the control plane's promotion workflow on a laptop. One run of
``.github/workflows/promote.yml`` as GitHub runs it for one event (a push to main; with
``--schedule``, a push to an environment branch; with ``--event``, a wake-up), with the arguments
the composite actions build, in ``GITHUB_ACTIONS`` mode (step outputs, step summaries, workflow
commands), against the local forge: the ``advance`` job promotes as far as it goes without
waiting (``--wait none``) and ends with the run's state; when it reached an environment held for
approval (``approval-requested``), the ``approval`` job is where GitHub's reviewers approve, and
the ``approved`` job starts that environment. The next event is the next rehearsal."""

from __future__ import annotations

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
from promoter.scaffold.workflows import Follows, leaves_of
from promoter.urls import url_problem

# The composite actions' defaults (actions/promote/action.yml), which the workflow leaves as they are.
POLL_INTERVAL = "5s"
PROGRESS_INTERVAL = "30s"

EXAMPLES = """\b
Examples:
  promoter rehearse                          # a push to main: as far as it goes without waiting
  promoter rehearse --event repository_dispatch   # a wake-up after a merge or a cluster's status
  promoter rehearse --to qa --dry-run        # the by-hand workflow's inputs
  promoter rehearse --schedule dev           # a push to the dev branch: the scheduling flow
"""


#: What starts a run of promote.yml: a push, a wake-up (the platform repo's or the hub's
#: dispatch, the heartbeat) or a run by hand; every one but a push to an environment branch
#: promotes main's head the same way.
EVENTS = ("push", "repository_dispatch", "schedule", "workflow_dispatch")


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
@click.option("--dry-run", is_flag=True, help="The workflow's dry-run input: render and diff alone.")
@click.option(
    "--event",
    type=click.Choice(EVENTS),
    default="push",
    show_default=True,
    help="The event this run is for: a push, a wake-up (promoter-wake, the heartbeat) or by hand.",
)
@click.option(
    "--hold-for-approval",
    "approvals",
    default=None,
    metavar="ENV,ENV",
    help="The workflow's hold-for-approval input (default: as promoter init writes it, the environments "
    "nothing follows: the last one of a chain, every leaf of a graph).",
)
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
    event: str,
    approvals: str | None,
    keep: str | None,
    main_branch: str,
) -> None:
    """Run one run of the promotion workflow here (its jobs and steps), against the local forge."""
    if to and schedule:
        raise UsageError("--to and --schedule exclude each other, as the workflow's inputs do")
    cp = control_plane_at(control_plane, main_branch)
    names, follows = _local_only(cp)
    held = ",".join(leaves_of(names, follows)) if approvals is None else approvals
    with tempfile.TemporaryDirectory(prefix="promoter-rehearse-") as temp:
        runner = Path(keep) if keep else Path(temp)
        runner.mkdir(parents=True, exist_ok=True)
        rehearsal = Rehearsal(cp, runner, main_branch)
        click.echo(
            f"rehearse: promote.yml for {_event(schedule, event)}, on this machine against the local forge"
        )
        if dry_run:
            rehearsal.job("advance", "Render and diff", _plan_args(commit, to, schedule, force, runner))
            click.echo("rehearse: dry-run: render and diff alone, as the workflow runs it")
            return
        flow = ["--commit", commit] if commit else []
        flow += ["--schedule", schedule] if schedule else (["--to", to] if to else [])
        state = rehearsal.run(flow, held, schedule, force)
        where = f" (kept in {runner})" if keep else ""
        click.echo(
            f"rehearse: the run ends {state}{where}; the next event (a merge, a status, the heartbeat) is the next run"
        )


def _event(schedule: str | None, event: str) -> str:
    if schedule:
        return f"a push to the {schedule} branch (the scheduling flow)"
    return {
        "push": "a push to main",
        "repository_dispatch": "a promoter-wake dispatch",
        "schedule": "the heartbeat",
        "workflow_dispatch": "a run by hand",
    }[event]


def _local_only(cp: ControlPlane) -> tuple[tuple[str, ...], Follows]:
    """A rehearsal writes to the platform repo: only a local one, never GitHub's. The Pipeline's
    environments, in order, and what each follows."""
    pipeline = cp.main(cp.resolve(None)).pipeline
    for env in pipeline.environments:
        url = pipeline.platform_of(env)
        if url_problem(url, "local") is not None:
            raise UsageError(
                f"{env.name}: the platform repo {url} is not local: rehearse runs against the local forge; "
                "rehearse a copy of the control plane whose platformRepo.url is a path (docs/github-actions.md#rehearsing-the-workflows-on-a-laptop)"
            )
    names = tuple(env.name for env in pipeline.environments)
    return names, tuple((n, pipeline.upstreams(n)) for n in names)


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

    def __init__(self, cp: ControlPlane, runner: Path, main: str) -> None:
        self.cp = cp
        self.runner = runner
        self.main = main

    def run(self, flow: list[str], held: str, schedule: str | None, force: bool) -> str:
        """promote.yml's jobs for one event: advance, then approval and approved when the run
        reached an environment held for approval (or, first, a push to a held environment's
        branch: one push, one approval); the run's state."""
        args = _promote_args(self.main, [*flow, f"--hold-for-approval={held}"], force)
        if schedule and schedule in held.split(","):
            click.echo(f"rehearse: job advance: the scheduling flow of {schedule} is approved first")
            advance = {"approval-requested": "true", "waiting-environment": schedule}
        else:
            advance = self.job("advance", "Promote, as far as it goes without waiting", args)
        if advance.get("approval-requested") != "true":
            return advance.get("state", "")
        env = advance.get("waiting-environment", "")
        click.echo(
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
