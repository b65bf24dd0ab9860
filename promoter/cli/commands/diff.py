"""``promoter diff``: what a promotion would change on each platform branch, pushing nothing.

For pull-request checks on the control plane (``actions/render``): it loads and renders like
``validate``, then compares each rendered tree with its platform branch and prints a unified
diff, and can write the same as a markdown pull-request comment.
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

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
from promoter.cli.commands.completion import complete_environments
from promoter.cli.commands.kalypso import KALYPSO_NAMING, kalypso_diffs, open_kalypso
from promoter.cli.commands.promote import github_options
from promoter.cli.output import OUTPUT, emit
from promoter.console import Console
from promoter.errors import UsageError, one_line
from promoter.ghactions import runner
from promoter.platform.objects import Change
from promoter.platform.provenance import Provenance
from promoter.promotion import removals
from promoter.promotion.graph import through
from promoter.promotion.removals import Scene
from promoter.promotion.waves import resolve
from promoter.rendering.builtins import all_templates
from promoter.rendering.render import Renderer
from promoter.rendering.tree import render_environment
from promoter.runtime import build_runtime

COMMENT_MARKER = "<!-- promoter-diff -->"
MAX_COMMENT = 60_000  # GitHub refuses comments over 65,536 characters
MAX_SUMMARY = 512 * 1024  # a step summary may hold 1 MiB


@dataclass
class EnvDiff:
    """One environment's rendered tree against its platform branch."""

    environment: str
    platform_branch: str
    platform_commit: str | None
    main_commit: str
    env_commit: str
    changes: dict[str, Change]
    patches: list[str] = field(default_factory=list)  # one unified diff per changed file

    @property
    def counts(self) -> Change:
        """Files added, changed and removed, not counting the provenance file."""
        rendered = [c for group, c in self.changes.items() if group != ".promoter"]
        return Change(
            sum(c.added for c in rendered), sum(c.changed for c in rendered), sum(c.removed for c in rendered)
        )

    @property
    def changed(self) -> bool:
        return self.counts.total > 0

    def header(self) -> str:
        c = self.counts
        base = f"{self.platform_branch}@{self.platform_commit[:12]}" if self.platform_commit else "new branch"
        return (
            f"{self.environment}: +{c.added} ~{c.changed} -{c.removed} against {base} "
            f"(main {self.main_commit[:7]}, environment {self.env_commit[:7]})"
        )


# ------------------------------------------------------------ pure text builders


def file_patch(path: str, old: bytes | None, new: bytes | None) -> str:
    """A unified diff of one file; binary content is named, not shown."""
    try:
        before = old.decode() if old is not None else ""
        after = new.decode() if new is not None else ""
    except UnicodeDecodeError:
        return f"Binary file {path} differs\n"
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}" if old is not None else "/dev/null",
        tofile=f"b/{path}" if new is not None else "/dev/null",
    )
    return "".join(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines)


def diff_text(diffs: list[EnvDiff]) -> str:
    """Every environment's header line and patches, as ``promoter diff`` prints them."""
    return "".join(f"# {d.header()}\n" + "".join(d.patches) for d in diffs)


def fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def diff_markdown(diffs: list[EnvDiff], limit: int) -> str:
    """The diff as markdown (a pull-request comment, a step summary), cut to ``limit`` characters."""
    main = diffs[0].main_commit[:12] if diffs else "-"
    head = [
        COMMENT_MARKER,
        f"### promoter: rendered changes (main `{main}`)",
        "",
        "| environment | platform branch | added | changed | removed |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for d in diffs:
        c = d.counts
        head.append(f"| {d.environment} | `{d.platform_branch}` | {c.added} | {c.changed} | {c.removed} |")
    text = "\n".join(head) + "\n"
    cut = "\n_The diff is too long to show here: run `promoter diff` to see all of it._\n"
    for d in diffs:
        if not d.changed:
            continue
        body = "".join(d.patches)
        mark = fence(body)
        block = f"\n<details><summary>{d.header()}</summary>\n\n{mark}diff\n{body}{mark}\n\n</details>\n"
        if len(text) + len(block) + len(cut) > limit:
            return text + cut
        text += block
    if not any(d.changed for d in diffs):
        text += "\nNo rendered changes.\n"
    return text


def diff_outputs(diffs: list[EnvDiff], comment_file: str | None, max_value: int) -> dict[str, str]:
    """The step outputs of ``promoter diff`` in GitHub Actions."""
    text = diff_text(diffs)
    if len(text) > max_value:
        text = text[:max_value] + "\n# (cut: the diff is longer than a step output may be)\n"
    outputs = {
        "commit": diffs[0].main_commit if diffs else "",
        "environments": json.dumps([d.environment for d in diffs]),
        "changed": "true" if any(d.changed for d in diffs) else "false",
        "changed-environments": json.dumps([d.environment for d in diffs if d.changed]),
        "diff": text,
    }
    if comment_file:
        outputs["comment-file"] = str(Path(comment_file).resolve())
    return outputs


def diff_data(diffs: list[EnvDiff]) -> dict[str, Any]:
    """The diff for ``-o json|yaml`` (the shape docs/cli.md documents)."""
    return {
        "mainCommit": diffs[0].main_commit if diffs else None,
        "changed": any(d.changed for d in diffs),
        "environments": [
            {
                "environment": d.environment,
                "platformBranch": d.platform_branch,
                "platformCommit": d.platform_commit,
                "mainCommit": d.main_commit,
                "environmentCommit": d.env_commit,
                "changed": d.changed,
                "added": d.counts.added,
                "modified": d.counts.changed,
                "removed": d.counts.removed,
                "patch": "".join(d.patches),
            }
            for d in diffs
        ],
    }


# ------------------------------------------------------------ the command


@click.command()
@VERBOSE
@RENDER_BUDGET
@CONTROL_PLANE
@COMMIT
@KALYPSO_NAMING
@click.option(
    "--env",
    "env_names",
    multiple=True,
    shell_complete=complete_environments,
    help="Only this environment (repeatable).",
)
@click.option("--env-branch", default=None, help="Only the environments kept on this control-plane branch.")
@click.option(
    "--to",
    default=None,
    shell_complete=complete_environments,
    help="The environments up to and including this one.",
)
@click.option(
    "--env-commit",
    default=None,
    help="Read the selected environment's branch at this commit (a pull request's head).",
)
@click.option(
    "--deployed-main",
    is_flag=True,
    help="Use the main commit deployed in each environment, as the scheduling flow does.",
)
@click.option(
    "--comment-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write the diff as a markdown pull-request comment to this file.",
)
@MAIN_BRANCH
@COMMITTED
@STAGED
@OUTPUT
@click.option(
    "--exit-code/--no-exit-code",
    default=True,
    show_default=True,
    help="Exit 1 when a platform branch would change, as flux diff and git diff --exit-code do.",
)
@github_options()
def diff(
    control_plane: str | None,
    commit: str | None,
    env_names: tuple[str, ...],
    env_branch: str | None,
    to: str | None,
    env_commit: str | None,
    deployed_main: bool,
    comment_file: str | None,
    main_branch: str,
    committed: bool,
    staged: bool,
    output: str,
    exit_code: bool,
    github: Any,
) -> None:
    """Show what promoting a commit would change on each platform branch; push nothing.

    Exit status: 0 when nothing would change, 1 when something would (unless
    --no-exit-code), 2 on bad input.

    \b
    Examples:
      promoter diff                      # every environment, edits in the working tree included
      promoter diff --env qa -o json
      promoter diff --to qa --no-exit-code --comment-file diff.md
    """
    if deployed_main and commit:
        raise UsageError("--commit and --deployed-main exclude each other")
    if env_commit and not (env_names or env_branch):
        raise UsageError("--env-commit needs --env or --env-branch: it is one environment branch's commit")
    cp = control_plane_at(control_plane, main_branch)
    kcp = open_kalypso(cp, commit)
    if kcp is not None:  # docs/kalypso.md
        diffs = kalypso_diffs(
            kcp, commit, env_names, (env_branch, to, env_commit, deployed_main), file_patch, EnvDiff
        )
    else:
        with_edits(cp, commit, committed, staged)
        main = cp.main(cp.resolve(commit))
        announce_edits(cp, main)
        envs = _select(main.pipeline, env_names, env_branch, to)
        diffs = _diffs(cp, main, envs, env_commit, deployed_main, github)
    _report(diffs, comment_file, output)
    if exit_code and any(d.changed for d in diffs):
        sys.exit(1)


def _report(diffs: list[EnvDiff], comment_file: str | None, output: str) -> None:
    """The diff as text or as ``-o`` data, the comment file, the Actions outputs and summary."""
    if comment_file:
        Path(comment_file).write_text(diff_markdown(diffs, MAX_COMMENT), encoding="utf-8")
    if output == "text":
        _print(diffs, runner.active())
    else:
        emit(diff_data(diffs), output)
    runner.set_outputs(diff_outputs(diffs, comment_file, runner.MAX_OUTPUT_VALUE))
    runner.add_summary(diff_markdown(diffs, MAX_SUMMARY).replace(COMMENT_MARKER + "\n", ""))


def _print(diffs: list[EnvDiff], grouped: bool) -> None:
    for d in diffs:
        click.echo(d.header(), err=True)
    for d in diffs:
        if not d.patches:
            continue
        if grouped:
            click.echo(f"::group::{d.environment} diff")
        click.echo(f"# {d.header()}\n" + "".join(d.patches), nl=False)
        if grouped:
            click.echo("::endgroup::")


def _select(pipeline: Any, names: tuple[str, ...], branch: str | None, to: str | None) -> list[Any]:
    known = ", ".join(e.name for e in pipeline.environments)
    for name in (*names, *([to] if to else [])):
        if pipeline.environment(name) is None:
            raise UsageError(f"{name}: no such environment (the Pipeline has {known})")
    envs = through(pipeline, to) if to else list(pipeline.ordered())
    if names:
        envs = [e for e in envs if e.name in names]
    if branch is not None:
        envs = [e for e in envs if e.branch == branch]
        if not envs:
            raise UsageError(f"--env-branch {branch}: no environment of the Pipeline is kept on it")
    return envs


def _diffs(
    cp: Any, main: Any, envs: list[Any], env_commit: str | None, deployed: bool, github: Any = None
) -> list[EnvDiff]:

    Renderer(all_templates(main)).compile_all()
    runtime = build_runtime(cp, main.pipeline, Console(quiet=True), github=github)
    heads = runtime.heads(envs)
    pinned = _commit(cp, env_commit) if env_commit else None
    out = []
    for env in envs:
        platform = runtime.platform_for(env)
        base = heads[env.name]
        env_main = main
        if deployed and base:
            there = platform.provenance(base, env.gitops_path)
            if there is not None and there.main_commit:
                env_main = cp.main(cp.resolve(there.main_commit))
        out.append(_env_diff(cp, platform, env_main, env, base, pinned))
    return out


def _env_diff(cp: Any, platform: Any, main: Any, env: Any, base: str | None, pinned: str | None) -> EnvDiff:

    objects = cp.environment(env, pinned)
    rendered = render_environment(main, objects, env.name)
    scene = Scene(main, env, objects, rendered.files, base, None, frozenset())
    for line in removals.warnings(cp, platform, scene, resolve(env, objects), rendered.cluster_types):
        click.echo(one_line(line), err=True)
    provenance = Provenance.of(main, env, objects, rendered)
    plan = platform.plan(base, env.gitops_path, rendered.files, rendered.cluster_types, provenance)
    old = platform.listing(base, env.gitops_path)
    changed = sorted(
        p
        for p in old.keys() | plan.entries.keys()
        if not p.startswith(".promoter/") and old.get(p) != plan.entries.get(p)
    )
    blobs = platform.git.read_blobs([old[p][1] for p in changed if p in old])
    patches = []
    for path in changed:
        before = blobs[old[path][1]] if path in old else None
        after = None
        if path in plan.inline:
            after = plan.inline[path]
        elif path in plan.entries:  # same content under a new mode, or kept as it was
            after = platform.git.read_blobs([plan.entries[path][1]])[plan.entries[path][1]]
        patches.append(file_patch(_join(env.gitops_path, path), before, after))
    return EnvDiff(env.name, env.gitops_branch, base, main.commit, objects.commit, plan.changes, patches)


def _commit(cp: Any, ref: str) -> str:
    sha: str | None = cp.git.commit_of(ref) or cp.branch_head(ref)
    if sha is None:
        raise UsageError(f"--env-commit {ref}: no such commit or branch in {cp.path}")
    return sha


def _join(root: str, path: str) -> str:
    return f"{root}/{path}" if root else path
