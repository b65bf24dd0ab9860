"""``promoter validate``: load and check main and every environment branch."""

from __future__ import annotations

from typing import Any

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
from promoter.cli.commands.kalypso import KALYPSO_NAMING, open_kalypso, validate_kalypso
from promoter.cli.output import OUTPUT, emit, snapshot_of
from promoter.promotion.waves import resolve
from promoter.rendering.builtins import all_templates
from promoter.rendering.render import Renderer
from promoter.rendering.tree import render_environment


@click.command()
@CONTROL_PLANE
@COMMIT
@KALYPSO_NAMING
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
        objects = cp.environment(env)
        rendered = render_environment(main, objects, env.name)
        waves = (
            [w.name for w in resolve(env, objects)] if env.waves else []
        )  # over the branch's cluster types
        envs.append(_env_data(env.name, rendered, waves))
        if output == "text":
            rollout = f", waves {' -> '.join(waves)}" if waves else ""
            click.echo(
                f"{env.name}: ok, {len(rendered.assignments)} assignments, {len(rendered.files)} files{rollout}"
            )
    if output != "text":
        emit(_data(cp, sha, main, envs), output)
        return
    click.echo(f"valid: main {sha[:12]}, {len(main.workloads)} workloads, {len(main.templates)} templates")


def _data(cp: Any, sha: str, main: Any, envs: list[dict[str, Any]]) -> dict[str, Any]:
    """What ``validate -o json|yaml`` prints (docs/cli.md)."""
    return {
        "valid": True,
        "mainCommit": sha,
        "workloads": len(main.workloads),
        "templates": len(main.templates),
        "environments": envs,
        "uncommitted": snapshot_of(cp),
    }


def _env_data(name: str, rendered: Any, waves: list[str]) -> dict[str, Any]:
    """One environment of ``validate -o json|yaml``."""
    data: dict[str, Any] = {
        "environment": name,
        "assignments": len(rendered.assignments),
        "files": len(rendered.files),
    }
    if waves:
        data["waves"] = waves
    return data
