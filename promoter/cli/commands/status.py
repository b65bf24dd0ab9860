"""``promoter status``: where a main commit stands, read back from the repos."""

from __future__ import annotations

from typing import Any

import click

from promoter import clock as clocks
from promoter.cli.commands.common import COMMIT, CONTROL_PLANE, MAIN_BRANCH, VERBOSE
from promoter.cli.commands.common import control_plane as control_plane_at
from promoter.cli.github_options import github_options
from promoter.cli.output import OUTPUT, emit
from promoter.clock import format_duration, parse_iso
from promoter.console import Console
from promoter.errors import shorten
from promoter.forges.base import PRCheck
from promoter.model import DESCRIPTION_LIMIT
from promoter.promotion import control_wiring
from promoter.promotion.options import Options
from promoter.promotion.prchecks import line_of
from promoter.promotion.standing import rows as standing
from promoter.runtime import build_runtime


@click.command()
@VERBOSE
@CONTROL_PLANE
@COMMIT
@OUTPUT
@MAIN_BRANCH
@github_options()
def status(control_plane: str | None, commit: str | None, output: str, main_branch: str, github: Any) -> None:
    """Where a main commit stands in each environment, read back from the repos.

    \b
    Examples:
      promoter status                    # main's head
      promoter status --commit 4052d4a -o yaml
    """
    cp = control_plane_at(control_plane, main_branch)
    sha = cp.resolve(commit)
    main = cp.main(sha)
    clock = clocks.RealClock()
    runtime = build_runtime(cp, main.pipeline, Console(quiet=True), clock=clock, github=github)
    rows = standing(
        cp,
        sha,
        main,
        runtime,
        lambda forge: control_wiring.change_control(cp, forge, clock, Console(quiet=True), Options()),
    )
    pipeline = main.pipeline
    if output != "text":
        emit({"mainCommit": sha, "environments": rows}, output)
        return
    click.echo(f"main {sha[:12]} {cp.git.out('log', '-1', '--format=%s', operands=[sha])}")
    width = max(10, *(len(e.name) for e in pipeline.environments))
    for row in rows:
        _show_row(row, sha, clock.wall(), width, graph=not pipeline.is_chain)


def _show_row(row: dict[str, Any], sha: str, now: float, width: int = 10, *, graph: bool = False) -> None:
    """One environment; in a graph Pipeline also what it follows and, before it starts, what it
    waits on."""
    deployed = row["deployedMainCommit"]
    there = "this commit" if deployed == sha else (str(deployed)[:12] if deployed else "nothing")
    text = shorten(row["description"], DESCRIPTION_LIMIT)  # whole in -o json
    click.echo(
        f"  {row['environment']:<{width}} {row['state']:<9} {text}  [{row['platformBranch']} has {there}]"
    )
    lines = (_graph_lines(row) if graph else []) + _state_lines(row, now) + _wave_lines(row, sha)
    for line in lines:
        click.echo(f"    {line}")


def _graph_lines(row: dict[str, Any]) -> list[str]:
    """What the environment follows and, before it starts, what it waits on."""
    follows = ", ".join(row["follows"]) or "nothing: it takes every commit"
    return [f"follows {follows}"] + ([f"waits on {', '.join(row['waitsOn'])}"] if row["waitsOn"] else [])


def _state_lines(row: dict[str, Any], now: float) -> list[str]:
    """What it waits for, its PR's checks, and what holds it or keeps its window closed."""
    lines = [_waiting_text(row["waiting"], now)] if row["waiting"] else []
    for c in row["prChecks"] or ():
        check = PRCheck(c["name"], c["kind"], c["state"], c["detail"], c["url"], c["app"] or "")
        lines.append(f"PR check {line_of(check)}")
    lines += [f"HELD: {row['held']['description']}"] if row["held"] else []
    return lines + ([f"WINDOW: {row['window']['description']}"] if row["window"] else [])


def _wave_lines(row: dict[str, Any], sha: str) -> list[str]:
    """Each wave, and the main commit each of its cluster types' folders holds."""
    return [
        f"wave {wave['name']}: "
        + ", ".join(
            f"{ct} at {'this commit' if m == sha else (m or 'nothing')[:12]}"
            for ct, m in wave["mainCommits"].items()
        )
        for wave in row["waves"]
    ]


def _waiting_text(wait: dict[str, Any], now: float) -> str:
    """``waiting for bake (wave canary) since 2026-01-01T00:30:00Z (12m00s)``."""
    wave = f" (wave {wait['wave']})" if wait["wave"] else ""
    stamped = parse_iso(wait["since"] or "")
    ago = f" ({format_duration(now - stamped)})" if stamped is not None else ""
    return f"waiting for {wait['for']}{wave} since {wait['since'] or 'unknown'}{ago}"
