"""Uncommitted edits: the working tree (or the index) of a clone as a commit object, so that
``validate``, ``render`` and ``diff`` read what the user is editing, and a pre-commit hook
reads what is staged, through the same code that reads commits.

The commit is built with a throwaway index (a copy of the real one, so unchanged files are not
hashed again) and ``commit-tree``: no ref, the real index and the working tree are not touched.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from promoter.controlplane.documents import is_control_plane_file
from promoter.errors import GitError
from promoter.gitcmd import Git

SHOWN = 5  # changed files named in the announcement


@dataclass(frozen=True)
class Snapshot:
    """The working tree (or index) of ``branch`` as ``commit``, whose parent is the branch head."""

    branch: str
    commit: str
    files: tuple[str, ...]  # control-plane files that differ from the branch head
    staged: bool

    def describe(self) -> str:
        what = "the staged files" if self.staged else "the working tree"
        shown = ", ".join(self.files[:SHOWN]) + (
            f" and {len(self.files) - SHOWN} more" if len(self.files) > SHOWN else ""
        )
        hint = "" if self.staged else "; --committed reads commits only"
        count = f"{len(self.files)} uncommitted file{'' if len(self.files) == 1 else 's'}"
        return f"reading {what} of {self.branch}: {count} ({shown}){hint}"


def _bare(git: Git) -> bool:
    layout = git.layout()
    return layout is None or layout.bare


@dataclass(frozen=True)
class _Status:
    """``git status`` in one process: the branch, its head and the paths that differ."""

    branch: str | None  # None when HEAD is detached
    head: str | None  # None when the branch is unborn
    staged: tuple[str, ...]  # paths whose index entry differs from HEAD
    changed: tuple[str, ...]  # paths whose index entry or working file differs, or untracked


def _status(git: Git) -> _Status:
    raw = git.run(
        "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--no-renames"
    ).stdout.decode("utf-8", "surrogateescape")
    records = raw.split("\0")
    head = _header(records, "# branch.oid ", "(initial)")
    branch = _header(records, "# branch.head ", "(detached)")
    return _Status(branch, head, *_paths(records))


def _header(records: list[str], prefix: str, none: str) -> str | None:
    """The value of the ``prefix`` header line; None when it says ``none`` (or is missing)."""
    value = None
    for record in records:
        if record.startswith(prefix):
            value = None if record.endswith(none) else record.split(" ", 2)[2]
    return value


def _paths(records: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(staged, changed) paths of the status entries."""
    staged: list[str] = []
    changed: list[str] = []
    for record in records:
        kind = record[:2]
        if kind in ("1 ", "u "):  # ordinary and unmerged entries: "1 XY sub mH mI mW hH hI path"
            fields = record.split(" ", 8 if kind == "1 " else 10)
            path, index_state = fields[-1], fields[1][0]
            changed.append(path)
            if index_state != "." or kind == "u ":
                staged.append(path)
        elif kind == "? ":
            changed.append(record[2:])
    return tuple(staged), tuple(changed)


def snapshot(git: Git, *, staged: bool) -> Snapshot | None:
    """The edits of a working clone as a commit; None for a bare repo, a detached or unborn
    HEAD, or when no control-plane file differs from the branch head. A clean clone costs one
    ``git status``; the throwaway index is built only when a control-plane file differs."""
    if _bare(git):
        return None
    state = _status(git)
    branch, head = state.branch, state.head
    if branch is None or head is None:
        return None
    if not any(is_control_plane_file(p) for p in (state.staged if staged else state.changed)):
        return None
    tree = _tree(git, staged)
    files = _differing(git, head, tree)
    if not files:
        return None
    message = f"promoter: the {'index' if staged else 'working tree'} of {branch}"
    commit = git.out("commit-tree", "-p", head, "-m", message, operands=[tree])
    return Snapshot(branch, commit, files, staged)


def _differing(git: Git, head: str, tree: str) -> tuple[str, ...]:
    """The control-plane files that differ between ``head``'s tree and ``tree``."""
    changed = git.run(
        "diff-tree", "-r", "-z", "--name-only", "--no-renames", operands=[f"{head}^{{tree}}", tree]
    )
    names = changed.stdout.decode("utf-8", "surrogateescape").split("\0")
    return tuple(p for p in names if p and is_control_plane_file(p))


def _add_yaml(git: Git, env: dict[str, str]) -> None:
    """Stage every YAML file of the working tree (new, changed, deleted; .gitignore honoured)
    into the throwaway index: only they are read, and an unignored node_modules or virtualenv
    is not hashed into the object store for nothing."""
    proc = git.run("add", "--all", "--ignore-errors", paths=["*.y*ml"], env=env, check=False)
    if proc.returncode != 0 and b"did not match any files" not in proc.stderr:
        raise GitError(
            f"cannot read the working tree of {git.path}: {proc.stderr.decode(errors='replace').strip()}"
        )


def _tree(git: Git, staged: bool) -> str:
    layout = git.layout()
    index = (
        layout.index
        if layout
        else Path(git.out("rev-parse", "--path-format=absolute", "--git-path", "index"))
    )
    fd, copy = tempfile.mkstemp(prefix="promoter-index-")
    os.close(fd)
    try:
        if index.exists():
            shutil.copyfile(index, copy)
        else:
            os.unlink(copy)  # git makes a fresh index where there is none
        env = {"GIT_INDEX_FILE": copy}
        if not staged:
            _add_yaml(git, env)
        return git.run("write-tree", env=env).stdout.decode().strip()
    finally:
        Path(copy).unlink(missing_ok=True)


def uncommitted(git: Git) -> tuple[str, ...]:
    """The control-plane files of a working clone that differ from its HEAD: modified, staged,
    deleted or untracked (``.gitignore`` honoured); none for a bare repo."""
    if _bare(git):
        return ()
    return tuple(sorted({p for p in _status(git).changed if is_control_plane_file(p)}))
