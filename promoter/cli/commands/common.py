"""Options shared by the commands."""

from __future__ import annotations

from typing import Any

import click

from promoter.controlplane.repo import ControlPlane

CONTROL_PLANE = click.option(
    "--control-plane",
    "control_plane",
    required=True,
    type=click.Path(file_okay=False),
    envvar="PROMOTER_CONTROL_PLANE",
    help="The control-plane git repo (a working clone or a bare repo).",
)
COMMIT = click.option(
    "--commit", default=None, help="Main commit or ref to use (default: the main branch head)."
)
MAIN_BRANCH = click.option(
    "--main-branch", default="main", show_default=True, help="The control plane's promoted branch."
)


def control_plane(path: str, main_branch: str) -> Any:

    return ControlPlane(path, main_branch)
