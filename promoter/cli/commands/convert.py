"""``promoter convert --from kalypso``: write a Kalypso control plane as promoter's own, a git repo
with ``main`` and one branch per environment (docs/kalypso.md#convert)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import click

from promoter.cli.commands.common import COMMIT, CONTROL_PLANE, MAIN_BRANCH
from promoter.cli.commands.common import control_plane as control_plane_at
from promoter.cli.commands.completion import complete_environment_list
from promoter.cli.commands.kalypso import KALYPSO_NAMING, open_kalypso, order_of
from promoter.demos.promotion import commit_folder
from promoter.errors import UsageError
from promoter.gitcmd import Git
from promoter.kalypso.convert import Converted, convert

EXAMPLES = """\b
Examples:
  promoter convert --from kalypso --control-plane ./kalypso-control-plane --environments dev,stage --out ./promoter-cp
  promoter render --control-plane ./promoter-cp --env dev --out ./out
"""


@click.command("convert", epilog=EXAMPLES)
@click.option("--from", "source", type=click.Choice(["kalypso"]), required=True, help="What to convert from.")
@CONTROL_PLANE
@COMMIT
@KALYPSO_NAMING
@click.option("--out", required=True, help="A new git repo to write (absent, or an empty directory).")
@click.option(
    "--environments",
    default=None,
    metavar="ENV,ENV",
    shell_complete=complete_environment_list,
    help="The environments in promotion order.",
)
@click.option(
    "--environments-file",
    default=None,
    metavar="FILE",
    help="A Pipeline listing the environments in order, with merge, timeout and gates.",
)
@MAIN_BRANCH
def convert_command(
    source: str,
    control_plane: str | None,
    commit: str | None,
    out: str,
    environments: str | None,
    environments_file: str | None,
    main_branch: str,
) -> None:
    """Write a Kalypso control plane as a promoter control plane (a new git repo)."""
    cp = control_plane_at(control_plane, main_branch)
    kcp = open_kalypso(cp, commit)
    if kcp is None:
        raise UsageError(
            f"--from {source}: {cp.path} is not a Kalypso control plane ({cp.main_branch} has a promoter.yaml, "
            "or no WorkloadRegistration or Environment of scheduler.kalypso.io/v1alpha1)"
        )
    target = Path(out)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UsageError(f"--out {out}: exists and is not an empty directory")
    converted = convert(kcp, order_of(environments, environments_file), cp.resolve(commit))
    _write_repo(converted, target)
    branches = ", ".join(f"{b} ({len(files)} files)" for b, files in converted.branches.items())
    workloads = ", ".join(f"{n}@{c[:12]}" for n, c in sorted(converted.workload_commits.items()))
    click.echo(f"converted to {out}: {branches}; workloads {workloads or 'none'}")
    if converted.left_out:
        left_out = ", ".join(converted.left_out)
        click.echo(f"warning: targets of environments not converted were left out: {left_out}", err=True)


def _write_repo(converted: Converted, target: Path) -> None:
    """The repo is built beside ``target`` and moved into place whole: nothing half-written."""
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        repo = work / "repo"
        Git(work).run("init", "--quiet", "--initial-branch=main", str(repo))
        git = Git(repo)
        for branch, files in converted.branches.items():
            folder = work / f"branch-{len(os.listdir(work))}"
            for path, data in files.items():
                (folder / path).parent.mkdir(parents=True, exist_ok=True)
                (folder / path).write_bytes(data)
            commit_folder(git, folder, branch, f"{branch}: converted from Kalypso by promoter convert")
        git.run("reset", "--quiet", "--hard")
        if target.exists():
            target.rmdir()
        repo.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
