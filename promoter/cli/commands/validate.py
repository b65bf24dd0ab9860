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
from promoter.rendering.builtins import all_templates
from promoter.rendering.render import Renderer
from promoter.rendering.tree import render_environment


@click.command()
@CONTROL_PLANE
@COMMIT
@MAIN_BRANCH
@COMMITTED
@STAGED
def validate(
    control_plane: str | None, commit: str | None, main_branch: str, committed: bool, staged: bool
) -> None:
    """Load and check main and every environment branch; render each environment."""

    cp = control_plane_at(control_plane, main_branch)
    with_edits(cp, commit, committed, staged)
    sha = cp.resolve(commit)
    main = cp.main(sha)
    announce_edits(cp, main)
    Renderer(all_templates(main)).compile_all()
    for env in main.pipeline.environments:
        rendered = render_environment(main, cp.environment(env), env.name)
        click.echo(f"{env.name}: ok, {len(rendered.assignments)} assignments, {len(rendered.files)} files")
    click.echo(f"valid: main {sha[:12]}, {len(main.workloads)} workloads, {len(main.templates)} templates")
