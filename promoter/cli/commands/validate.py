"""``promoter validate``: load and check main and every environment branch."""

from __future__ import annotations

import os
from typing import Any

import click

from promoter import clock as clocks
from promoter.changecontrol.notify import unset_variables
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
from promoter.cli.commands.kalypso import KALYPSO_NAMING, open_kalypso, validate_kalypso
from promoter.cli.output import OUTPUT, emit, snapshot_of
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.errors import PromoterError, UsageError, one_line
from promoter.forges.credentials import github_credentials
from promoter.ghactions.heartbeat import VARIABLE as HEARTBEAT_VARIABLE
from promoter.model import MainObjects
from promoter.promotion.validation import (
    EnvironmentCheck,
    branches,
    check_environment,
    check_sources,
    github_findings,
)
from promoter.rendering.builtins import all_templates
from promoter.rendering.render import Renderer
from promoter.runtime import Runtime, build_runtime, forge_kind


@click.command()
@VERBOSE
@RENDER_BUDGET
@CONTROL_PLANE
@COMMIT
@KALYPSO_NAMING
@MAIN_BRANCH
@COMMITTED
@STAGED
@click.option(
    "--sources",
    "check_sources",
    is_flag=True,
    help="Also ask every workload's manifests source whether it answers: git repo and branch, "
    "OCI repository, Helm repository and chart (docs/configuration.md#sources-that-answer).",
)
@click.option(
    "--github",
    "check_github",
    is_flag=True,
    help="Also check that the GitHub credentials in the environment may do what a promotion does: "
    "push to the control plane (refs/promoter/*, promoter-wake) and the platform repo, read statuses, "
    "read and write the heartbeat's variable; nothing is changed (docs/github-actions.md#holds-windows-and-overrides).",
)
@click.option(
    "--receivers",
    "check_receivers",
    is_flag=True,
    help="Exit 2 when a notification receiver's variable (urlFrom, secretFrom) is not set here, in the "
    "environment or in PROMOTER_NOTIFICATIONS_ENV; without it, a note (docs/change-control.md#notifications).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Warnings are errors (exit 2): a config ConfigMap that matches nothing, a removal the guard "
    "reports; for CI (docs/configuration.md#what-validate-warns-of).",
)
@OUTPUT
def validate(
    control_plane: str | None,
    commit: str | None,
    main_branch: str,
    committed: bool,
    staged: bool,
    check_sources: bool,
    check_github: bool,
    check_receivers: bool,
    strict: bool,
    output: str,
) -> None:
    """Load and check main and every environment branch; render each environment.

    \b
    Examples:
      promoter validate                  # the repo of the working directory, edits included
      promoter validate --staged         # what `git commit` would record (pre-commit)
      promoter validate --commit v1.4 -o json
      promoter validate --sources        # and every manifests source answers
      promoter validate --github         # and the GitHub token may do what a promotion does
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
    _check_receivers(main, output, strict=check_receivers)
    Renderer(all_templates(main)).compile_all()
    platforms = _platforms(cp, main)
    envs = [
        _environment(check_environment(cp, platforms, main, env, objects), output)
        for env, objects in branches(cp, main)
    ]
    warned = sum(len(e.warnings) + len(e.removals) for e in envs)
    if strict and warned:
        raise UsageError(f"--strict: {warned} warning(s) above; each is an error in strict mode")
    if check_sources:
        _check_sources(main, output)
    if check_github:
        _check_github(cp, main, sha, output)
    if output != "text":
        emit(_data(cp, sha, main, envs), output)
        return
    click.echo(f"valid: main {sha[:12]}, {len(main.workloads)} workloads, {len(main.templates)} templates")


def _environment(check: EnvironmentCheck, output: str) -> EnvironmentCheck:
    """One environment's warnings on stderr, as they were found, and its line (text)."""
    for line in check.removals + check.warnings:
        click.echo(one_line(f"warning: {line}"), err=True)
    if output == "text":
        rollout = f", waves {' -> '.join(check.waves)}" if check.waves else ""
        rendered = check.rendered
        click.echo(
            f"{check.environment}: ok, {len(rendered.assignments)} assignments, {len(rendered.files)} files{rollout}"
        )
    return check


def _data(cp: Any, sha: str, main: Any, envs: list[EnvironmentCheck]) -> dict[str, Any]:
    """What ``validate -o json|yaml`` prints (docs/cli.md)."""
    return {
        "valid": True,
        "mainCommit": sha,
        "workloads": len(main.workloads),
        "templates": len(main.templates),
        "environments": [e.to_json() for e in envs],
        "uncommitted": snapshot_of(cp),
    }


def _check_receivers(main: MainObjects, output: str, *, strict: bool) -> None:
    """Each receiver's variable not set here: with ``--receivers``, exit 2 at the first; else a
    note on stderr (a developer's machine or a pull request's check holds no receiver's URL)."""
    problems = unset_variables(main.pipeline.notifications, os.environ)
    if strict and problems:
        raise problems[0]
    for problem in problems:
        click.echo(f"note: {problem} (validate --receivers makes it an error)", err=True)
    if strict and main.pipeline.notifications and output == "text":
        click.echo(f"receivers: ok, {len(main.pipeline.notifications)} with their variables set")


def _check_sources(main: MainObjects, output: str) -> None:
    """``--sources``: exit 2 at the first target whose source does not answer."""
    count = check_sources(main)
    if output == "text":
        click.echo(f"sources: ok, {count} answered")


def _check_github(cp: ControlPlane, main: MainObjects, sha: str, output: str) -> None:
    """``--github``: a line per permission the promotion needs; exit 2 when one is missing."""
    if forge_kind(main.pipeline) != "github":
        raise UsageError("--github: the Pipeline's platform repo is not on GitHub; there is nothing to check")
    findings = github_findings(cp, main, sha, HEARTBEAT_VARIABLE, clocks.RealClock(), os.environ)
    if output == "text":
        for finding in findings:
            click.echo(f"github: {finding.text}" if finding.ok else f"github: error: {finding.text}")
    missing = [f.text for f in findings if not f.ok]
    if missing:
        raise UsageError(f"--github: {len(missing)} permission(s) missing: {missing[0]}")


def _platforms(cp: ControlPlane, main: MainObjects) -> Runtime | None:
    """The platform repos to compare renders with: the local forge's, and a GitHub one when the
    environment holds its credentials, read as ``diff`` and ``promote`` read them (``validate``
    itself needs none: without them it compares nothing)."""
    github = forge_kind(main.pipeline) != "local"
    if github and not github_credentials():
        return None
    try:
        return build_runtime(cp, main.pipeline, Console(quiet=True))
    except PromoterError as err:  # no platform repo yet: nothing to remove
        if github:
            click.echo(f"note: removals not compared with the platform repo: {one_line(str(err))}", err=True)
        return None
