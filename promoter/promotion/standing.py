"""Where a main commit stands in each environment (``promoter status``), read back from the
repos: its status, the main commit each platform branch (and each wave's folders) holds, what
it waits on, the promotion PR's checks, and the holds and change windows in force now. A row
per environment, in the shape ``status -o json`` documents (docs/cli.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from promoter.changecontrol import windows
from promoter.clock import iso
from promoter.controlplane.repo import ControlPlane
from promoter.forges.base import Forge
from promoter.model import Environment, MainObjects, Status
from promoter.platform.provenance import Provenance
from promoter.promotion import graph as graphs
from promoter.promotion.control import ChangeControl
from promoter.promotion.prchecks import open_pr_verdict
from promoter.promotion.waiting import waiting_on
from promoter.promotion.waves import Step, resolve, whole

if TYPE_CHECKING:  # the runtime sits above: status's command builds it and hands it in
    from promoter.runtime import Runtime


def rows(
    cp: ControlPlane,
    sha: str,
    main: MainObjects,
    runtime: Runtime,
    change_control: Callable[[Forge], ChangeControl],
) -> list[dict[str, Any]]:
    """Each environment's row, in the Pipeline's order, for the main commit ``sha`` (``main``);
    ``change_control``: the holds and windows, built on the runtime's forge once its statuses
    and platform heads are read."""
    statuses, context = runtime.forge.get_statuses(sha), runtime.forge.status_context
    heads = runtime.heads(main.pipeline.environments)
    control = change_control(runtime.forge)
    pipeline = main.pipeline
    states = {e.name: s.state for e in pipeline.environments if (s := statuses.get(context(e.name)))}
    out = []
    for env in pipeline.ordered():
        st = statuses.get(context(env.name))
        out.append(_row(cp, main, runtime, control, env, st, heads[env.name], states))
    return out


def _row(
    cp: ControlPlane,
    main: MainObjects,
    runtime: Runtime,
    control: ChangeControl,
    env: Environment,
    st: Status | None,
    head: str | None,
    states: dict[str, str],
) -> dict[str, Any]:
    pipeline = main.pipeline
    prov = runtime.platform_for(env).provenance(head, env.gitops_path) if head else None
    return {
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
