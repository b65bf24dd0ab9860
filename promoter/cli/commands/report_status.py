"""``promoter report-status``: post a commit status on a platform-repo commit of the local forge.

On GitHub the clusters' reconcilers post statuses through the API (Flux's ``github`` provider,
Argo CD notifications); on the local forge the statuses live in git notes of the platform repo
(``refs/notes/promoter``), and this command is how a cluster, a script or a test posts one.
The ``commitStatus`` gate reads them back.
"""

from __future__ import annotations

from pathlib import Path

import click

from promoter.errors import UsageError, shorten
from promoter.forges.notes import STATES, NoteStatuses
from promoter.gitcmd import Git
from promoter.masking import mask
from promoter.model import DESCRIPTION_LIMIT, Status


@click.command("report-status")
@click.option(
    "--repo",
    envvar="PROMOTER_PLATFORM_REPO",
    required=True,
    help="The local platform repo: a path or file:// URL (default: $PROMOTER_PLATFORM_REPO).",
)
@click.option(
    "--commit",
    "ref",
    envvar="PROMOTER_PLATFORM_SHA",
    required=True,
    help="The platform commit (sha or branch) the status is about (default: $PROMOTER_PLATFORM_SHA).",
)
@click.option("--context", required=True, help="The status context, e.g. kustomization/apps/1a2b3c4d.")
@click.option("--state", required=True, type=click.Choice(STATES), help="The status state.")
@click.option(
    "--description", default="", help="A short text (cut at a word to 140 characters, as GitHub keeps)."
)
@click.option("--target-url", default=None, help="A link to details (a dashboard, a log).")
def report_status(
    repo: str, ref: str, context: str, state: str, description: str, target_url: str | None
) -> None:
    """Post a commit status on a platform-repo commit of the local forge (as a cluster would).

    \b
    Examples:
      promoter report-status --context flux/west-small --state success
      promoter report-status --repo ../platform.git --commit 1f2e3d4 \\
          --context argocd/app --state failure --description "Degraded"
    """

    git = Git(_local_path(repo))
    commit = git.commit_of(ref)
    if commit is None:
        raise UsageError(f"--commit {ref}: no such commit in {repo}")
    if not context.strip():
        raise UsageError("--context must not be empty")
    status = Status(context.strip(), state, shorten(description, DESCRIPTION_LIMIT), target_url or None)
    NoteStatuses(git).post(commit, status)
    click.echo(mask(f"{state} {status.context} on {commit[:12]}"))


def _local_path(repo: str) -> str:

    path = repo.removeprefix("file://")
    if "://" in path or (":" in path.split("/", 1)[0] and "@" in path):
        raise UsageError(
            f"--repo {repo}: report-status writes to a local platform repo; on GitHub the clusters "
            "post statuses through the API (see docs/health-gates.md)"
        )
    if not (Path(path) / "HEAD").exists() and not (Path(path) / ".git").exists():
        raise UsageError(f"--repo {repo}: not a git repository")
    return path
