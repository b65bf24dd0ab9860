"""``promoter promote``: the promotion flow, or the scheduling flow with ``--schedule``."""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any

import click
from click.core import ParameterSource

from promoter import (
    clock as clocks,  # clocks.RealClock is looked up at run time: tests put a fake in its place
)
from promoter.cli.commands.common import (
    ALLOW_DIRTY,
    COMMIT,
    CONTROL_PLANE,
    MAIN_BRANCH,
    RENDER_BUDGET,
    VERBOSE,
    refuse_dirty,
)
from promoter.cli.commands.common import control_plane as control_plane_at
from promoter.cli.commands.completion import complete_environment_list, complete_environments
from promoter.cli.commands.kalypso import KALYPSO_NAMING, kalypso_promotion
from promoter.cli.github_options import github_options
from promoter.cli.output import OUTPUT, emit
from promoter.cli.table import print_summary
from promoter.clock import parse_duration
from promoter.errors import UsageError
from promoter.ghactions import publish, runner
from promoter.ghactions.heartbeat import Heartbeat, heartbeat
from promoter.promotion import control_wiring
from promoter.promotion.flows import Orchestrator
from promoter.promotion.options import Options, RenderHook
from promoter.promotion.report import Report
from promoter.runtime import GitHubOptions, build_runtime

EXAMPLES = """\b
Examples:
  promoter promote                          # main's head through every environment, in order
  promoter promote --to qa --dry-run        # render and report the first change; push nothing
  promoter promote --commit 4052d4a --output json
  promoter promote --environments dev,stage # a Kalypso control plane (docs/kalypso.md#promote)
"""


@click.command(epilog=EXAMPLES)
@VERBOSE
@RENDER_BUDGET
@CONTROL_PLANE
@COMMIT
@KALYPSO_NAMING
@click.option(
    "--to",
    "to",
    default=None,
    metavar="ENV",
    shell_complete=complete_environments,
    help="Promote up to and including this environment.",
)
@click.option(
    "--schedule",
    "env_name",
    default=None,
    metavar="ENV",
    shell_complete=complete_environments,
    help="The scheduling flow: re-render this environment alone, with the main commit deployed there.",
)
@click.option(
    "--env",
    "old_env",
    default=None,
    hidden=True,
    shell_complete=complete_environments,
    callback=lambda c, p, v: _deprecated_env(v),
    help="Deprecated spelling of --schedule.",
)
@click.option(
    "--waves",
    is_flag=True,
    envvar="PROMOTER_WAVES",
    help="Scheduling flow: land the environment wave by wave, each gated (default: all at once).",
)
@click.option("--dry-run", is_flag=True, help="Render and report; push, merge and post nothing.")
@click.option(
    "--force",
    is_flag=True,
    help="Skip the guard and retry a held commit; with --to, promote only that environment; "
    "with --reason, pass a hold or a closed change window (recorded).",
)
@click.option(
    "--reason",
    default=None,
    envvar="PROMOTER_FORCE_REASON",
    metavar="TEXT",
    help="Why --force passes a hold or a closed change window (docs/change-control.md).",
)
@click.option(
    "--allow-removal",
    is_flag=True,
    help="Let a promotion remove assignments past the removal guard (all of an environment's or "
    "a wave's, or more than its removalLimit); its PR lists them first.",
)
@click.option(
    "--verify-main",
    type=click.Choice(["git", "github"]),
    default=None,
    envvar="PROMOTER_VERIFY_MAIN",
    help="Refuse a main commit without a valid signature of an allowed signer, checked by git or "
    "GitHub, whatever its own Pipeline says (docs/security.md#signed-and-verified-commits).",
)
@ALLOW_DIRTY
@click.option("--poll-interval", default="5s", show_default=True, help="How often to poll merges.")
@click.option(
    "--progress-interval",
    default="10s",
    show_default=True,
    help="How often to print a progress line while waiting.",
)
@click.option(
    "--wait",
    type=click.Choice(["all", "none"]),
    default="all",
    show_default=True,
    envvar="PROMOTER_WAIT",
    help="all: wait for merges, gates and bakes in this run; none: do what needs no waiting, "
    "then exit with the state (done, waiting for what and until when, failed): for CI, where "
    "events start the next run (docs/github-actions.md#waiting-without-a-runner).",
)
@click.option(
    "--hold-for-approval",
    "approvals",
    default="",
    metavar="ENV,ENV",
    help="With --wait none: these environments start only in a run given --approved ENV "
    "(a job under a GitHub Environment with required reviewers); others stop there, asking once.",
)
@click.option(
    "--approved",
    default="",
    metavar="ENV",
    help="With --wait none: this run is approved to start ENV's promotion (see --hold-for-approval).",
)
@click.option(
    "--heartbeat-variable",
    default="",
    metavar="NAME",
    envvar="PROMOTER_HEARTBEAT_VARIABLE",
    help="With --wait none in GitHub Actions: arm this repository variable of the control plane "
    "while the promotion waits on time, disarm it otherwise (docs/github-actions.md#the-heartbeat).",
)
@OUTPUT
@click.option(
    "--environments",
    default=None,
    metavar="ENV,ENV",
    shell_complete=complete_environment_list,
    help="Kalypso control plane: the environments in promotion order (docs/kalypso.md#promote).",
)
@click.option(
    "--environments-file",
    default=None,
    metavar="FILE",
    help="Kalypso control plane: a Pipeline listing the environments, with merge, timeout and gates.",
)
@MAIN_BRANCH
@github_options(merging=True)
def promote(
    control_plane: str,
    commit: str | None,
    to: str | None,
    env_name: str | None,
    old_env: str | None,
    waves: bool,
    dry_run: bool,
    force: bool,
    reason: str | None,
    allow_removal: bool,
    verify_main: str | None,
    allow_dirty: bool,
    poll_interval: str,
    progress_interval: str,
    wait: str,
    approvals: str,
    approved: str,
    heartbeat_variable: str,
    output: str,
    environments: str | None,
    environments_file: str | None,
    main_branch: str,
    github: Any,
) -> None:
    """Promote a main commit dev -> qa -> prod, or (--schedule) re-render one environment."""
    env_name = env_name or old_env
    _check_flows(to, env_name, waves)
    cp = control_plane_at(control_plane, main_branch)
    refuse_dirty(cp, allowed=allow_dirty, dry_run=dry_run)
    cp, commit, render = _kalypso_or(cp, commit, env_name, environments, environments_file)
    sha = cp.resolve(commit)
    pipeline = _pipeline(cp, env_name, commit, sha)
    names = [e.name for e in pipeline.environments]
    console = runner.console(names, stream=sys.stderr if output != "text" else None)
    clock = clocks.RealClock()
    runtime = build_runtime(cp, pipeline, console, clock=clock, github=github)
    options = _options(dry_run, force, poll_interval, progress_interval, waves, render)
    options = replace(_waiting(options, wait, approvals, approved, names), allow_removal=allow_removal)
    options = replace(options, reason=_reason(reason, force), verify_main=verify_main)
    flows = _orchestrator(cp, runtime, clock, console, options)
    beat = _heartbeat(options, heartbeat_variable, github, clock)
    beat.arm()  # before anything changes: a run killed mid-way leaves it armed
    with runtime.locked(console.say):
        report = flows.schedule(env_name, commit and sha) if env_name else flows.promote(sha, to)
    retry = _tell(report, cp, runtime, pipeline, clock, console.say, notify=not dry_run)
    beat.settle(report, clock.wall(), also=retry)  # armed for a notification to retry too
    _show(report, output)
    if _failed(report, options):
        sys.exit(1)


def _pipeline(cp: Any, env_name: str | None, commit: str | None, sha: str) -> Any:
    """The Pipeline that rules the run: main's head's for the scheduling flow without --commit
    (the environment's deployed commit is rendered, today's rules apply), else the commit's."""
    return cp.main(cp.resolve(None) if env_name and not commit else sha).pipeline


def _failed(report: Report, options: Options) -> bool:
    """Exit 1: failed, or held in a run that waits (a wake-up, ``--wait none``, that finds the
    commit still held is no news)."""
    return report.state == "failed" or (report.state == "held" and options.waits)


def _tell(
    report: Report, cp: Any, runtime: Any, pipeline: Any, clock: clocks.Clock, say: Any, *, notify: bool
) -> float | None:
    """Who hears of the run: the Pipeline's notification receivers (never failing the run,
    docs/change-control.md#notifications) and, in GitHub Actions only, the step's outputs and
    summary. When the next notification to retry is due, if one is."""
    retry = None
    if notify:
        retry = control_wiring.notify(
            report, cp, runtime.forge, pipeline, clock.wall(), say, runner.record_error
        )
    publish.publish_pipeline_report(report, pipeline)
    return retry


def _kalypso_or(
    cp: Any, commit: str | None, env_name: str | None, environments: str | None, environments_file: str | None
) -> tuple[Any, str | None, Any]:
    """The control plane to promote, its commit and its render: a Kalypso control plane's own
    (docs/kalypso.md#promote: the commit is the BaseRepo's unless given), else promoter's."""
    kalypso = kalypso_promotion(cp, commit, env_name, environments, environments_file)
    if kalypso is None:
        return cp, commit, None
    kcp, kcommit = kalypso
    return kcp, kcommit, kcp.render


def _heartbeat(options: Options, variable: str, github: GitHubOptions, clock: clocks.Clock) -> Heartbeat:
    """The control plane's heartbeat, armed and disarmed by runs that do not wait."""
    if options.waits or options.dry_run:
        variable = ""
    return heartbeat(variable, github.api_url, clock, runner.warn)


def _show(report: Report, output: str) -> None:
    if output != "text":
        emit(report.to_json(), output)
    else:
        print_summary(report)


def _orchestrator(cp: Any, runtime: Any, clock: clocks.Clock, console: Any, options: Options) -> Orchestrator:
    """The flows, with the holds and change windows every step respects (DESIGN section 13)."""
    control = control_wiring.change_control(cp, runtime.forge, clock, console, options)
    return Orchestrator(cp, runtime.platform, runtime.forge, clock, console, options, runtime.routes, control)


def _reason(reason: str | None, force: bool) -> str | None:
    if reason is not None and not reason.strip():
        raise UsageError("--reason: say why (an empty reason passes nothing)")
    if reason and not force:
        raise UsageError("--reason goes with --force: it says why a hold or a closed window is passed")
    return reason.strip() if reason else None


def _waiting(options: Options, wait: str, approvals: str, approved: str, names: list[str]) -> Options:
    return replace(
        options,
        wait="none" if wait == "none" else "all",
        approvals=_names(approvals, names, "--hold-for-approval"),
        approved=_names(approved, names, "--approved"),
    )


def _names(given: str, names: list[str], flag: str) -> frozenset[str]:
    """Environment names of a comma-separated flag, each one of the Pipeline's."""
    chosen = frozenset(n.strip() for n in given.split(",") if n.strip())
    unknown = sorted(chosen - set(names))
    if unknown:
        raise UsageError(f"{flag} {unknown[0]}: no such environment (the Pipeline has {', '.join(names)})")
    return chosen


def _options(
    dry_run: bool,
    force: bool,
    poll_interval: str,
    progress_interval: str,
    waves: bool,
    render: RenderHook | None,
) -> Options:
    try:
        return Options(
            dry_run=dry_run,
            force=force,
            poll_interval=parse_duration(poll_interval),
            progress_interval=parse_duration(progress_interval),
            run_url=runner.run_url(),
            waves=waves,
            render=render,
        )
    except ValueError as err:
        raise UsageError(str(err)) from err


def _deprecated_env(value: str | None) -> str | None:
    """``promote --env ENV``, the old spelling of ``--schedule ENV``: works for one more release."""
    if value is not None:
        click.echo(
            "warning: promote --env is deprecated and goes away in the next release; use --schedule "
            f"{value} (the scheduling flow; --env means 'this environment' in render and diff)",
            err=True,
        )
    return value


def _check_flows(to: str | None, env_name: str | None, waves: bool) -> None:
    if to and env_name:
        raise UsageError(
            "--to and --schedule exclude each other: --schedule runs the scheduling flow for one environment"
        )
    explicit = click.get_current_context().get_parameter_source("waves") == ParameterSource.COMMANDLINE
    if waves and explicit and not env_name:  # PROMOTER_WAVES is for every run of a workflow
        raise UsageError(
            "--waves is for the scheduling flow (--schedule); the promotion flow always lands in waves"
        )
