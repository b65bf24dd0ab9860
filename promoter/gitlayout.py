"""Where a repository keeps what (its kind, its index, the top of its working tree), read from
its files in the plain cases and asked of ``git rev-parse`` in the others (``gitcmd.Git.layout``)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Layout:
    """Where a repository keeps what: its kind, its index, the top of its working tree."""

    bare: bool
    index: Path
    top: Path | None  # None for a bare repository (or a folder inside .git)


#: ``git rev-parse`` options that print what a Layout holds, one line each.
ASK_LAYOUT = (
    "--is-bare-repository",
    "--is-inside-work-tree",
    "--show-prefix",
    "--path-format=absolute",
    "--git-path",
    "index",
)


def parse_layout(out: bytes, path: Path) -> Layout:
    """The Layout ``git -C <path> rev-parse <ASK_LAYOUT>`` printed."""
    bare, inside, prefix, index = out.decode("utf-8", "surrogateescape").split("\n")[:4]
    top = None
    if bare != "true" and inside == "true":  # as many folders up as the prefix has
        here = Path(os.path.realpath(path))
        top = here.parents[prefix.count("/") - 1] if prefix else here
    return Layout(bare == "true", Path(index), top)


# Settings that move a repository's parts away from where git looks first: with any of them
# set in the environment or the repository's config, git is asked.
_MOVED_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_CONFIG_PARAMETERS")
_MOVED_CONFIG = re.compile(r"^\s*(?:worktree|worktreeconfig)\s*=|^\s*\[\s*include", re.I | re.M)
_BARE_CONFIG = re.compile(r"^\s*bare\s*=\s*true\s*$", re.I | re.M)


def plain_layout(path: Path, env: Mapping[str, str]) -> Layout | None:
    """The layout of the two plain cases without a git process: ``path`` holds a ``.git``
    folder (the top of a clone) or is a bare repository, owned by this user (git refuses a
    repository of another owner), its config moving nothing (``core.worktree``,
    ``core.bare`` in a clone, includes), no ``GIT_DIR``-like variable set. None otherwise:
    git answers (a folder inside a clone, a worktree's ``.git`` file, anything unusual)."""
    if any(env.get(key) for key in _MOVED_ENV):
        return None
    try:
        return _clone_top(path) if (path / ".git").is_dir() else _bare(path)
    except OSError:
        return None


def _clone_top(path: Path) -> Layout | None:
    """The top of a clone (``path/.git`` a folder), when its config moves nothing (nor says bare)."""
    dot_git = path / ".git"
    config = (dot_git / "config").read_text(errors="replace")
    moved = _MOVED_CONFIG.search(config) or _BARE_CONFIG.search(config)
    if not (dot_git / "HEAD").is_file() or moved or not _owned(path, dot_git):
        return None
    here = Path(os.path.realpath(path))
    return Layout(False, here / ".git" / "index", here)


def _bare(path: Path) -> Layout | None:
    """A bare repository (``HEAD``, ``objects`` and ``refs`` in ``path``), when its config says
    bare and moves nothing."""
    if not ((path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()):
        return None
    config = (path / "config").read_text(errors="replace")
    if _BARE_CONFIG.search(config) and not _MOVED_CONFIG.search(config) and _owned(path):
        return Layout(True, Path(os.path.realpath(path)) / "index", None)
    return None


def _owned(*paths: Path) -> bool:
    return all(p.stat().st_uid == os.geteuid() for p in paths)
