"""``promoter validate``: load and check main and every environment branch."""

from __future__ import annotations

import click

from promoter.cli.commands.common import (
    COMMIT,
    COMMITTED,
    CONTROL_PLANE,
    MAIN_BRANCH,
    STAGED,
    announce_edits,
    with_edits,
)
from promoter.cli.commands.common import control_plane as control_plane_at
from promoter.cli.commands.kalypso import validate_kalypso
from promoter.cli.output import OUTPUT, emit, snapshot_of
from promoter.kalypso.control import open_kalypso
from promoter.rendering.builtins import all_templates
from promoter.rendering.render import Renderer
from promoter.rendering.tree import render_environment


@click.command()
@CONTROL_PLANE
@COMMIT
@MAIN_BRANCH
@COMMITTED
@STAGED
@OUTPUT
def validate(
    control_plane: str | None,
    commit: str | None,
    main_branch: str,
    committed: bool,
    staged: bool,
    output: str,
) -> None:
    """Load and check main and every environment branch; render each environment.

    \b
    Examples:
      promoter validate                  # the repo of the working directory, edits included
      promoter validate --staged         # what `git commit` would record (pre-commit)
      promoter validate --commit v1.4 -o json
    """
    cp = control_plane_at(control_plane, main_branch)
    kcp = open_kalypso(cp, commit)
    if kcp is not None:
        validate_kalypso(kcp, commit)
        return
    with_edits(cp, commit, committed, staged)
    sha = cp.resolve(commit)
    main = cp.main(sha)
    announce_edits(cp, main)
    Renderer(all_templates(main)).compile_all()
    envs = []
    for env in main.pipeline.environments:
        rendered = render_environment(main, cp.environment(env), env.name)
        envs.append(
            {"environment": env.name, "assignments": len(rendered.assignments), "files": len(rendered.files)}
        )
        if output == "text":
            click.echo(
                f"{env.name}: ok, {len(rendered.assignments)} assignments, {len(rendered.files)} files"
            )
    if output != "text":
        emit(
            {
                "valid": True,
                "mainCommit": sha,
                "workloads": len(main.workloads),
                "templates": len(main.templates),
                "environments": envs,
                "uncommitted": snapshot_of(cp),
            },
            output,
        )
        return
    click.echo(f"valid: main {sha[:12]}, {len(main.workloads)} workloads, {len(main.templates)} templates")
