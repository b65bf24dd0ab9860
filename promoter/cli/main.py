"""The ``promoter`` command line. Each command builds its collaborators and calls the library;
``PromoterGroup.invoke`` is the one place where errors become exit codes (docs/cli.md, "Exit codes")."""

from __future__ import annotations

import importlib
import os
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Sequence
from typing import Any

import click

from promoter import trace
from promoter.cli import suggest
from promoter.console import colour_enabled, paint
from promoter.errors import InputErrors, PromoterError, UsageError, one_line
from promoter.ghactions import runner
from promoter.gitcmd import require_git
from promoter.masking import load_gates_env, mask


class Terminated(KeyboardInterrupt):
    """SIGTERM (a CI job cancelled, ``kill``, a container stopped), raised where the run is so
    that it stops as Ctrl-C stops it: every cleanup on the way out runs, and one line says so."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def _interrupted(err: BaseException) -> int:
    """Say what an interrupted run left, and its exit code: 128 + the signal, as shells count."""
    terminated = isinstance(err, Terminated) or isinstance(err.__cause__, Terminated)
    word = "terminated" if terminated else "interrupted"
    click.echo(f"{word}; nothing is left half-done: run the same command again to go on", err=True)
    return 143 if terminated else 130


# Each command's module, imported only when that command runs (or help lists it): a command
# loads what it uses and no more, so `promoter --version`, `report-status` or a completion
# starts in a fraction of the time the whole library takes to import.
COMMANDS = {
    "check-platform": "check_platform:check_platform",
    "completion": "completion:completion",
    "convert": "convert:convert_command",
    "demo": "demo:demo",
    "diff": "diff:diff",
    "graph": "graph:graph",
    "hold": "hold:hold",
    "hub": "hub:hub",
    "init": "init:init",
    "kalypso": "kalypso:kalypso",
    "promote": "promote:promote",
    "rehearse": "rehearse:rehearse",
    "release": "hold:release",
    "render": "render:render",
    "report-status": "report_status:report_status",
    "rollback": "rollback:rollback",
    "status": "status:status",
    "validate": "validate:validate",
}


class PromoterGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, _, name = COMMANDS[cmd_name].partition(":")
            command = getattr(importlib.import_module(f"promoter.cli.commands.{module}"), name)
            assert command.name == cmd_name, (cmd_name, command.name)
            self.add_command(command)
        return self.commands.get(cmd_name)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """click's own errors ("Error: Missing option") worded as the promoter's ("error: ..."),
        so one style reaches the user and scripts that grep stderr."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, _terminate) if main_thread else None
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.ClickException as err:
            _show_click_error(err)
            sys.exit(err.exit_code)
        except click.exceptions.Abort as err:  # click's word for Ctrl-C outside a command
            sys.exit(_interrupted(err))
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        runner.mask_new_secrets()  # no-ops outside GitHub Actions
        trace.enable(None)  # a command's -v turns it on (each invocation of the group alike)
        try:
            _prepare()
            return super().invoke(ctx)
        except PromoterError as err:
            ctx.exit(_show_error(err))
        except KeyboardInterrupt as err:
            ctx.exit(_interrupted(err))
        except (click.exceptions.Exit, click.exceptions.ClickException, click.exceptions.Abort):
            raise
        except BrokenPipeError:  # promoter render --out - | head: the reader has all it wants
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail again
            ctx.exit(141)
        except Exception:
            log = _crash_log()
            click.echo(f"error: unexpected failure (a bug); the traceback is in {log}", err=True)
            ctx.exit(3)


def _prepare() -> None:
    """What every command needs before it starts: the gates' variables, a git new enough."""
    try:
        load_gates_env()  # the reusable workflow's one secret of gate and hub variables
    except ValueError as err:
        raise UsageError(str(err)) from err
    require_git()  # an old git would fail later, after pushing, as a merge conflict


def _show_error(err: PromoterError) -> int:
    """Every problem of ``err`` on stderr, one line each (annotated in Actions); its exit code."""
    lines = err.lines() if isinstance(err, InputErrors) else [str(err)]  # every problem at once
    with runner.commands_stopped():
        for line in lines:
            click.echo(f"{_error_word()} {one_line(mask(line))}", err=True)
    for problem in err.problems[: InputErrors.LIMIT] if isinstance(err, InputErrors) else [err]:
        runner.report_error(problem)
    return err.exit_code


def _error_word() -> str:
    """``error:``, red on a terminal that takes colour."""
    return paint("error:", "bold-red") if colour_enabled(sys.stderr) else "error:"


def _show_click_error(err: click.exceptions.ClickException) -> None:
    ctx = getattr(err, "ctx", None)
    if isinstance(err, click.exceptions.UsageError) and ctx is not None:
        click.echo(f"{ctx.get_usage()}\nTry '{ctx.command_path} --help' for help.\n", err=True)
    message = err.format_message()
    if isinstance(err, click.exceptions.NoSuchOption) and ctx is not None and ctx.command.name:
        message = suggest.unknown_flag(ctx.command.name, err.option_name, list(err.possibilities or ()))
    click.echo(f"{_error_word()} {one_line(mask(message))}", err=True)


def _crash_log() -> str:
    fd, path = tempfile.mkstemp(prefix="promoter-crash-", suffix=".log")
    with os.fdopen(fd, "w") as handle:
        handle.write(mask(traceback.format_exc()))
    return path


@click.group("promoter", cls=PromoterGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="promoter")
def cli() -> None:
    """Promote a GitOps control plane through environments, gated on rollout health.

    \b
    Examples:
      promoter demo                      # the whole flow on a sample, no network
      promoter validate                  # check the control plane you are editing
      promoter diff --env dev            # what promoting would change in dev (exit 1 if anything)
      promoter promote --to qa
      promoter status -o json
    """


def main() -> None:
    cli(prog_name="promoter")


if __name__ == "__main__":  # pragma: no cover
    main()
