"""Fetching one branch of a repository Kalypso names (a registered workload repo, a GitOps repo)
into a bare cache repo, depth 1: what Kalypso's Flux would have followed, with no cluster."""

from __future__ import annotations

import hashlib
from pathlib import Path

from promoter.errors import GitError
from promoter.gitcmd import Git
from promoter.masking import mask


def fetch_branch(url: str, branch: str, cache: Path) -> tuple[Git, str | None]:
    """The cache repo for ``url`` and the commit of ``branch`` there (None: no such branch).
    GitError when the repo cannot be read at all."""
    store = cache / hashlib.sha256(url.encode()).hexdigest()[:24]
    store.mkdir(parents=True, exist_ok=True)
    git = Git(store)
    if not (store / "HEAD").exists():
        git.run("init", "--quiet", "--bare")
    local = f"refs/kalypso/{branch}"
    fetched = git.run(
        "fetch",
        "--quiet",
        "--no-tags",
        "--depth=1",
        operands=[url, f"+refs/heads/{branch}:{local}"],
        check=False,
    )
    if fetched.returncode != 0:
        listed = git.run("ls-remote", "--heads", operands=[url, f"refs/heads/{branch}"], check=False)
        if listed.returncode != 0 or listed.stdout.strip():
            message = (fetched.stderr or listed.stderr).decode("utf-8", "replace").strip()
            raise GitError(mask(message or f"git fetch exited {fetched.returncode}"))
        return git, None
    return git, git.commit_of(local)


def git_reason(err: GitError) -> str:
    """git's own reason, its first ``fatal:`` line."""
    lines = str(err).splitlines()
    fatal = next((ln for ln in lines if "fatal: " in ln), lines[0] if lines else "")
    return fatal.split("fatal: ", 1)[-1].strip()
