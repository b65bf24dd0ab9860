"""The github forge's flags, shared by every command that reaches GitHub (``promote``,
``diff``, ``status``, ``graph``, ``hold``, ``release``), handed to the command as one
``github`` (``runtime.GitHubOptions``). Apart from ``commands/common``: the runtime they name
would slow the commands that never reach a forge (``completion``: about 200 -> 500 ms)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from promoter.clock import parse_duration
from promoter.errors import UsageError
from promoter.runtime import GitHubOptions


def github_options(*, merging: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The github forge's flags, handed to the command as one ``github`` (GitHubOptions)."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            kwargs["github"] = _github(kwargs)
            return command(*args, **kwargs)

        for option in reversed(_GITHUB_OPTIONS + (_MERGE_OPTIONS if merging else [])):
            wrapper = option(wrapper)
        return wrapper

    return decorate


def _github(kwargs: dict[str, Any]) -> GitHubOptions:
    """The github flags, taken out of a command's arguments."""
    wait = kwargs.pop("github_rate_limit_wait", None)
    try:
        seconds = parse_duration(wait) if wait else GitHubOptions.rate_limit_wait
    except ValueError as err:
        raise UsageError(f"--github-rate-limit-wait: {err}") from err
    return GitHubOptions(
        api_url=kwargs.pop("github_api_url"),
        control_plane_repo=kwargs.pop("control_plane_repo"),
        auto_merge=kwargs.pop("github_auto_merge", False),
        rate_limit_wait=seconds,
    )


_GITHUB_OPTIONS = [
    click.option(
        "--github-api-url",
        default=None,
        help="GitHub's API (default: $GITHUB_API_URL, else https://api.github.com; <server>/api/v3 on GitHub Enterprise Server).",
    ),
    click.option(
        "--control-plane-repo",
        default=None,
        metavar="OWNER/NAME",
        help="The control plane on GitHub, for statuses (default: $GITHUB_REPOSITORY, else the origin remote).",
    ),
]
_MERGE_OPTIONS = [
    click.option(
        "--github-auto-merge",
        is_flag=True,
        help="merge: auto uses GitHub's auto-merge (waits for required checks and reviews).",
    ),
    click.option(
        "--github-rate-limit-wait",
        default="15m",
        show_default=True,
        help="The longest wait for GitHub's rate limit to reset before giving up.",
    ),
]
