"""``promoter status``: where a main commit stands, read back from the repos."""

from __future__ import annotations

from typing import Any

import click

from promoter import clock as clocks
from promoter.changecontrol import windows
from promoter.cli.commands.common import COMMIT, CONTROL_PLANE, MAIN_BRANCH, VERBOSE
from promoter.cli.commands.common import control_plane as control_plane_at
from promoter.cli.commands.promote import github_options
from promoter.cli.output import OUTPUT, emit
from promoter.clock import format_duration, iso, parse_iso
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.errors import shorten
from promoter.forges.base import Forge, PRCheck
from promoter.model import DESCRIPTION_LIMIT, Environment, Status
from promoter.platform.provenance import Provenance
from promoter.promotion import control_wiring
from promoter.promotion import graph as graphs
from promoter.promotion.control import ChangeControl
from promoter.promotion.options import Options
from promoter.promotion.prchecks import line_of, open_pr_verdict
from promoter.promotion.waiting import waiting_on
from promoter.promotion.waves import Step, resolve, whole
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
    statuses, context = runtime.forge.get_statuses(sha), runtime.forge.status_context
    heads = runtime.heads(main.pipeline.environments)
    control = control_wiring.change_control(cp, runtime.forge, clock, Console(quiet=True), Options())
    rows = []
    pipeline = main.pipeline
    states = {e.name: s.state for e in pipeline.environments if (s := statuses.get(context(e.name)))}
    for env in pipeline.ordered():
        st = statuses.get(context(env.name))
        head = heads[env.name]
        prov = runtime.platform_for(env).provenance(head, env.gitops_path) if head else None
        rows.append(
            {
                "environment": env.name,
                "state": st.state if st else "none",
                "description": st.description if st else "",
                "updatedAt": st.created_at if st else None,
                "platformBranch": env.gitops_branch,
                "platformCommit": head,
                "deployedMainCommit": prov.main_commit if prov else None,
                "waves": _waves(cp, env, prov),
                "waiting": waiting_on(st, _steps(cp, env)),
                "follows": list(pipeline.upstreams(env.name)),
                "waitsOn": [] if st else graphs.waits_on(pipeline, env.name, states),
                "prChecks": _pr_checks(runtime.forge_for(env), env, st),
                **_control(control, env, runtime.forge_for(env) if _pr_open(st) else None),
            }
        )
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
    if graph:
        follows = ", ".join(row["follows"]) or "nothing: it takes every commit"
        click.echo(f"    follows {follows}")
        if row["waitsOn"]:
            click.echo(f"    waits on {', '.join(row['waitsOn'])}")
    if row["waiting"]:
        click.echo(f"    {_waiting_text(row['waiting'], now)}")
    for c in row["prChecks"] or ():
        check = PRCheck(c["name"], c["kind"], c["state"], c["detail"], c["url"], c["app"] or "")
        click.echo(f"    PR check {line_of(check)}")
    if row["held"]:
        click.echo(f"    HELD: {row['held']['description']}")
    if row["window"]:
        click.echo(f"    WINDOW: {row['window']['description']}")
    for wave in row["waves"]:
        held = ", ".join(
            f"{ct} at {'this commit' if m == sha else (m or 'nothing')[:12]}"
            for ct, m in wave["mainCommits"].items()
        )
        click.echo(f"    wave {wave['name']}: {held}")


def _pr_checks(forge: Forge, env: Environment, st: Status | None) -> list[dict[str, Any]] | None:
    """``prChecks``: the required checks of the open promotion PR, each with its link, while
    the promotion waits to merge or failed before its merge; None otherwise."""
    if env.pr_checks is None or st is None or st.state not in ("pending", "failure"):
        return None
    verdict = open_pr_verdict(forge, env)
    if verdict is None:
        return None
    return [c.to_json() for c in verdict.checks]


def _pr_open(st: Status | None) -> bool:
    """Whether the status says a promotion PR is open (a hold label can be on it)."""
    return st is not None and st.state == "pending" and "PR open: " in st.description


def _control(control: ChangeControl, env: Environment, forge: Forge | None) -> dict[str, Any]:
    """What holds the environment and whether its change windows are closed now (section 13)."""
    hold = control.hold_on(env, "", forge)
    held = {**hold.to_json(), "description": hold.describe()} if hold else None
    closed = windows.closed(control.windows_of(env, whole(env, ())[0]), control.clock.wall())
    window = None
    if closed is not None:
        opens = iso(closed.opens) if closed.opens is not None else None
        window = {
            "reason": closed.reason,
            "since": iso(closed.since),
            "opens": opens,
            "description": closed.describe(),
        }
    return {"held": held, "window": window}


def _steps(cp: ControlPlane, env: Environment) -> tuple[Step, ...]:
    return resolve(env, cp.environment(env)) if env.waves else whole(env, ())


def _waiting_text(wait: dict[str, Any], now: float) -> str:
    """``waiting for bake (wave canary) since 2026-01-01T00:30:00Z (12m00s)``."""
    wave = f" (wave {wait['wave']})" if wait["wave"] else ""
    stamped = parse_iso(wait["since"] or "")
    ago = f" ({format_duration(now - stamped)})" if stamped is not None else ""
    return f"waiting for {wait['for']}{wave} since {wait['since'] or 'unknown'}{ago}"


def _waves(cp: ControlPlane, env: Environment, prov: Provenance | None) -> list[dict[str, Any]]:
    """An environment's waves, and the main commit each of their cluster-type folders holds."""
    if not env.waves:
        return []
    steps = resolve(env, cp.environment(env))
    return [
        {
            "name": step.name,
            "clusterTypes": list(step.cluster_types),
            "mainCommits": {
                ct: (f.main_commit if prov and (f := prov.folder(ct)) else None) for ct in step.cluster_types
            },
        }
        for step in steps
    ]
