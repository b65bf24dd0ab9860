"""``promoter init``: scaffold a control-plane repo's workflows (on main and on every environment
branch) and, with ``--skeleton``, a starter control plane (docs/github-actions.md)."""

from __future__ import annotations

from pathlib import Path

import click

from promoter.cli.commands.completion import complete_environment_list
from promoter.errors import UsageError
from promoter.scaffold import local as local_repos
from promoter.scaffold.files import files_of, target, write
from promoter.scaffold.setup import local_environments, setup_of
from promoter.scaffold.steps import local_steps, next_steps
from promoter.urls import url_problem

EXAMPLES = """
\b
Examples:
  # a first day without GitHub: a control plane and a platform repo to try, in new repos
  promoter init --local /tmp/promoter-trial --environments dev,qa,prod-eu:qa,prod-us:qa
  # in your control-plane clone, on main: main's workflows, pinned to your copy's v0.1.0
  promoter init --promoter-repo acme/promoter --ref 5e1f4c2a9b7d3e8f6a0c1b2d4e6f8a0b1c3d5e7f --tag v0.1.0
  # then on each environment branch, the same command: that branch's workflows
  git checkout dev
  promoter init --promoter-repo acme/promoter --ref 5e1f4c2a9b7d3e8f6a0c1b2d4e6f8a0b1c3d5e7f --tag v0.1.0
  # a new control plane: every branch's files in a folder each, a starter Pipeline, token auth
  promoter init --promoter-repo acme/promoter --ref 5e1f4c2a9b7d3e8f6a0c1b2d4e6f8a0b1c3d5e7f \\
      --out /tmp/cp --skeleton --platform-repo https://github.com/acme/platform \\
      --auth token --environments dev,staging,prod
  # a fan-out: staging, then prod-eu and prod-us side by side, then global-edge after both
  promoter init --promoter-repo acme/promoter --ref 5e1f4c2a9b7d3e8f6a0c1b2d4e6f8a0b1c3d5e7f \\
      --out /tmp/cp --skeleton --platform-repo https://github.com/acme/platform \\
      --environments staging,prod-eu:staging,prod-us:staging,global-edge:prod-eu+prod-us
"""


@click.command("init", epilog=EXAMPLES)
@click.option(
    "--local",
    default=None,
    type=click.Path(file_okay=False),
    help="Make a control-plane repo and a platform repo in this new folder, committed, for the local forge: "
    "a first day without GitHub (no --promoter-repo or --ref).",
)
@click.option("--promoter-repo", default=None, metavar="OWNER/NAME", help="Your team's copy of the promoter.")
@click.option(
    "--ref",
    default=None,
    metavar="SHA|TAG",
    help="The promoter commit to pin: a full SHA, or a release tag (v1.2.3), pinned as its commit's SHA.",
)
@click.option(
    "--tag", default=None, metavar="TAG", help="The tag of that SHA, written after each pin as a comment."
)
@click.option(
    "--auth",
    type=click.Choice(["app", "token"]),
    default="app",
    show_default=True,
    help="A GitHub App (PROMOTER_GITHUB_APP_ID and _PRIVATE_KEY) or a token (PROMOTER_GITHUB_TOKEN).",
)
@click.option(
    "--environments",
    default=None,
    metavar="A,B,...",
    shell_complete=complete_environment_list,
    help="The environments in promotion order, each kept on the branch of its name; NAME:UP1+UP2 for "
    "one that follows others than the one before it (staging,prod-eu:staging,prod-us:staging) "
    "(default: the Pipeline's on the main branch of the working directory's repo, else dev,qa,prod).",
)
@click.option(
    "--main-branch",
    default="main",
    show_default=True,
    metavar="NAME",
    help="The control plane's promoted branch.",
)
@click.option("--private-promoter", is_flag=True, help="The promoter's copy is a private repository.")
@click.option(
    "--skeleton", is_flag=True, help="Also write a starter Pipeline, Workload and environment files."
)
@click.option(
    "--platform-repo", default=None, metavar="URL", help="The platform GitOps repo (with --skeleton)."
)
@click.option(
    "--out",
    default=None,
    type=click.Path(file_okay=False),
    help="Write into this folder, one subfolder per branch (default: the working tree, its branch's files).",
)
@click.option(
    "--branch",
    default=None,
    metavar="BRANCH",
    help="Write only this branch's files, at the top of the target.",
)
@click.option("--force", is_flag=True, help="Overwrite files that exist with other content.")
def init(
    local: str | None,
    promoter_repo: str | None,
    ref: str | None,
    tag: str | None,
    auth: str,
    environments: str | None,
    main_branch: str,
    private_promoter: bool,
    skeleton: bool,
    platform_repo: str | None,
    out: str | None,
    branch: str | None,
    force: bool,
) -> None:
    """Write the GitHub Actions workflows of a control-plane repo, for main and for every
    environment branch, pinned to your copy of the promoter; with --skeleton, a starter control
    plane too. Nothing existing is overwritten without --force. With --local DIR, a control
    plane and a platform repo to try it on, as git repositories, and no workflows."""
    if local is not None:
        return _local(Path(local), environments, main_branch)
    if not promoter_repo or not ref:
        raise UsageError(
            f"{'--ref' if promoter_repo else '--promoter-repo'} is needed to pin the workflows to your copy of the "
            "promoter (or --local DIR: repos to try it on, no GitHub)"
        )
    setup = setup_of(promoter_repo, ref, tag, auth, environments, main_branch, private_promoter, _note)
    _check_platform_repo(skeleton, platform_repo)
    root, branches = target(out, branch, setup)
    files = files_of(
        setup, branches, skeleton, platform_repo or "", nested=out is not None and branch is None
    )
    for path, state in write(root, files, force):
        click.echo(f"{state:9} {path}")
    _say_steps(next_steps(setup, root, branches, out, skeleton, platform_repo))


def _check_platform_repo(skeleton: bool, platform_repo: str | None) -> None:
    """``--platform-repo`` goes with ``--skeleton``, and names a repo on GitHub."""
    if skeleton and not platform_repo:
        raise UsageError(
            "--skeleton needs --platform-repo URL: the platform GitOps repo the Pipeline renders to"
        )
    if platform_repo is not None:
        problem = url_problem(platform_repo, "github")
        if not skeleton or problem:
            raise UsageError(
                f"--platform-repo {platform_repo!r}: {problem or 'goes with --skeleton (it is written in the Pipeline)'}"
            )


def _local(root: Path, environments: str | None, main: str) -> None:
    """``--local``: both repos made and committed, and what to run in them."""
    names, _, follows = local_environments(environments, main)
    control, platform = local_repos.make(root, names, follows, main)
    click.echo(f"made      {control} ({', '.join((main, *names))})")
    click.echo(f"made      {platform} ({', '.join(names)}, each with a README)")
    _say_steps(local_steps(control))


def _say_steps(steps: list[str]) -> None:
    click.echo("\nnext steps:")
    for i, step in enumerate(steps, 1):
        click.echo(f"  {i}. {step}")


def _note(line: str) -> None:
    click.echo(line, err=True)
