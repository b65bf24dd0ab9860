"""``promoter render``: write the tree that would be committed for one environment."""

from __future__ import annotations

from pathlib import Path
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
from promoter.cli.commands.kalypso import KALYPSO_NAMING, open_kalypso, render_kalypso
from promoter.cli.output import OUTPUT, emit, snapshot_of
from promoter.errors import UsageError
from promoter.platform.provenance import PROVENANCE, Provenance
from promoter.rendering.tree import render_environment
from promoter.rendering.writing import stream, write_tree


@click.command()
@VERBOSE
@RENDER_BUDGET
@CONTROL_PLANE
@click.option(
    "--env",
    "env_name",
    required=True,
    shell_complete=complete_environments,
    help="The environment to render.",
)
@COMMIT
@KALYPSO_NAMING
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, allow_dash=True),
    help="Directory to write the tree into; '-' streams the manifests to stdout as one multi-document YAML.",
)
@MAIN_BRANCH
@COMMITTED
@STAGED
@OUTPUT
def render(
    control_plane: str | None,
    env_name: str,
    commit: str | None,
    out: str,
    main_branch: str,
    committed: bool,
    staged: bool,
    output: str,
) -> None:
    """Write the tree that would be committed for one environment.

    \b
    Examples:
      promoter render --env dev --out ../render-dev
      promoter render --env qa --out - | kubectl apply --dry-run=client -f -
      promoter render --env prod --out ../render-prod -o json
    """
    if out == "-" and output != "text":
        raise UsageError("--out - writes the manifests to stdout; -o/--output applies to a directory render")
    cp = control_plane_at(control_plane, main_branch)
    kcp = open_kalypso(cp, commit)
    if kcp is not None:
        render_kalypso(kcp, env_name, commit, out)
        return
    with_edits(cp, commit, committed, staged)
    sha = cp.resolve(commit)
    main = cp.main(sha)
    announce_edits(cp, main)
    env = _environment(main, env_name)
    objects = cp.environment(env)
    rendered = render_environment(main, objects, env.name)
    if out == "-":
        click.echo(stream(rendered.files), nl=False)
        return
    provenance = Provenance.of(main, env, objects, rendered).text()
    write_tree(Path(out), out, {**rendered.files, PROVENANCE: provenance}, PROVENANCE)
    if output != "text":
        emit(_summary(cp, env.name, sha, objects.commit, out, rendered), output)
        return
    click.echo(
        f"{env.name}: wrote {len(rendered.files)} files for {len(rendered.assignments)} assignments to {out}"
    )


def _summary(cp: Any, env: str, sha: str, env_commit: str, out: str, rendered: Any) -> dict[str, Any]:
    """What ``-o json|yaml`` prints for a render (docs/cli.md)."""
    return {
        "environment": env,
        "mainCommit": sha,
        "environmentCommit": env_commit,
        "out": out,
        "assignments": len(rendered.assignments),
        "files": sorted(rendered.files),
        "uncommitted": snapshot_of(cp),
    }


def _environment(main: Any, name: str) -> Any:
    env = main.pipeline.environment(name)
    if env is None:
        names = ", ".join(e.name for e in main.pipeline.environments)
        raise UsageError(f"--env {name}: no such environment (the Pipeline has {names})")
    return env
