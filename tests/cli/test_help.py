"""Every option and argument of every command says what it is in ``--help``, and every option
that takes an environment completes its names from the Pipeline."""

from __future__ import annotations

from collections.abc import Iterator

import click
import pytest

from promoter.cli.commands.completion import complete_environment_list, complete_environments
from promoter.cli.main import cli


def commands(command: click.Command = cli, path: str = "promoter") -> Iterator[tuple[str, click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):  # each command's module imported as it runs
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            yield from commands(sub, f"{path} {name}")


def parameters() -> list[tuple[str, click.Command, click.Parameter]]:
    return [(path, command, p) for path, command in commands() for p in command.params]


def test_the_walk_reaches_every_command() -> None:
    paths = {path for path, _ in commands()}
    assert {"promoter promote", "promoter hub keys add", "promoter hub rollout", "promoter demo"} <= paths


@pytest.mark.parametrize(
    ("path", "command", "param"),
    [pytest.param(*t, id=f"{t[0]} {t[2].name}") for t in parameters()],
)
def test_every_option_and_argument_has_help(
    path: str, command: click.Command, param: click.Parameter
) -> None:
    if isinstance(param, click.Option):
        assert param.help and param.help.strip(), f"{path} {param.opts[0]} has no help text"
    else:  # an argument is described in its command's text, by its name in the usage line
        name = param.human_readable_name.upper()
        assert name in (command.help or ""), f"{path}: the help does not say what {name} is"


ENVIRONMENT_OPTIONS = {"--to", "--schedule", "--env", "--environment"}
ENVIRONMENT_LISTS = {"--environments"}
NOT_AN_ENVIRONMENT = {("promoter rollback", "--to")}  # a commit to roll back to


@pytest.mark.parametrize(
    ("path", "param"),
    [
        pytest.param(path, p, id=f"{path} {p.opts[0]}")
        for path, _, p in parameters()
        if isinstance(p, click.Option)
        and set(p.opts) & (ENVIRONMENT_OPTIONS | ENVIRONMENT_LISTS)
        and (path, p.opts[0]) not in NOT_AN_ENVIRONMENT
    ],
)
def test_every_option_that_takes_an_environment_completes_it(path: str, param: click.Option) -> None:
    wanted = complete_environment_list if set(param.opts) & ENVIRONMENT_LISTS else complete_environments
    assert param._custom_shell_complete is wanted, f"{path} {param.opts[0]}"
