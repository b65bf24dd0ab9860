"""What a promotion would change on each platform branch, pushing nothing (``promoter diff``):
each environment rendered and its tree planned against its platform branch, a unified diff per
changed file; the diff as text and as data (docs/cli.md)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from promoter.errors import UsageError
from promoter.kalypso.control import KalypsoControlPlane, Planned
from promoter.platform.objects import Change
from promoter.platform.provenance import Provenance
from promoter.promotion import removals
from promoter.promotion.graph import through
from promoter.promotion.hydrator import Tree, plan_tree
from promoter.promotion.removals import Scene
from promoter.promotion.waves import resolve
from promoter.rendering.builtins import all_templates
from promoter.rendering.render import Renderer
from promoter.rendering.tree import render_environment


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


def select(pipeline: Any, names: tuple[str, ...], branch: str | None, to: str | None) -> list[Any]:
    """The environments to diff, in order: ``names`` (``--env``), those kept on ``branch``
    (``--env-branch``), those up to and including ``to``; every one by default."""
    _known(pipeline, (*names, *([to] if to else [])))
    envs = through(pipeline, to) if to else list(pipeline.ordered())
    if names:
        envs = [e for e in envs if e.name in names]
    if branch is not None:
        envs = [e for e in envs if e.branch == branch]
        if not envs:
            raise UsageError(f"--env-branch {branch}: no environment of the Pipeline is kept on it")
    return envs


def _known(pipeline: Any, names: tuple[str, ...]) -> None:
    """Each of ``names`` is one of the Pipeline's environments."""
    known = ", ".join(e.name for e in pipeline.environments)
    for name in names:
        if pipeline.environment(name) is None:
            raise UsageError(f"{name}: no such environment (the Pipeline has {known})")


def environment_diffs(
    cp: Any,
    main: Any,
    envs: list[Any],
    runtime: Callable[[], Any],
    env_commit: str | None,
    deployed: bool,
    warn: Callable[[str], None],
) -> list[EnvDiff]:
    """Each of ``envs`` rendered and planned against its platform branch (the platform repos of
    ``runtime()``, built once every template compiled); ``env_commit``: the environment branch's
    commit to read (a pull request's head); ``deployed``: with the main commit each environment
    has deployed, as the scheduling flow renders it. The removal guard's warnings go to ``warn``."""
    Renderer(all_templates(main)).compile_all()
    built = runtime()
    heads = built.heads(envs)
    pinned = _commit(cp, env_commit) if env_commit else None
    out = []
    for env in envs:
        platform = built.platform_for(env)
        base = heads[env.name]
        out.append(
            _env_diff(
                cp, platform, _main_of(cp, main, platform, env, base, deployed), env, base, pinned, warn
            )
        )
    return out


def _main_of(cp: Any, main: Any, platform: Any, env: Any, base: str | None, deployed: bool) -> Any:
    """The main objects ``env`` renders with: ``main``, or (``deployed``) the ones it has deployed."""
    if deployed and base:
        there = platform.provenance(base, env.gitops_path)
        if there is not None and there.main_commit:
            return cp.main(cp.resolve(there.main_commit))
    return main


def _env_diff(
    cp: Any,
    platform: Any,
    main: Any,
    env: Any,
    base: str | None,
    pinned: str | None,
    warn: Callable[[str], None],
) -> EnvDiff:
    objects = cp.environment(env, pinned)
    rendered = render_environment(main, objects, env.name)
    scene = Scene(main, env, objects, rendered.files, base, None, frozenset())
    for line in removals.warnings(cp, platform, scene, resolve(env, objects), rendered.cluster_types):
        warn(line)
    provenance = Provenance.of(main, env, objects, rendered)
    plan = plan_tree(cp, platform, main, env, Tree(base, rendered.files, rendered.cluster_types, provenance))
    patches = _patches(platform, env.gitops_path, platform.listing(base, env.gitops_path), plan)
    return EnvDiff(env.name, env.gitops_branch, base, main.commit, objects.commit, plan.changes, patches)


def _patches(platform: Any, root: str, old: Any, plan: Any) -> list[str]:
    """A unified diff of each file the plan changes under ``root`` (``old``: its listing now),
    the provenance file aside."""
    changed = sorted(
        p
        for p in old.keys() | plan.entries.keys()
        if not p.startswith(".promoter/") and old.get(p) != plan.entries.get(p)
    )
    blobs = platform.git.read_blobs([old[p][1] for p in changed if p in old])
    patches = []
    for path in changed:
        before = blobs[old[path][1]] if path in old else None
        patches.append(file_patch(_join(root, path), before, _after(platform, plan, path)))
    return patches


def _after(platform: Any, plan: Any, path: str) -> bytes | None:
    """What the plan puts at ``path``: new content, the same content under a new mode, or none."""
    if path in plan.inline:
        return bytes(plan.inline[path])
    if path in plan.entries:
        return bytes(platform.git.read_blobs([plan.entries[path][1]])[plan.entries[path][1]])
    return None


def _commit(cp: Any, ref: str) -> str:
    sha: str | None = cp.git.commit_of(ref) or cp.branch_head(ref)
    if sha is None:
        raise UsageError(f"--env-commit {ref}: no such commit or branch in {cp.path}")
    return sha


def _join(root: str, path: str) -> str:
    return f"{root}/{path}" if root else path


def kalypso_diffs(
    kcp: KalypsoControlPlane,
    commit: str | None,
    env_names: tuple[str, ...],
    selection: tuple[str | None, str | None, str | None, bool],
) -> list[EnvDiff]:
    """``promoter diff`` on a Kalypso control plane: each selected environment's GitOps branch
    against what Kalypso's scheduler would commit there. ``selection`` is (--env-branch, --to,
    --env-commit, --deployed-main)."""
    env_branch, to, env_commit, deployed = selection
    if to:
        raise UsageError("--to: a Kalypso control plane keeps no order of environments; name them with --env")
    main = kcp.main(kcp.cp.resolve(commit))
    names = list(env_names) or sorted(main.environments)
    for name in names:
        kcp.environment(main, name)
    if env_branch is not None:
        names = [n for n in names if main.environments[n].control_plane.branch == env_branch]
        if not names:
            raise UsageError(f"--env-branch {env_branch}: no environment of .environments/ is kept on it")
    out = []
    for name in names:
        planned = kcp.plan(name, commit, env_commit, deployed)
        out.append(_kalypso_env_diff(planned))
    return out


def _kalypso_env_diff(planned: Planned) -> EnvDiff:
    before, after = planned.before.files, planned.after
    root = planned.gitops.ref.path
    patches = [
        file_patch(f"{root}/{path}" if root else path, before.get(path), after.get(path))
        for path in sorted(before.keys() | after.keys())
        if before.get(path) != after.get(path)
    ]
    rendered = planned.render
    return EnvDiff(
        rendered.environment,
        planned.gitops.ref.branch,
        planned.before.commit,
        rendered.main.commit,
        rendered.branch.commit,
        {group: Change(*counts) for group, counts in planned.changes().items()},
        patches,
    )
