"""An environment's GitOps branch (its GitOpsRepo) as Kalypso's scheduler leaves it: the files at
the root and in dot-folders (``.github/``) are kept, ``.github/tracking/Promoted_Commit_Id``
rewritten when the main commit changed; the rendered files are written; stale cluster-type and
deployment-target folders are removed (the 2023 scheduler replaced every folder whole; since
2024 a file in a target folder that is not rewritten stays)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from promoter.errors import ConfigError, GitError
from promoter.gitcmd import Git
from promoter.kalypso.fetch import fetch_branch, git_reason
from promoter.kalypso.objects import GitOpsRepo
from promoter.urls import redact


@dataclass(frozen=True)
class GitOpsState:
    """The GitOps branch as it is: its commit (None: no branch yet) and files under the path."""

    commit: str | None
    files: dict[str, bytes]


def read_gitops(gitops: GitOpsRepo, cache: Path) -> GitOpsState:
    ref = gitops.ref
    git, commit = _fetch(gitops, cache)
    if commit is None:
        return GitOpsState(None, {})
    entries = [e for e in git.ls_tree(commit, ref.path or None) if e.type == "blob"]
    blobs = git.read_blobs(e.sha for e in entries)
    prefix = f"{ref.path}/" if ref.path else ""
    return GitOpsState(commit, {e.path[len(prefix) :]: blobs[e.sha] for e in entries})


def read_gitops_file(gitops: GitOpsRepo, cache: Path, path: str) -> bytes | None:
    """One file of the GitOps branch (``path`` under its folder), None where there is none."""
    git, commit = _fetch(gitops, cache)
    where = f"{gitops.ref.path}/{path}" if gitops.ref.path else path
    return git.read_file(commit, where) if commit is not None else None


def _fetch(gitops: GitOpsRepo, cache: Path) -> tuple[Git, str | None]:
    ref = gitops.ref
    try:
        return fetch_branch(ref.repo, ref.branch, cache)
    except GitError as err:
        raise ConfigError(
            f"spec: cannot fetch branch {ref.branch!r} of {redact(ref.repo)}: {git_reason(err)}",
            file=gitops.source.file,
            line=gitops.source.line,
        ) from err


def next_tree(old: dict[str, bytes], rendered: dict[str, bytes]) -> dict[str, bytes]:
    """What the branch holds after the 2023 scheduler's commit: the rendered folders replace
    every folder."""
    kept = {p: data for p, data in old.items() if "/" not in p or p.startswith(".")}
    return dict(sorted({**kept, **rendered}.items()))


def scheduler_tree(
    old: dict[str, bytes], rendered: dict[str, bytes], layout: dict[str, set[str]]
) -> dict[str, bytes]:
    """What the branch holds after the scheduler's commit since 2024 (``scheduler/githubrepo.go``
    ``getTree``, built on the branch head): a file one folder deep or more, outside a dot-folder,
    is deleted when its top folder is no current cluster type, or its second part is neither
    ``README.md`` nor a current deployment target of that cluster type; everything else is
    kept (files at the root, in dot-folders, and in a target folder that is not rewritten), and
    the rendered files are written over it. ``layout``: each cluster type's targets."""

    def kept(path: str) -> bool:
        if "/" not in path or path.startswith("."):
            return True
        top, second = path.split("/", 2)[:2]
        return top in layout and (second == "README.md" or second in layout[top])

    return dict(sorted({**{p: d for p, d in old.items() if kept(p)}, **rendered}.items()))


def tree_changes(old: dict[str, bytes], new: dict[str, bytes]) -> dict[str, tuple[int, int, int]]:
    """(added, changed, removed) per top-level folder ('.' for root files)."""
    out: dict[str, list[int]] = {}
    for path in sorted(old.keys() | new.keys()):
        group = path.split("/", 1)[0] if "/" in path else "."
        slot = 0 if path not in old else 2 if path not in new else 1
        if slot == 1 and old[path] == new[path]:
            continue
        out.setdefault(group, [0, 0, 0])[slot] += 1
    return {group: (a, c, r) for group, (a, c, r) in out.items()}
