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
from promoter.errors import Problems, PromoterError, UsageError, one_line
from promoter.gates.flux import runs_flux
from promoter.gates.flux_checks import gate_warnings
from promoter.ghactions.heartbeat import VARIABLE as HEARTBEAT_VARIABLE
from promoter.model import Environment, EnvironmentObjects, MainObjects
from promoter.promotion import removals, sources
from promoter.promotion.removals import Scene
from promoter.promotion.sources import SourceChecker, wanted
from promoter.promotion.waves import Step, resolve
from promoter.rendering.builtins import all_templates
from promoter.rendering.render import Renderer
from promoter.rendering.tree import Rendered, render_environment
from promoter.runtime import Runtime, build_runtime, forge_kind
from promoter.scheduling.targets import PLATFORM_CONFIG, idle_policies


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
    envs = [_environment(cp, platforms, main, env, objects, output) for env, objects in _branches(cp, main)]
    warned = sum(len(e.get("warnings", ())) + len(e.get("removals", ())) for e in envs)
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


def _branches(cp: ControlPlane, main: MainObjects) -> list[tuple[Environment, EnvironmentObjects]]:
    """Every environment branch read, all their problems said at once (then each is rendered: a
    template's problem is the same in every environment, said once)."""
    loaded, problems = [], Problems()
    for env in main.pipeline.environments:
        with problems.each():
            loaded.append((env, cp.environment(env)))
    problems.done()
    return loaded


def _environment(
    cp: ControlPlane,
    platforms: Runtime | None,
    main: MainObjects,
    env: Environment,
    objects: EnvironmentObjects,
    output: str,
) -> dict[str, Any]:
    """Render and check one environment; its line (text) and its data (``-o json``)."""
    rendered = render_environment(main, objects, env.name)
    steps = resolve(env, objects)
    waves = [w.name for w in steps] if env.waves else []  # over the branch's cluster types
    found = _removals(cp, platforms, main, env, objects, rendered, steps)
    unused = _idle_policies(main, env.name, objects) + _unused_config(env.name, objects, rendered)
    unused += _flux_gates(main, env, objects, steps)
    if output == "text":
        rollout = f", waves {' -> '.join(waves)}" if waves else ""
        click.echo(
            f"{env.name}: ok, {len(rendered.assignments)} assignments, {len(rendered.files)} files{rollout}"
        )
    return {**_env_data(env.name, rendered, waves, found), **({"warnings": unused} if unused else {})}


def _idle_policies(main: MainObjects, environment: str, objects: EnvironmentObjects) -> list[str]:
    """A warning for each SchedulingPolicy that assigns nothing (a selector that selects nothing)."""
    warnings = []
    for policy, why in idle_policies(main, objects, environment):
        where = f"{policy.source.file}:{policy.source.line}" if policy.source.line else policy.source.file
        line = f"{where}: SchedulingPolicy {policy.name!r} assigns nothing: {why}"
        click.echo(one_line(f"warning: {line}"), err=True)
        warnings.append(line)
    return warnings


def _flux_gates(
    main: MainObjects, env: Environment, objects: EnvironmentObjects, steps: tuple[Step, ...]
) -> list[str]:
    """A warning for each commitStatus gate that waits for a status the Flux its cluster types
    run cannot post (promoter.gates.flux_checks); each gate once, over every step it gates."""
    judged: dict[tuple[str, ...], tuple[Step, set[str]]] = {}
    for step in steps:
        key = tuple(str(g.source) for g in step.gates)
        judged.setdefault(key, (step, set()))[1].update(step.cluster_types)
    warnings = []
    for step, types in judged.values():
        cluster_types = (objects.cluster_types[name] for name in sorted(types))
        runs = {ct.name: r for ct in cluster_types if (r := runs_flux(ct, main.pipeline.versions))}
        for line in gate_warnings(env.name, step.gates, runs):
            click.echo(one_line(f"warning: {line}"), err=True)
            warnings.append(line)
    return warnings


def _unused_config(environment: str, objects: EnvironmentObjects, rendered: Rendered) -> list[str]:
    """A warning for each config ConfigMap that no assignment of the environment takes (its labels
    match nothing: ``sise: small``), printed on stderr as it is found; a silent no-op otherwise."""
    if not rendered.assignments:  # nothing to apply config to: no ConfigMap is singled out
        return []
    used = {name for a in rendered.assignments for name in a.config_sources}
    warnings = []
    for cm in objects.configmaps.values():
        if cm.labels.get(PLATFORM_CONFIG) == "true" and cm.name not in used:
            labels = ", ".join(f"{k}: {v}" for k, v in cm.labels.items() if k != PLATFORM_CONFIG) or "none"
            where = f"{cm.source.file}:{cm.source.line}" if cm.source.line else cm.source.file
            line = (
                f"warning: {where}: config ConfigMap {cm.name!r} (labels {labels}) matches no assignment of "
                f"{environment}: its values are applied nowhere"
            )
            click.echo(one_line(line), err=True)
            warnings.append(line.removeprefix("warning: "))
    return warnings


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


def _env_data(name: str, rendered: Any, waves: list[str], found: list[str]) -> dict[str, Any]:
    """One environment of ``validate -o json|yaml``."""
    data: dict[str, Any] = {
        "environment": name,
        "assignments": len(rendered.assignments),
        "files": len(rendered.files),
    }
    if waves:
        data["waves"] = waves
    if found:
        data["removals"] = found
    return data


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
    sources.refuse(SourceChecker().check(main), "check its URL, branch, tag or chart, and the credentials")
    if output == "text":
        count = len({wanted(t.manifests) for w in main.workloads.values() for t in w.targets})
        click.echo(f"sources: ok, {count} answered")


def _check_github(cp: ControlPlane, main: MainObjects, sha: str, output: str) -> None:
    """``--github``: a line per permission the promotion needs; exit 2 when one is missing."""
    from promoter.forges.github import access  # heavy: PyGithub loads only when GitHub is used

    if forge_kind(main.pipeline) != "github":
        raise UsageError("--github: the Pipeline's platform repo is not on GitHub; there is nothing to check")
    findings = access.check_github(cp, main.pipeline, sha, HEARTBEAT_VARIABLE, clocks.RealClock(), os.environ)
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
    if github and not _github_credentials():
        return None
    try:
        return build_runtime(cp, main.pipeline, Console(quiet=True))
    except PromoterError as err:  # no platform repo yet: nothing to remove
        if github:
            click.echo(f"note: removals not compared with the platform repo: {one_line(str(err))}", err=True)
        return None


def _github_credentials() -> bool:
    from promoter.forges.github import auth  # heavy: PyGithub loads only when GitHub is used

    return auth.credentials_in(os.environ)


def _removals(
    cp: ControlPlane,
    runtime: Runtime | None,
    main: MainObjects,
    env: Environment,
    objects: EnvironmentObjects,
    rendered: Rendered,
    steps: tuple[Step, ...],
) -> list[str]:
    """The removal guard's warnings for one environment, printed on stderr as they are found."""
    if runtime is None:
        return []
    platform = runtime.platform_for(env)
    try:
        base = platform.fetch([env.gitops_branch])[env.gitops_branch]
    except PromoterError:  # no platform repo yet: nothing to remove
        return []
    scene = Scene(main, env, objects, rendered.files, base, None, frozenset())
    found = removals.warnings(cp, platform, scene, steps, rendered.cluster_types)
    for line in found:
        click.echo(one_line(line), err=True)
    return [line.removeprefix("warning: ") for line in found]
