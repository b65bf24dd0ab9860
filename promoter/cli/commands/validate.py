"""``promoter validate``: load and check main and every environment branch."""

from __future__ import annotations

import click

from promoter.cli.commands.common import COMMIT, CONTROL_PLANE, MAIN_BRANCH
from promoter.cli.commands.common import control_plane as control_plane_at
from promoter.promotion.waves import resolve
from promoter.rendering.builtins import all_templates
from promoter.rendering.render import Renderer
from promoter.rendering.tree import render_environment


@click.command()
@CONTROL_PLANE
@COMMIT
@MAIN_BRANCH
def validate(control_plane: str, commit: str | None, main_branch: str) -> None:
    """Load and check main and every environment branch; render each environment."""

    cp = control_plane_at(control_plane, main_branch)
    sha = cp.resolve(commit)
    main = cp.main(sha)
    Renderer(all_templates(main)).compile_all()
    for env in main.pipeline.environments:
        objects = cp.environment(env)
        rendered = render_environment(main, objects, env.name)
        waves = resolve(env, objects)  # the waves over the branch's cluster types
        rollout = f", waves {' -> '.join(w.name for w in waves)}" if env.waves else ""
        click.echo(
            f"{env.name}: ok, {len(rendered.assignments)} assignments, {len(rendered.files)} files{rollout}"
        )
    click.echo(f"valid: main {sha[:12]}, {len(main.workloads)} workloads, {len(main.templates)} templates")
