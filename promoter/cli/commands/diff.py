"""``promoter diff``: what a promotion would change on each platform branch, pushing nothing.

For pull-request checks on the control plane (``actions/render``): it loads and renders like
``validate``, then compares each rendered tree with its platform branch and prints a unified
diff, and can write the same as a markdown pull-request comment.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import click

from promoter.cli.commands.common import (
    COMMIT,
    COMMITTED,
    CONTROL_PLANE,
    MAIN_BRANCH,
    RENDER_BUDGET,
    STAGED,
    VERBOSE,
    announce_edits,
    with_edits,
)
from promoter.cli.commands.common import control_plane as control_plane_at
from promoter.cli.commands.completion import complete_environments
from promoter.cli.commands.kalypso import KALYPSO_NAMING, open_kalypso
from promoter.cli.github_options import github_options
from promoter.cli.output import OUTPUT, emit
from promoter.console import Console
from promoter.errors import UsageError, one_line
from promoter.ghactions import runner
from promoter.ghactions.diffs import publish_diff, write_comment
from promoter.promotion.diffs import EnvDiff, diff_data, environment_diffs, kalypso_diffs, select
from promoter.runtime import build_runtime


@click.command()
@VERBOSE
@RENDER_BUDGET
@CONTROL_PLANE
@COMMIT
@KALYPSO_NAMING
@click.option(
    "--env",
    "env_names",
    multiple=True,
    shell_complete=complete_environments,
    help="Only this environment (repeatable).",
)
@click.option("--env-branch", default=None, help="Only the environments kept on this control-plane branch.")
@click.option(
    "--to",
    default=None,
    shell_complete=complete_environments,
    help="The environments up to and including this one.",
)
@click.option(
    "--env-commit",
    default=None,
    help="Read the selected environment's branch at this commit (a pull request's head).",
)
@click.option(
    "--deployed-main",
    is_flag=True,
    help="Use the main commit deployed in each environment, as the scheduling flow does.",
)
@click.option(
    "--comment-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write the diff as a markdown pull-request comment to this file.",
)
@MAIN_BRANCH
@COMMITTED
@STAGED
@OUTPUT
@click.option(
    "--exit-code/--no-exit-code",
    default=True,
    show_default=True,
    help="Exit 1 when a platform branch would change, as flux diff and git diff --exit-code do.",
)
@github_options()
def diff(
    control_plane: str | None,
    commit: str | None,
    env_names: tuple[str, ...],
    env_branch: str | None,
    to: str | None,
    env_commit: str | None,
    deployed_main: bool,
    comment_file: str | None,
    main_branch: str,
    committed: bool,
    staged: bool,
    output: str,
    exit_code: bool,
    github: Any,
) -> None:
    """Show what promoting a commit would change on each platform branch; push nothing.

    Exit status: 0 when nothing would change, 1 when something would (unless
    --no-exit-code), 2 on bad input.

    \b
    Examples:
      promoter diff                      # every environment, edits in the working tree included
      promoter diff --env qa -o json
      promoter diff --to qa --no-exit-code --comment-file diff.md
    """
    if deployed_main and commit:
        raise UsageError("--commit and --deployed-main exclude each other")
    if env_commit and not (env_names or env_branch):
        raise UsageError("--env-commit needs --env or --env-branch: it is one environment branch's commit")
    cp = control_plane_at(control_plane, main_branch)
    kcp = open_kalypso(cp, commit)
    if kcp is not None:  # docs/kalypso.md
        diffs = kalypso_diffs(kcp, commit, env_names, (env_branch, to, env_commit, deployed_main))
    else:
        with_edits(cp, commit, committed, staged)
        main = cp.main(cp.resolve(commit))
        announce_edits(cp, main)
        envs = select(main.pipeline, env_names, env_branch, to)
        runtime = functools.partial(build_runtime, cp, main.pipeline, Console(quiet=True), github=github)
        diffs = environment_diffs(cp, main, envs, runtime, env_commit, deployed_main, _warn)
    _report(diffs, comment_file, output)
    if exit_code and any(d.changed for d in diffs):
        sys.exit(1)


def _report(diffs: list[EnvDiff], comment_file: str | None, output: str) -> None:
    """The diff as text or as ``-o`` data, the comment file, the Actions outputs and summary."""
    if comment_file:
        write_comment(diffs, comment_file)
    if output == "text":
        _print(diffs, runner.active())
    else:
        emit(diff_data(diffs), output)
    publish_diff(diffs, comment_file)


def _warn(line: str) -> None:
    click.echo(one_line(line), err=True)


def _print(diffs: list[EnvDiff], grouped: bool) -> None:
    for d in diffs:
        click.echo(d.header(), err=True)
    for d in diffs:
        if not d.patches:
            continue
        if grouped:
            click.echo(f"::group::{d.environment} diff")
        click.echo(f"# {d.header()}\n" + "".join(d.patches), nl=False)
        if grouped:
            click.echo("::endgroup::")
