"""``validate``, ``render``, ``diff``, ``promote`` and ``convert`` on a Kalypso control plane
(docs/kalypso.md): the commands hand over to these when main is Kalypso's (WorkloadRegistrations,
``.environments/``) and has no promoter Pipeline. And ``promoter kalypso template``: one Template
manifest rendered as Kalypso's scheduler renders it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from promoter.controlplane.repo import ControlPlane
from promoter.errors import ConfigError, UsageError
from promoter.kalypso.control import KalypsoControlPlane, Render
from promoter.kalypso.control import open_kalypso as open_at
from promoter.kalypso.generation import GENERATIONS, OLD_NAMES, OPTION, VARIABLE, Generation, generation_from
from promoter.kalypso.promotion import KalypsoPromotion, Order, order_from_file, order_from_flag
from promoter.kalypso.render import TRACKING
from promoter.kalypso.templating import read_data, render_manifest
from promoter.rendering.writing import write_tree
from promoter.runtime import forge_kind, local_platform_url


def render_kalypso(kcp: KalypsoControlPlane, env_name: str, commit: str | None, out: str) -> None:
    """Write one environment's Kalypso tree into ``out`` (empty, or an earlier render)."""
    rendered = kcp.render(env_name, commit)
    write_tree(Path(out), out, rendered.files, TRACKING)
    click.echo(
        f"{rendered.environment}: wrote {len(rendered.files)} files for {rendered.count} assignments to {out} "
        f"(Kalypso, main {rendered.main.commit[:12]}, {_workloads(rendered)})"
    )


def validate_kalypso(kcp: KalypsoControlPlane, commit: str | None) -> None:
    """Load main (at ``commit``, default its head) and every environment of ``.environments/``,
    and render each with that main commit (the one a promotion would take there)."""
    sha = kcp.cp.resolve(commit)
    main = kcp.main(sha)
    for name in sorted(main.environments):
        rendered = kcp.render(name, sha)
        kcp.check_base(rendered)
        click.echo(f"{name}: ok, {rendered.count} assignments, {len(rendered.files)} files")
    click.echo(
        f"valid (Kalypso): main {main.commit[:12]}, {len(main.registrations)} workload registrations, "
        f"{len(main.templates)} templates"
    )


def _workloads(rendered: Render) -> str:
    if not rendered.workload_commits:
        return "no workload registrations"
    return "workloads " + ", ".join(
        f"{name}@{sha[:12]}" for name, sha in sorted(rendered.workload_commits.items())
    )


def _keep(key: str) -> Callable[[click.Context, click.Parameter, str | None], None]:
    def keep(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value is not None:
            ctx.meta[key] = value

    return keep


_GENERATION = click.option(
    OPTION,
    type=click.Choice(GENERATIONS),
    default=None,
    expose_value=False,
    callback=_keep("kalypso_generation"),
    help=f"On a Kalypso control plane: render as Kalypso's scheduler of that generation: head (the "
    f"default: its code today), 2024 (before yaml.v3, 2025-04) or 2023 (Kalypso's sample) (also {VARIABLE}).",
)
_NAMING = click.option(
    "--kalypso-naming",
    type=click.Choice(list(OLD_NAMES)),
    default=None,
    expose_value=False,
    hidden=True,
    callback=_keep("kalypso_naming"),
    help=f"The old name of {OPTION}: current is head.",
)


def _keep_lenient(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta["kalypso_lenient"] = True


_LENIENT = click.option(
    "--kalypso-lenient",
    is_flag=True,
    default=False,
    expose_value=False,
    callback=_keep_lenient,
    help="On a Kalypso control plane: render what Kalypso's scheduler fails on (two policies placing one "
    "pair, an environment name with '-') promoter's way instead of refusing it (also "
    "PROMOTER_KALYPSO_LENIENT=1).",
)


def KALYPSO_NAMING(command: Any) -> Any:
    """``--kalypso-generation``, the old ``--kalypso-naming`` and ``--kalypso-lenient`` on a
    command."""
    return _GENERATION(_NAMING(_LENIENT(command)))


def command_generation() -> Generation:
    """The command's Kalypso generation: its options, else the environment."""
    ctx = click.get_current_context(silent=True)
    meta = ctx.meta if ctx is not None else {}
    return generation_from(os.environ, meta.get("kalypso_generation"), meta.get("kalypso_naming"))


def open_kalypso(cp: ControlPlane, commit: str | None) -> KalypsoControlPlane | None:
    """The Kalypso view of ``cp`` (None for a promoter control plane), with the command's
    generation."""
    ctx = click.get_current_context(silent=True)
    meta = ctx.meta if ctx is not None else {}
    return open_at(
        cp,
        commit,
        meta.get("kalypso_generation"),
        meta.get("kalypso_naming"),
        meta.get("kalypso_lenient", False),
    )


@click.group("kalypso")
def kalypso() -> None:
    """Kalypso's scheduler, piece by piece (docs/kalypso.md).

    \b
    Examples:
      promoter kalypso template reconciler.tmpl --data data.json
    """


@kalypso.command("template")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--data",
    "data_file",
    required=True,
    type=click.Path(dir_okay=False),
    help="DATA.json: the data the template sees (Kalypso's dataType, config values as ConfigMap strings).",
)
@_GENERATION
@_NAMING
def template_command(file: str, data_file: str) -> None:
    """Render one Template manifest (FILE's text, one entry of spec.manifests) with DATA.json,
    exactly as Kalypso's scheduler renders it, and print the result (nothing added).

    \b
    Examples:
      promoter kalypso template reconciler.tmpl --data data.json
      PROMOTER_KALYPSO_GENERATION=2024 promoter kalypso template config.tmpl --data data.json
    """
    generation = command_generation()
    try:
        text = Path(file).read_text(encoding="utf-8")
    except OSError as err:
        raise UsageError(f"{file}: cannot read it: {err.strerror}") from err
    except UnicodeDecodeError as err:
        raise UsageError(f"{file}: not UTF-8 text: {err}") from err
    data = read_data(data_file, generation)
    click.echo(render_manifest(text, file, data, generation), nl=False)


def kalypso_promotion(
    cp: ControlPlane,
    commit: str | None,
    env_name: str | None,
    environments: str | None,
    environments_file: str | None,
) -> tuple[KalypsoPromotion, str] | None:
    """``promote`` on a Kalypso control plane (docs/kalypso.md#promote): the control plane the
    flows see, and the main commit to promote (``--commit``, else the BaseRepo commit of the
    environment scheduled, or of the first environment). None for a promoter control plane."""
    kcp = open_kalypso(cp, commit)
    if kcp is None:
        if environments is not None or environments_file is not None:
            raise UsageError(
                "--environments and --environments-file are for a Kalypso control plane (docs/kalypso.md); "
                "a promoter control plane's Pipeline orders its environments"
            )
        return None
    order = order_of(environments, environments_file)
    names = [e.name for e in order.environments]
    if env_name is not None and env_name not in names:
        raise UsageError(f"--schedule {env_name}: not among the environments given ({', '.join(names)})")
    promotion = KalypsoPromotion(kcp, order)
    sha = (
        promotion.resolve(commit)
        if commit is not None
        else promotion.base_commit(env_name or order.environments[0].name)
    )
    _check_platform(promotion, sha)
    return promotion, sha


def _check_platform(promotion: KalypsoPromotion, sha: str) -> None:
    """The GitOpsRepo's repo is one promoter can land in: named at the GitOpsRepo, not at a
    promoter.yaml this control plane does not have."""
    pipeline = promotion.main(sha).pipeline
    gitops = promotion.gitops_of(pipeline.environments[0].name)
    kind = forge_kind(pipeline)
    problem = None
    if kind == "remote":
        problem = f"{pipeline.platform_url} is neither a local path or file:// URL nor on GitHub"
    elif kind == "local":
        try:
            local_platform_url(pipeline, promotion)
        except ConfigError as err:
            problem = err.message.removeprefix("spec.platformRepo.url: ")
    if problem:
        raise ConfigError(f"spec.repo: {problem}", file=gitops.source.file, line=gitops.source.line)


def order_of(environments: str | None, environments_file: str | None) -> Order:
    """The order of a Kalypso control plane's environments: one of the two flags."""
    if environments is not None and environments_file is not None:
        raise UsageError("--environments and --environments-file exclude each other; give one")
    if environments is not None:
        return order_from_flag(environments)
    if environments_file is not None:
        return order_from_file(environments_file)
    raise UsageError(
        "a Kalypso control plane keeps no order of environments in git: give --environments dev,stage "
        "or --environments-file FILE (see docs/kalypso.md#promote)"
    )
