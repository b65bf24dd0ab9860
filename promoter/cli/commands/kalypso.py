"""``validate`` and ``render`` on a Kalypso control plane (docs/kalypso.md): the commands hand
over to these when main is Kalypso's (WorkloadRegistrations, ``.environments/``) and has no
promoter Pipeline."""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from promoter.errors import UsageError
from promoter.kalypso.control import KalypsoControlPlane, Render
from promoter.kalypso.render import TRACKING


def render_kalypso(kcp: KalypsoControlPlane, env_name: str, commit: str | None, out: str) -> None:
    """Write one environment's Kalypso tree into ``out`` (empty, or an earlier render)."""
    rendered = kcp.render(env_name, commit)
    target = Path(out)
    if target.exists() and any(target.iterdir()):
        if not (target / TRACKING).exists():
            raise UsageError(f"--out {out}: not empty and not an earlier render; choose an empty directory")
        shutil.rmtree(target)
    for path, data in rendered.files.items():
        dest = target / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    click.echo(
        f"{rendered.environment}: wrote {len(rendered.files)} files for {rendered.count} assignments to {out} "
        f"(Kalypso, main {rendered.main.commit[:12]}, {_workloads(rendered)})"
    )


def validate_kalypso(kcp: KalypsoControlPlane, commit: str | None) -> None:
    """Load main and every environment of ``.environments/``, and render each."""
    main = kcp.main(kcp.cp.resolve(commit))
    for name in sorted(main.environments):
        rendered = kcp.render(name, commit)
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
