"""The ``promoter`` command line. Each command builds its collaborators and calls the library;
``PromoterGroup.invoke`` is the one place where errors become exit codes (DESIGN section 9)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

import click

from promoter.errors import PromoterError, UsageError
from promoter.masking import mask

CONTROL_PLANE = click.option(
    "--control-plane",
    "control_plane",
    required=True,
    type=click.Path(file_okay=False),
    envvar="PROMOTER_CONTROL_PLANE",
    help="The control-plane git repo (a working clone or a bare repo).",
)
COMMIT = click.option(
    "--commit", default=None, help="Main commit or ref to use (default: the main branch head)."
)
MAIN_BRANCH = click.option(
    "--main-branch", default="main", show_default=True, help="The control plane's promoted branch."
)


class PromoterGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PromoterError as err:
            click.echo(f"error: {mask(str(err))}", err=True)
            ctx.exit(err.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except (click.exceptions.Exit, click.exceptions.ClickException, click.exceptions.Abort):
            raise
        except Exception:
            log = _crash_log()
            click.echo(f"error: unexpected failure (a bug); the traceback is in {log}", err=True)
            ctx.exit(3)


def _crash_log() -> str:
    fd, path = tempfile.mkstemp(prefix="promoter-crash-", suffix=".log")
    with os.fdopen(fd, "w") as handle:
        handle.write(mask(traceback.format_exc()))
    return path


@click.group(cls=PromoterGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="promoter")
def cli() -> None:
    """Promote a GitOps control plane through environments, gated on rollout health."""


def _control_plane(path: str, main_branch: str) -> Any:
    from promoter.controlplane import ControlPlane

    return ControlPlane(path, main_branch)


@cli.command()
@CONTROL_PLANE
@COMMIT
@MAIN_BRANCH
def validate(control_plane: str, commit: str | None, main_branch: str) -> None:
    """Load and check main and every environment branch; render each environment."""
    from promoter.rendering import Renderer, all_templates, render_environment

    cp = _control_plane(control_plane, main_branch)
    sha = cp.resolve(commit)
    main = cp.main(sha)
    Renderer(all_templates(main)).compile_all()
    for env in main.pipeline.environments:
        rendered = render_environment(main, cp.environment(env), env.name)
        click.echo(f"{env.name}: ok, {len(rendered.assignments)} assignments, {len(rendered.files)} files")
    click.echo(f"valid: main {sha[:12]}, {len(main.workloads)} workloads, {len(main.templates)} templates")


@cli.command()
@CONTROL_PLANE
@click.option("--env", "env_name", required=True, help="The environment to render.")
@COMMIT
@click.option(
    "--out", required=True, type=click.Path(file_okay=False), help="Directory to write the tree into."
)
@MAIN_BRANCH
def render(control_plane: str, env_name: str, commit: str | None, out: str, main_branch: str) -> None:
    """Write the tree that would be committed for one environment."""
    from promoter.platform import PROVENANCE, provenance_text
    from promoter.rendering import render_environment

    cp = _control_plane(control_plane, main_branch)
    sha = cp.resolve(commit)
    main = cp.main(sha)
    env = main.pipeline.environment(env_name)
    if env is None:
        raise UsageError(
            f"--env {env_name}: no such environment (the Pipeline has {', '.join(e.name for e in main.pipeline.environments)})"
        )
    objects = cp.environment(env)
    rendered = render_environment(main, objects, env.name)
    target = Path(out)
    if target.exists() and any(target.iterdir()):
        if not (target / PROVENANCE).exists():
            raise UsageError(f"--out {out}: not empty and not an earlier render; choose an empty directory")
        shutil.rmtree(target)
    files = dict(rendered.files)
    files[PROVENANCE] = provenance_text(
        pipeline=main.pipeline.name,
        environment=env.name,
        main_commit=sha,
        env_branch=env.branch,
        env_commit=objects.commit,
        cluster_types=rendered.cluster_types,
        files=len(rendered.files),
    )
    for path, data in files.items():
        dest = target / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    click.echo(
        f"{env.name}: wrote {len(rendered.files)} files for {len(rendered.assignments)} assignments to {out}"
    )


@cli.command()
@CONTROL_PLANE
@COMMIT
@click.option("--to", "to", default=None, help="Promote up to and including this environment.")
@click.option("--env", "env_name", default=None, help="Scheduling flow: re-render this environment only.")
@click.option("--dry-run", is_flag=True, help="Render and report; push, merge and post nothing.")
@click.option(
    "--force",
    is_flag=True,
    help="Skip the guard and retry a held commit; with --to, promote only that environment.",
)
@click.option("--poll-interval", default="5s", show_default=True, help="How often to poll merges.")
@click.option(
    "--progress-interval",
    default="10s",
    show_default=True,
    help="How often to print a progress line while waiting.",
)
@click.option("--output", type=click.Choice(["text", "json"]), default="text", show_default=True)
@MAIN_BRANCH
def promote(
    control_plane: str,
    commit: str | None,
    to: str | None,
    env_name: str | None,
    dry_run: bool,
    force: bool,
    poll_interval: str,
    progress_interval: str,
    output: str,
    main_branch: str,
) -> None:
    """Promote a main commit dev -> qa -> prod, or (--env) re-render one environment."""
    from promoter.app import build_runtime
    from promoter.clock import RealClock, parse_duration
    from promoter.console import Console
    from promoter.orchestrator import Options, Orchestrator

    if to and env_name:
        raise UsageError(
            "--to and --env exclude each other: --env runs the scheduling flow for one environment"
        )
    cp = _control_plane(control_plane, main_branch)
    sha = cp.resolve(commit)
    console = Console(stream=sys.stderr if output == "json" else None)
    runtime = build_runtime(
        cp, cp.main(cp.resolve(None) if env_name and not commit else sha).pipeline, console
    )
    try:
        options = Options(
            dry_run=dry_run,
            force=force,
            poll_interval=parse_duration(poll_interval),
            progress_interval=parse_duration(progress_interval),
        )
    except ValueError as err:
        raise UsageError(str(err)) from err
    orchestrator = Orchestrator(cp, runtime.platform, runtime.forge, RealClock(), console, options)
    with runtime.platform.locked():
        report = (
            orchestrator.schedule(env_name, commit and sha) if env_name else orchestrator.promote(sha, to)
        )
    if output == "json":
        click.echo(report.dumps())
    else:
        _print_summary(report)
    if not report.ok:
        sys.exit(1)


def _print_summary(report: Any) -> None:
    from promoter.report import change_summary

    click.echo("")
    click.echo(f"{'environment':<14}{'result':<12}{'files':>7}  {'changes':<16}{'merge commit':<14}gates")
    for r in report.results:
        gates = ", ".join(f"{g.gate}: {g.state}" for g in r.gates) or "-"
        click.echo(
            f"{r.environment:<14}{r.state:<12}{r.files:>7}  {change_summary(r.changes):<16}{(r.merge_sha or '-')[:12]:<14}{gates}"
        )


@cli.command()
@CONTROL_PLANE
@COMMIT
@click.option("--output", type=click.Choice(["text", "json"]), default="text", show_default=True)
@MAIN_BRANCH
def status(control_plane: str, commit: str | None, output: str, main_branch: str) -> None:
    """Where a main commit stands in each environment, read back from the repos."""
    from promoter.app import build_runtime
    from promoter.console import Console
    from promoter.platform import PROVENANCE, parse_provenance

    cp = _control_plane(control_plane, main_branch)
    sha = cp.resolve(commit)
    main = cp.main(sha)
    runtime = build_runtime(cp, main.pipeline, Console(quiet=True))
    statuses = runtime.forge.get_statuses(sha)
    branches = [e.gitops_branch for e in main.pipeline.environments]
    heads = runtime.platform.fetch(list(dict.fromkeys(branches)))
    rows = []
    for env in main.pipeline.environments:
        st = statuses.get(runtime.forge.status_context(env.name))
        head = heads.get(env.gitops_branch)
        prov = (
            parse_provenance(
                runtime.platform.read(
                    head, f"{env.gitops_path}/{PROVENANCE}" if env.gitops_path else PROVENANCE
                )
            )
            if head
            else {}
        )
        rows.append(
            {
                "environment": env.name,
                "state": st.state if st else "none",
                "description": st.description if st else "",
                "updatedAt": st.created_at if st else None,
                "platformBranch": env.gitops_branch,
                "platformCommit": head,
                "deployedMainCommit": prov.get("mainCommit"),
            }
        )
    if output == "json":
        click.echo(json.dumps({"mainCommit": sha, "environments": rows}, indent=2))
        return
    click.echo(f"main {sha[:12]} {cp.git.out('log', '-1', '--format=%s', sha)}")
    for row in rows:
        deployed = row["deployedMainCommit"]
        there = "this commit" if deployed == sha else (str(deployed)[:12] if deployed else "nothing")
        click.echo(
            f"  {row['environment']:<10} {row['state']:<9} {row['description']}  [{row['platformBranch']} has {there}]"
        )


@cli.command("check-platform")
@click.option(
    "--repo",
    envvar="PROMOTER_PLATFORM_REPO",
    required=True,
    help="Platform repo path (default: $PROMOTER_PLATFORM_REPO).",
)
@click.option(
    "--ref",
    envvar="PROMOTER_PLATFORM_SHA",
    required=True,
    help="Commit to check (default: $PROMOTER_PLATFORM_SHA).",
)
@click.option(
    "--path", "root", envvar="PROMOTER_PLATFORM_PATH", default=".", help="The environment's folder."
)
@click.option(
    "--expect-commit", envvar="PROMOTER_COMMIT", default=None, help="Main commit the provenance must name."
)
def check_platform(repo: str, ref: str, root: str, expect_commit: str | None) -> None:
    """Smoke-check a rendered platform tree at one commit (for use as a command gate)."""
    from promoter.checks import check_tree
    from promoter.gitcmd import Git

    git = Git(repo.removeprefix("file://"))
    commit = git.commit_of(ref)
    if commit is None:
        raise UsageError(f"--ref {ref}: no such commit in {repo}")
    result = check_tree(git, commit, "" if root in (".", "") else root.strip("/"), expect_commit)
    for problem in result.problems:
        click.echo(f"problem: {problem}", err=True)
    if result.problems:
        click.echo(
            f"{len(result.problems)} problems in {result.manifests} manifests at {commit[:12]}", err=True
        )
        sys.exit(1)
    click.echo(f"ok: {result.manifests} manifests in {result.folders} folders at {commit[:12]}")


@cli.command()
@click.option(
    "--dir",
    "directory",
    default=None,
    type=click.Path(file_okay=False),
    help="Where to create the demo repos (default: a new temporary directory).",
)
@click.option("--progress-interval", default="1s", show_default=True)
def demo(directory: str | None, progress_interval: str) -> None:
    """Build the sample control plane into fresh repos and promote it dev -> qa -> prod."""
    from promoter.clock import parse_duration
    from promoter.demo import run_demo

    try:
        interval = parse_duration(progress_interval)
    except ValueError as err:
        raise UsageError(f"--progress-interval: {err}") from err
    report = run_demo(Path(directory) if directory else None, interval)
    _print_summary(report)
    if not report.ok:
        sys.exit(1)


def main() -> None:
    cli(prog_name="promoter")


if __name__ == "__main__":  # pragma: no cover
    main()
