"""``promoter check-platform``: smoke-check a rendered platform tree (a command gate)."""

from __future__ import annotations

import sys

import click

from promoter.cli.output import OUTPUT, emit
from promoter.errors import UsageError
from promoter.gitcmd import Git
from promoter.platform.checks import check_tree


@click.command("check-platform")
@click.option(
    "--repo",
    # as a gate: the promoter's local clone first, since PROMOTER_PLATFORM_REPO may be a URL
    envvar=["PROMOTER_PLATFORM_CACHE", "PROMOTER_PLATFORM_REPO"],
    required=True,
    help="Platform repo path (default: $PROMOTER_PLATFORM_CACHE, else $PROMOTER_PLATFORM_REPO).",
)
@click.option(
    "--ref",
    envvar="PROMOTER_PLATFORM_SHA",
    required=True,
    help="Commit to check (default: $PROMOTER_PLATFORM_SHA).",
)
@click.option(
    "--path", "root", envvar="PROMOTER_PLATFORM_PATH", default=".", help="The environment's folder."
)
@click.option(
    "--expect-commit", envvar="PROMOTER_COMMIT", default=None, help="Main commit the provenance must name."
)
@OUTPUT
def check_platform(repo: str, ref: str, root: str, expect_commit: str | None, output: str) -> None:
    """Smoke-check a rendered platform tree at one commit (for use as a command gate).

    \b
    Examples:
      promoter check-platform --repo ../platform.git --ref dev --path .
      promoter check-platform --repo ../platform.git --ref 1f2e3d4 -o json
      (as a gate, the promoter sets PROMOTER_PLATFORM_CACHE, _REPO, _SHA, _PATH and PROMOTER_COMMIT)
    """

    git = Git(repo.removeprefix("file://"))
    commit = git.commit_of(ref)
    if commit is None:
        raise UsageError(f"--ref {ref}: no such commit in {repo}")
    result = check_tree(git, commit, "" if root in (".", "") else root.strip("/"), expect_commit)
    if output != "text":
        emit(
            {
                "ok": not result.problems,
                "commit": commit,
                "manifests": result.manifests,
                "folders": result.folders,
                "problems": result.problems,
            },
            output,
        )
        if result.problems:
            sys.exit(1)
        return
    for problem in result.problems:
        click.echo(f"problem: {problem}", err=True)
    if result.problems:
        count = len(result.problems)
        click.echo(
            f"{count} problem{'' if count == 1 else 's'} in {result.manifests} manifests at {commit[:12]}",
            err=True,
        )
        sys.exit(1)
    click.echo(f"ok: {result.manifests} manifests in {result.folders} folders at {commit[:12]}")
