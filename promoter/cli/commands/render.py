"""``promoter render``: write the tree that would be committed for one environment."""

from __future__ import annotations

import shutil
from pathlib import Path

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
from promoter.errors import UsageError
from promoter.platform.provenance import PROVENANCE, Provenance
from promoter.rendering.tree import render_environment


@click.command()
@CONTROL_PLANE
@click.option("--env", "env_name", required=True, help="The environment to render.")
@COMMIT
@click.option(
    "--out", required=True, type=click.Path(file_okay=False), help="Directory to write the tree into."
)
@MAIN_BRANCH
@COMMITTED
@STAGED
def render(
    control_plane: str | None,
    env_name: str,
    commit: str | None,
    out: str,
    main_branch: str,
    committed: bool,
    staged: bool,
) -> None:
    """Write the tree that would be committed for one environment."""

    cp = control_plane_at(control_plane, main_branch)
    with_edits(cp, commit, committed, staged)
    sha = cp.resolve(commit)
    main = cp.main(sha)
    announce_edits(cp, main)
    env = main.pipeline.environment(env_name)
    if env is None:
        raise UsageError(
            f"--env {env_name}: no such environment (the Pipeline has {', '.join(e.name for e in main.pipeline.environments)})"
        )
    objects = cp.environment(env)
    rendered = render_environment(main, objects, env.name)
    target = Path(out)
    if target.exists() and any(target.iterdir()):
        if not (target / PROVENANCE).exists():
            raise UsageError(f"--out {out}: not empty and not an earlier render; choose an empty directory")
        shutil.rmtree(target)
    files = dict(rendered.files)
    files[PROVENANCE] = Provenance.of(main, env, objects, rendered).text()
    for path, data in files.items():
        dest = target / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    click.echo(
        f"{env.name}: wrote {len(rendered.files)} files for {len(rendered.assignments)} assignments to {out}"
    )
