"""A render that owns its whole environment folder (a Kalypso control plane's, docs/kalypso.md):
what Kalypso's scheduler commits is the rendered folders, every other folder removed, and the
files at the root and in dot-folders kept. ``promoter/.promoter`` is the planner's own."""

from __future__ import annotations

from collections.abc import Mapping

from promoter.platform.provenance import PROVENANCE
from promoter.platform.repo import PlatformRepo

_PROMOTER_FOLDER = PROVENANCE.split("/")[0]


def owned_tree(
    platform: PlatformRepo, base: str | None, root: str, files: Mapping[str, bytes]
) -> tuple[dict[str, bytes], tuple[str, ...]]:
    """The files to plan (the render, and the other files of the dot-folders it writes into,
    read from ``base``) and the stale folders of ``base`` the plan must remove."""
    listing = platform.listing(base, root)
    written = {p.split("/", 1)[0] for p in files if "/" in p}
    stale = {p.split("/", 1)[0] for p in listing if "/" in p and not p.startswith(".")} - written
    kept: dict[str, bytes] = {}
    prefix = f"{root}/" if root else ""
    for path in sorted(listing):
        top = path.split("/", 1)[0]
        if path in files or top not in written or not top.startswith(".") or top == _PROMOTER_FOLDER:
            continue
        data = platform.read(base, prefix + path) if base else None
        if data is not None:
            kept[path] = data
    return dict(sorted({**kept, **files}.items())), tuple(sorted(stale))
