"""Options shared by the commands."""

from __future__ import annotations

from typing import Any

import click

from promoter.controlplane.repo import ControlPlane

CONTROL_PLANE = click.option(
    "--control-plane",
    "control_plane",
    default=None,
    type=click.Path(file_okay=False),
    envvar="PROMOTER_CONTROL_PLANE",
    help="The control-plane git repo (a working clone, any folder of it, or a bare repo; "
    "default: $PROMOTER_CONTROL_PLANE, else the git repo of the working directory).",
)
COMMIT = click.option(
    "--commit", default=None, help="Main commit or ref to use (default: the main branch head)."
)
MAIN_BRANCH = click.option(
    "--main-branch", default="main", show_default=True, help="The control plane's promoted branch."
)


def control_plane(path: str | None, main_branch: str) -> Any:
    """The control plane at ``path``, else the git repo the working directory is in."""
    if path is None:
        return ControlPlane(".", main_branch, label="the working directory (no --control-plane given)")
    return ControlPlane(path, main_branch)
