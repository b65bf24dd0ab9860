"""Options shared by the commands."""

from __future__ import annotations

from typing import Any

import click

from promoter import trace
from promoter.clock import parse_duration
from promoter.controlplane.repo import ControlPlane
from promoter.controlplane.worktree import SHOWN, uncommitted
from promoter.errors import UsageError, one_line
from promoter.model import MainObjects
from promoter.rendering import budget

CONTROL_PLANE = click.option(
    "--control-plane",
    "control_plane",
    default=None,
    type=click.Path(file_okay=False),
    envvar="PROMOTER_CONTROL_PLANE",
    help="The control-plane git repo (a working clone, any folder of it, or a bare repo; "
    "default: $PROMOTER_CONTROL_PLANE, else the git repo of the working directory).",
)
COMMIT = click.option(
    "--commit", default=None, help="Main commit or ref to use (default: the main branch head)."
)
MAIN_BRANCH = click.option(
    "--main-branch", default="main", show_default=True, help="The control plane's promoted branch."
)


COMMITTED = click.option(
    "--committed",
    is_flag=True,
    help="Read commits only: ignore uncommitted edits in the working tree.",
)
STAGED = click.option(
    "--staged",
    is_flag=True,
    help="Read the staged files (the index) of the checked-out branch, as a pre-commit hook does.",
)


def with_edits(cp: ControlPlane, commit: str | None, committed: bool, staged: bool) -> None:
    """Read the checked-out branch's uncommitted (or, ``staged``, staged) control-plane files,
    unless a commit was asked for or ``--committed``; say so on stderr before anything else."""
    if committed and staged:
        raise UsageError("--committed and --staged exclude each other")
    if staged and commit:
        raise UsageError("--staged reads the index of the checked-out branch; it excludes --commit")
    if committed or commit:
        return
    snap = cp.read_edits(staged=staged)
    if snap is not None and snap.branch == cp.main_branch:
        click.echo(one_line(snap.describe()), err=True)


def announce_edits(cp: ControlPlane, main: MainObjects) -> None:
    """For a snapshot of a branch other than main: whether it is read, once main is known."""
    snap = cp.snapshot
    if snap is None or snap.branch == cp.main_branch:
        return
    if any(env.branch == snap.branch for env in main.pipeline.environments):
        click.echo(one_line(snap.describe()), err=True)
    else:
        click.echo(
            one_line(
                f"warning: uncommitted files on branch {snap.branch} are not read "
                f"({', '.join(snap.files[:5])}): it is neither {cp.main_branch} nor an environment branch"
            ),
            err=True,
        )


def control_plane(path: str | None, main_branch: str) -> Any:
    """The control plane at ``path``, else the git repo the working directory is in."""
    if path is None:
        return ControlPlane(".", main_branch, label="the working directory (no --control-plane given)")
    return ControlPlane(path, main_branch)


ALLOW_DIRTY = click.option(
    "--allow-dirty",
    is_flag=True,
    envvar="PROMOTER_ALLOW_DIRTY",
    help="Promote the committed branches although the working tree has uncommitted or untracked "
    "control-plane files (they are not promoted).",
)


def refuse_dirty(cp: ControlPlane, *, allowed: bool, dry_run: bool) -> None:
    """A pushing command promotes commits only: uncommitted or untracked control-plane files of
    the clone are named, and refused (exit 2) unless ``--allow-dirty``; a dry run warns."""
    files = uncommitted(cp.git)
    if not files:
        return
    shown = ", ".join(files[:SHOWN]) + (f" and {len(files) - SHOWN} more" if len(files) > SHOWN else "")
    count = f"{len(files)} uncommitted or untracked file{'' if len(files) == 1 else 's'}"
    what = f"{cp.path} has {count} ({shown}) that this run does not promote: it promotes commits only"
    if allowed or dry_run:
        click.echo(
            one_line(f"warning: {what}" + ("" if allowed else "; without --dry-run it stops here")), err=True
        )
        return
    raise UsageError(f"{what}; commit them, or pass --allow-dirty to promote without them")


def _verbose(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        trace.enable(lambda line: click.echo(line, err=True))
        ctx.call_on_close(lambda: trace.enable(None))  # this command's alone


#: ``-v``: the run's trace (each git command and GitHub request, masked, on stderr).
VERBOSE = click.option(
    "-v",
    "--verbose",
    is_flag=True,
    expose_value=False,
    callback=_verbose,
    help="Also print each git command and GitHub request as it ends, with its outcome and time (masked).",
)


def _render_budget(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    try:
        budget.set_run_seconds(parse_duration(value) if value else None)
    except ValueError as err:
        raise click.BadParameter(str(err)) from err
    ctx.call_on_close(lambda: budget.set_run_seconds(None))  # this command's alone


#: ``--render-budget``: how long this run's rendering may take in all (a template: a sixth).
RENDER_BUDGET = click.option(
    "--render-budget",
    metavar="DURATION",
    envvar="PROMOTER_RENDER_BUDGET",
    expose_value=False,
    callback=_render_budget,
    help=f"How long this run's rendering may take in all (default {budget.RUN_SECONDS:g}s); any one template "
    f"may take a {budget.TEMPLATE_SHARE}th of it (docs/configuration.md#time-limits).",
)
