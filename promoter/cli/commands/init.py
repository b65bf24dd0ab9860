"""``promoter init``: scaffold a control-plane repo's workflows (on main and on every environment
branch) and, with ``--skeleton``, a starter control plane (docs/github-actions.md)."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from promoter.cli.commands.completion import complete_environment_list
from promoter.errors import UsageError
from promoter.gitcmd import Git
from promoter.scaffold import local as init_local
from promoter.scaffold import oncall as init_oncall
from promoter.scaffold import skeleton as init_skeleton
from promoter.scaffold import wake as init_wake
from promoter.scaffold import workflows as init_workflows
from promoter.scaffold.setup import local_environments, setup_of
from promoter.scaffold.workflows import Setup
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
    setup = setup_of(promoter_repo, ref, tag, auth, environments, main_branch, private_promoter)
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
    root, branches = _target(out, branch, setup)
    files = _files(
        setup,
        branches,
        skeleton,
        platform_repo or "",
        nested=out is not None and branch is None,
    )
    written = _write(root, files, force)
    for path, state in written:
        click.echo(f"{state:9} {path}")
    _next_steps(setup, root, branches, out, skeleton, platform_repo)


def _local(root: Path, environments: str | None, main: str) -> None:
    """``--local``: both repos made and committed, and what to run in them."""
    names, _, follows = local_environments(environments, main)
    control, platform = init_local.make(root, names, follows, main)
    click.echo(f"made      {control} ({', '.join((main, *names))})")
    click.echo(f"made      {platform} ({', '.join(names)}, each with a README)")
    steps = [
        f"cd {control}",
        "promoter validate                 # loads main and every environment branch, renders each",
        "promoter promote --wait none      # as far as it goes without waiting; run it again to go on",
        "promoter status                   # where the head of main stands in each environment",
        "merge a promotion by hand where it waits for one: docs/getting-started.md#merge-by-hand-on-the-local-forge",
        "on GitHub: push both repos, then write the workflows: docs/getting-started.md#moving-to-github",
    ]
    click.echo("\nnext steps:")
    for i, step in enumerate(steps, 1):
        click.echo(f"  {i}. {step}")


def _target(out: str | None, branch: str | None, setup: Setup) -> tuple[Path, list[str]]:
    """The folder to write into, and the branches whose files go there."""
    every = [setup.main_branch, *setup.branches]
    if branch is not None and branch not in every:
        raise UsageError(
            f"--branch {branch!r}: neither {setup.main_branch} nor an environment's ({', '.join(setup.branches)})"
        )
    if out is not None:
        return Path(out), [branch] if branch else every
    git = Git(".")
    top = git.run("rev-parse", "--show-toplevel", check=False)
    if top.returncode != 0:
        raise UsageError(
            "the working directory is not in a git working tree: run init in your control-plane clone, or give --out DIR"
        )
    if branch is None:
        head = git.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False).stdout.decode().strip()
        if head not in every:
            raise UsageError(
                f"the checked-out branch {head or '(detached HEAD)'!r} is neither {setup.main_branch} nor an "
                f"environment's ({', '.join(setup.branches)}): check one out, or give --branch or --out"
            )
        branch = head
    return Path(top.stdout.decode().strip()), [branch]


def _files(
    setup: Setup, branches: list[str], skeleton: bool, platform_repo: str, nested: bool
) -> dict[str, str]:
    files: dict[str, str] = {}
    for branch in branches:
        if branch == setup.main_branch:
            mine = init_workflows.for_main(setup) | {HOLD_WORKFLOW: init_oncall.hold(setup)}
            if skeleton:
                mine |= init_skeleton.for_main(setup.environments, platform_repo, setup.follows)
        else:
            mine = init_workflows.for_environment(setup)
            if skeleton:
                mine |= init_skeleton.for_environment(setup.environment_of(branch))
        files |= {(f"{branch}/{path}" if nested else path): text for path, text in mine.items()}
    if nested:  # the platform repo's wake-up workflow, beside the control plane's branches
        files |= {f"{PLATFORM_FOLDER}/{p}": text for p, text in init_wake.for_platform(setup).items()}
    return files


def _write(root: Path, files: dict[str, str], force: bool) -> list[tuple[str, str]]:
    """Write ``files`` under ``root``: all of them, or (a file exists with other content and no
    --force) none."""
    states = []
    for path, text in files.items():
        target = root / path
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise UsageError(f"{target}: exists and is not a regular file; nothing written")
        if not target.exists():
            states.append((path, "wrote"))
        elif target.read_text(errors="replace") == text:
            states.append((path, "unchanged"))
        else:
            states.append((path, "replaced"))
    clash = [p for p, s in states if s == "replaced"]
    if clash and not force:
        raise UsageError(
            f"{root / clash[0]} exists with other content ({len(clash)} file{'s' if len(clash) > 1 else ''}); "
            "nothing written: --force replaces them"
        )
    _commit(root, {p: files[p] for p, state in states if state != "unchanged"})
    return states


def _commit(root: Path, files: dict[str, str]) -> None:
    """Write every file beside its place first, then move them all in: a folder that cannot be
    written leaves nothing behind but the folders made."""
    staged: list[tuple[Path, Path]] = []
    try:
        for path, text in files.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            temp = target.with_name(f".{target.name}.promoter-init")
            staged.append((temp, target))
            temp.write_text(text)
    except OSError as err:
        for temp, _ in staged:
            temp.unlink(missing_ok=True)
        raise UsageError(f"{err.filename or root}: cannot write ({err.strerror}); nothing written") from err
    for temp, target in staged:
        temp.replace(target)


#: The on-call's form on main: hold or release (promoter/cli/init_oncall.py).
HOLD_WORKFLOW = ".github/workflows/hold.yml"
#: Where ``--out`` puts the platform repo's workflow.
PLATFORM_FOLDER = "platform-repo"
WAKE_TOKEN = {
    "app": "the App installed on the control plane with Contents read and write (the dispatch), "
    "its id and key as the same two secrets",
    "token": "PROMOTER_WAKE_TOKEN, a fine-grained token on the control plane with Contents read and write",
}

PERMISSIONS = (
    "on the platform repo Contents and Pull requests read and write, Commit statuses read; "
    "on this repo Contents read and write (holds, overrides and notifications on refs/promoter/*, "
    "a release's promoter-wake), Commit statuses read and write, Variables read and write "
    "(the heartbeat's PROMOTER_HEARTBEAT), which validate --github checks"
)
SECRETS = {
    "app": f"PROMOTER_GITHUB_APP_ID and PROMOTER_GITHUB_APP_PRIVATE_KEY (a GitHub App installed on both: {PERMISSIONS})",
    "token": f"PROMOTER_GITHUB_TOKEN (a fine-grained token: {PERMISSIONS})",
}


def _again(setup: Setup, skeleton: bool, platform_repo: str | None) -> str:
    """The command line that writes the same files on another branch."""
    args = ["promoter", "init", "--promoter-repo", setup.promoter_repo, "--ref", setup.ref]
    args += ["--tag", setup.tag] if setup.tag else []
    args += ["--auth", setup.auth] if setup.auth != "app" else []
    # environments kept on branches of other names come from the Pipeline, read again there
    args += ["--environments", ",".join(setup.environments)] if setup.branches == setup.environments else []
    args += ["--main-branch", setup.main_branch] if setup.main_branch != "main" else []
    args += ["--private-promoter"] if setup.private_promoter else []
    args += ["--skeleton", "--platform-repo", platform_repo] if skeleton and platform_repo else []
    return shlex.join(args)


def _settings_steps(setup: Setup) -> list[str]:
    """The control-plane repo's settings: secrets, Environments, the on-call's form."""
    envs = ", ".join(setup.environments)
    steps: list[str] = []
    steps.append(
        f"in the control-plane repo's Settings → Secrets and variables → Actions: {SECRETS[setup.auth]}"
    )
    steps.append(
        "there too, as the Pipeline needs them: PROMOTER_NOTIFICATIONS_ENV (its receivers' urlFrom and "
        "secretFrom, as NAME=value lines) and PROMOTER_GATES_ENV (its gates' and the hub's: ARGOCD_AUTH_TOKEN, "
        "PROMOTER_PROMETHEUS_TOKEN, PROMOTER_HUB_URL, PROMOTER_HUB_TOKEN, a gate's tokenEnv)"
    )
    steps.append(
        f"Settings → Environments: create {envs} (required reviewers and wait timers are the approvals)"
    )
    steps.append(
        f"on-call: Actions → hold or release ({HOLD_WORKFLOW}) holds an environment with a reason and an "
        "end, and a release wakes the promotion; from a laptop: promoter hold ENV --reason TEXT --until 4h, "
        "promoter release ENV (docs/change-control.md#holds)"
    )
    return steps


def _next_steps(
    setup: Setup, root: Path, branches: list[str], out: str | None, skeleton: bool, platform_repo: str | None
) -> None:
    main, on = setup.main_branch, ", ".join(setup.branches)
    steps = []
    if out is not None and len(branches) > 1:
        steps.append(
            f"commit {root / main}/ to {main} and {root}/<branch>/ to each environment branch ({on}), "
            "through pull requests"
        )
    else:
        (branch,) = branches
        steps.append(f"commit these files to {branch} (through a pull request)")
        rest = [b for b in (main, *setup.branches) if b != branch]
        again = _again(setup, skeleton, platform_repo)
        steps.append(f"check out each other branch ({', '.join(rest)}) in turn and run: {again}")
    steps += _settings_steps(setup)
    steps.append(f"branch protection: require the render check on {main} and on {on}")
    steps.append(
        f"in the platform repo: {PLATFORM_FOLDER}/.github/workflows/promoter-wake.yml (promoter init --out DIR "
        f"writes it) on its default branch and on each of its environment branches: a merged promotion "
        "PR runs the workflow of its base branch; the variable PROMOTER_CONTROL_PLANE (owner/name) "
        f"and {WAKE_TOKEN[setup.auth]} (docs/github-actions.md#waking-the-promotion)"
    )
    steps.append(
        "with a hub (hub gates): promoter hub serve --wake-repo <this repo's owner/name>, with a token or "
        "the App (Contents read and write here), wakes a waiting hub gate at once "
        "(docs/github-actions.md#the-hub-wakes-the-promotion)"
    )
    steps.append(
        f"let this repo use {setup.promoter_repo}'s workflows: Settings → Actions → General "
        "(docs/github-actions.md#hosting-the-promoter)"
        + (
            f"; in {setup.promoter_repo}, Access: accessible from your organization; "
            + ("install the App on it too, Contents read" if setup.auth == "app" else "let the token read it")
            if setup.private_promoter
            else ""
        )
    )
    if skeleton:
        steps.append("edit promoter.yaml's gates and the Workload's repo, then: promoter validate")
    click.echo("\nnext steps:")
    for i, step in enumerate(steps, 1):
        click.echo(f"  {i}. {step}")
