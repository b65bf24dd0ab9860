"""``promoter rehearse``: the control plane's promotion workflow on a laptop. One run of
``.github/workflows/promote.yml`` as GitHub runs it for one event (a push to main; with
``--schedule``, a push to an environment branch; with ``--event``, a wake-up), with the arguments
the composite actions build, in ``GITHUB_ACTIONS`` mode (step outputs, step summaries, workflow
commands), against the local forge: the ``advance`` job promotes as far as it goes without
waiting (``--wait none``) and ends with the run's state; when it reached an environment held for
approval (``approval-requested``), the ``approval`` job is where GitHub's reviewers approve, and
the ``approved`` job starts that environment. The next event is the next rehearsal."""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import click

from promoter.cli.commands.common import CONTROL_PLANE, MAIN_BRANCH
from promoter.cli.commands.common import control_plane as control_plane_at
from promoter.cli.commands.completion import complete_environments
from promoter.controlplane.repo import ControlPlane
from promoter.errors import UsageError
from promoter.ghactions.rehearsal import JobFailed, Rehearsal, plan_args
from promoter.scaffold.workflows import Follows, leaves_of
from promoter.urls import url_problem

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
    with tempfile.TemporaryDirectory(prefix="promoter-rehearse-") as temp, _exit_on_failure():
        runner = Path(keep) if keep else Path(temp)
        runner.mkdir(parents=True, exist_ok=True)
        rehearsal = Rehearsal(cp, runner, main_branch, click.echo)
        click.echo(
            f"rehearse: promote.yml for {_event(schedule, event)}, on this machine against the local forge"
        )
        if dry_run:
            rehearsal.job("advance", "Render and diff", plan_args(commit, to, schedule, force, runner))
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


@contextlib.contextmanager
def _exit_on_failure() -> Iterator[None]:
    """A failed job ends the rehearsal with its exit code, as it cancels the jobs after it."""
    try:
        yield
    except JobFailed as failed:
        click.echo(str(failed), err=True)
        sys.exit(failed.code)
