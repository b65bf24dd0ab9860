"""``promoter graph``: the Pipeline's environments as a graph (DESIGN section 14)."""

from __future__ import annotations

from typing import Any

import click

from promoter.cli.commands.common import (
    COMMIT,
    COMMITTED,
    CONTROL_PLANE,
    MAIN_BRANCH,
    STAGED,
    VERBOSE,
    announce_edits,
    with_edits,
)
from promoter.cli.commands.common import control_plane as control_plane_at
from promoter.cli.github_options import github_options
from promoter.cli.output import OUTPUT, emit
from promoter.console import Console
from promoter.promotion import graph as graphs
from promoter.runtime import build_runtime


@click.command()
@VERBOSE
@CONTROL_PLANE
@COMMIT
@MAIN_BRANCH
@COMMITTED
@STAGED
@click.option(
    "--states",
    is_flag=True,
    help="Each environment's state for the commit (its promoter/<env> status, read from the forge).",
)
@OUTPUT
@github_options()
def graph(
    control_plane: str | None,
    commit: str | None,
    main_branch: str,
    committed: bool,
    staged: bool,
    states: bool,
    output: str,
    github: Any,
) -> None:
    """The environments and what each follows, as a mermaid flowchart (text) or as data. It reads
    the tree validate reads: the Pipeline as edited in the working tree, unless --committed.

    \b
    Examples:
      promoter graph > docs/pipeline.mmd   # paste into markdown in a ```mermaid block
      promoter graph --states             # coloured by where main's head stands
      promoter graph -o json
    """
    cp = control_plane_at(control_plane, main_branch)
    with_edits(cp, commit, committed, staged)
    sha = cp.resolve(commit)
    main = cp.main(sha)
    announce_edits(cp, main)
    pipeline = main.pipeline
    found: dict[str, str] | None = None
    if states:
        runtime = build_runtime(cp, pipeline, Console(quiet=True), github=github)
        statuses = runtime.forge.get_statuses(sha)
        found = {
            env.name: st.state
            for env in pipeline.environments
            if (st := statuses.get(runtime.forge.status_context(env.name))) is not None
        }
    if output == "text":
        click.echo(graphs.mermaid(pipeline, found), nl=False)
        return
    data = graphs.edges(pipeline)
    if found is not None:
        for env in data["environments"]:
            env["state"] = found.get(env["name"])
    emit({"mainCommit": sha, **data}, output)
