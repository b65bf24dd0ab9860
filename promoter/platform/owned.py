"""A render that owns its whole environment folder (a Kalypso control plane's, docs/kalypso.md):
what Kalypso's scheduler commits is the rendered folders, every other folder removed, and the
files at the root and in dot-folders kept; since 2024 it also keeps the files of a
deployment-target folder it writes into but does not rewrite (``keeps_unwritten``).
``promoter/.promoter`` is the planner's own."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from promoter.platform.provenance import PROVENANCE
from promoter.platform.repo import PlatformRepo

_PROMOTER_FOLDER = PROVENANCE.split("/")[0]


def owned_tree(
    platform: PlatformRepo,
    base: str | None,
    root: str,
    files: Mapping[str, bytes],
    keeps_unwritten: bool = False,
) -> tuple[dict[str, bytes], tuple[str, ...]]:
    """The files to plan (the render, and the other files of the dot-folders it writes into,
    read from ``base``; with ``keeps_unwritten``, those of the folders two deep it writes into
    too) and the stale folders of ``base`` the plan must remove."""
    listing = platform.listing(base, root)
    written = _top_folders(files)
    written_deep = _target_folders(files) if keeps_unwritten else set()
    stale = {top for top in _top_folders(listing) if not top.startswith(".")} - written
    kept = [p for p in sorted(listing) if p not in files and _kept(p, written, written_deep)]
    return dict(sorted({**_read(platform, base, root, kept), **files}.items())), tuple(sorted(stale))


def _kept(path: str, written: set[str], written_deep: set[str]) -> bool:
    """Whether a file of the base stays beside the render: in a dot-folder it writes into (not
    the planner's own), or in a deployment-target folder it writes into."""
    top = path.split("/", 1)[0]
    if top.startswith(".") and top in written and top != _PROMOTER_FOLDER:
        return True
    return path.count("/") >= 2 and _two_deep(path) in written_deep


def _read(platform: PlatformRepo, base: str | None, root: str, paths: list[str]) -> dict[str, bytes]:
    """The files ``paths`` (relative to ``root``) as ``base`` has them; none without a base."""
    if not base:
        return {}
    prefix = f"{root}/" if root else ""
    found = {path: platform.read(base, prefix + path) for path in paths}
    return {path: data for path, data in found.items() if data is not None}


def _top_folders(paths: Iterable[str]) -> set[str]:
    return {p.split("/", 1)[0] for p in paths if "/" in p}


def _target_folders(paths: Iterable[str]) -> set[str]:
    return {_two_deep(p) for p in paths if p.count("/") >= 2}


def _two_deep(path: str) -> str:
    """``a/b`` of ``a/b/c...``: a cluster type's deployment-target folder."""
    return "/".join(path.split("/", 2)[:2])
