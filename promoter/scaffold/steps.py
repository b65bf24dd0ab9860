"""The next steps ``promoter init`` says once its files are written: the secrets and settings
of the control-plane repo, the platform repo's wake-up, the hub, the promoter's own hosting; and
those of ``--local``. Pure: each returns lines, the command prints them."""

from __future__ import annotations

import shlex
from pathlib import Path

from promoter.scaffold.files import HOLD_WORKFLOW, PLATFORM_FOLDER
from promoter.scaffold.workflows import Setup

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


def again(setup: Setup, skeleton: bool, platform_repo: str | None) -> str:
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


def settings_steps(setup: Setup) -> list[str]:
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


def next_steps(
    setup: Setup, root: Path, branches: list[str], out: str | None, skeleton: bool, platform_repo: str | None
) -> list[str]:
    """What to do once the files of ``branches`` are written under ``root``."""
    main, on = setup.main_branch, ", ".join(setup.branches)
    steps = _commit_steps(setup, root, branches, out, skeleton, platform_repo)
    steps += settings_steps(setup)
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
    return steps


def _commit_steps(
    setup: Setup, root: Path, branches: list[str], out: str | None, skeleton: bool, platform_repo: str | None
) -> list[str]:
    """Where the written files go: each folder to its branch, or these files to this branch and
    the same command on every other."""
    main, on = setup.main_branch, ", ".join(setup.branches)
    if out is not None and len(branches) > 1:
        return [
            f"commit {root / main}/ to {main} and {root}/<branch>/ to each environment branch ({on}), "
            "through pull requests"
        ]
    (branch,) = branches
    rest = [b for b in (main, *setup.branches) if b != branch]
    return [
        f"commit these files to {branch} (through a pull request)",
        f"check out each other branch ({', '.join(rest)}) in turn and run: {again(setup, skeleton, platform_repo)}",
    ]


def local_steps(control: Path) -> list[str]:
    """``--local``: what to run in the control plane just made."""
    return [
        f"cd {control}",
        "promoter validate                 # loads main and every environment branch, renders each",
        "promoter promote --wait none      # as far as it goes without waiting; run it again to go on",
        "promoter status                   # where the head of main stands in each environment",
        "merge a promotion by hand where it waits for one: docs/getting-started.md#merge-by-hand-on-the-local-forge",
        "on GitHub: push both repos, then write the workflows: docs/getting-started.md#moving-to-github",
    ]
