"""A render that owns its whole environment folder (a Kalypso control plane's, docs/kalypso.md):
what Kalypso's scheduler commits is the rendered folders, every other folder removed, and the
files at the root and in dot-folders kept; since 2024 it also keeps the files of a
deployment-target folder it writes into but does not rewrite (``keeps_unwritten``).
``promoter/.promoter`` is the planner's own."""

from __future__ import annotations

from collections.abc import Mapping

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
    written = {p.split("/", 1)[0] for p in files if "/" in p}
    written_deep = {_two_deep(p) for p in files if p.count("/") >= 2} if keeps_unwritten else set()
    stale = {p.split("/", 1)[0] for p in listing if "/" in p and not p.startswith(".")} - written
    kept: dict[str, bytes] = {}
    prefix = f"{root}/" if root else ""
    for path in sorted(listing):
        top = path.split("/", 1)[0]
        dot = top.startswith(".") and top in written and top != _PROMOTER_FOLDER
        if path in files or not (dot or (path.count("/") >= 2 and _two_deep(path) in written_deep)):
            continue
        data = platform.read(base, prefix + path) if base else None
        if data is not None:
            kept[path] = data
    return dict(sorted({**kept, **files}.items())), tuple(sorted(stale))


def _two_deep(path: str) -> str:
    """``a/b`` of ``a/b/c...``: a cluster type's deployment-target folder."""
    return "/".join(path.split("/", 2)[:2])
