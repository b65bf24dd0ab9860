"""``promoter hub sync``: record a platform branch's first-parent history at the hub, so a hub
started late (or one that missed a run) knows every commit the promoter merged.

Each commit is described as the promoter records it (``gates.hubapi.commit_record``: first
parent, main commit from its provenance, assignments from its layout), oldest first, so each
commit's parent is known before it. Recording is idempotent: a commit the hub has is skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from promoter.errors import UsageError
from promoter.gates.hubapi import commit_record
from promoter.platform.repo import PlatformRepo

DEFAULT_MAX_COMMITS = 1000


def sync(
    url: str,
    environment: str,
    branch: str,
    root: str,
    sink: Callable[[dict[str, Any]], bool],
    order: tuple[str, ...] = (),
    max_commits: int = DEFAULT_MAX_COMMITS,
) -> tuple[int, int]:
    """Record the last ``max_commits`` first-parent commits of ``branch``; (new, already known)."""
    platform = PlatformRepo(url)
    head = platform.fetch([branch]).get(branch)
    if not head:
        raise UsageError(f"--branch {branch}: no such branch in {url}")
    shas = platform.git.out(
        "rev-list", "--first-parent", f"--max-count={max_commits}", operands=[head]
    ).split()
    new = known = 0
    for sha in reversed(shas):
        record = commit_record(platform, sha, root, environment, branch, None, order)
        if sink(record):
            new += 1
        else:
            known += 1
    return new, known


def describe_commit(
    url: str,
    ref: str,
    root: str,
    environment: str,
    branch: str,
    main_commit: str | None = None,
    order: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The record of one platform commit ``ref`` (a sha, or a branch of the platform repo)."""
    platform = PlatformRepo(url)
    heads = platform.fetch([branch])
    sha = heads.get(branch) if ref == branch else platform.git.rev_parse(f"{ref}^{{commit}}")
    if not sha:
        raise UsageError(f"--commit {ref}: not a commit of {url} (is branch {branch} fetched?)")
    return commit_record(platform, sha, root, environment, branch, main_commit, order)
