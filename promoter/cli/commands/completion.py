"""``promoter completion bash|zsh|fish``: the shell completion script, and the completion of
environment names from the control plane's Pipeline."""

from __future__ import annotations

import click
from click.shell_completion import CompletionItem, get_completion_class

from promoter.cli.commands.common import control_plane as control_plane_at
from promoter.errors import PromoterError

SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_PROMOTER_COMPLETE"


def complete_environments(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The environments of the Pipeline on main, of the control plane given so far on the
    command line (or the repo of the working directory); nothing when it cannot be read."""
    try:
        cp = control_plane_at(ctx.params.get("control_plane"), ctx.params.get("main_branch") or "main")
        envs = cp.main(cp.resolve(None)).pipeline.environments
    except (PromoterError, OSError):
        return []
    return [CompletionItem(e.name) for e in envs if e.name.startswith(incomplete)]


def complete_environment_list(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The last name of a comma-separated list (``dev,q`` -> ``dev,qa``), from the same Pipeline."""
    done, _, last = incomplete.rpartition(",")
    prefix = f"{done}," if done else ""
    given = set(done.split(",")) if done else set()
    return [
        CompletionItem(prefix + item.value)
        for item in complete_environments(ctx, param, last)
        if item.value not in given
    ]


@click.command()
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the shell completion script for SHELL; environment names complete too.

    \b
    Examples:
      eval "$(promoter completion bash)"                      # in ~/.bashrc
      eval "$(promoter completion zsh)"                       # in ~/.zshrc
      promoter completion fish > ~/.config/fish/completions/promoter.fish
    """
    cls = get_completion_class(shell)
    assert cls is not None  # click ships all three
    root = ctx.find_root()
    click.echo(cls(root.command, {}, root.info_name or "promoter", COMPLETE_VAR).source())
