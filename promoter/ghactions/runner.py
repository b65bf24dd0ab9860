"""What a step says to its GitHub Actions runner: workflow commands (masks, annotations, log
groups, stopped commands), step outputs and the step summary, and the console that folds each
environment's lines into a log group.

Pure builders return text; thin writers append it to the files the runner names
(``$GITHUB_OUTPUT``, ``$GITHUB_STEP_SUMMARY``) or print workflow commands. The writers do
nothing unless ``GITHUB_ACTIONS=true``, so the CLI behaves the same everywhere else.

Workflow commands go to stderr: the runner reads commands from both streams, and stdout may
carry ``--output json``.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from promoter.console import Console
from promoter.errors import InputError, PromoterError
from promoter.masking import mask, secrets

# GitHub's limit for one step's outputs is 1 MiB in all; a diff is cut well below it.
MAX_OUTPUT_VALUE = 256 * 1024

_masked: set[str] = set()
_open_group: list[tuple[str, TextIO]] = []  # the log group being printed: title, stream


def run_url(environ: Mapping[str, str] | None = None) -> str | None:
    """The URL of the Actions run promoting, linked from statuses and PRs (None outside one)."""
    env = os.environ if environ is None else environ
    server, repo, run = (env.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    return f"{server}/{repo}/actions/runs/{run}" if server and repo and run else None


def active(environ: Mapping[str, str] | None = None) -> bool:
    """True inside a GitHub Actions job."""
    return (environ if environ is not None else os.environ).get("GITHUB_ACTIONS") == "true"


# ------------------------------------------------------------ workflow commands


def escape_data(text: str) -> str:
    """A command's message, escaped as GitHub's toolkit does."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command property's value: also ``:`` and ``,``, which end a property."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str = "", **properties: str | int | None) -> str:
    """``::name key=value,...::message``; properties that are None are left out."""
    props = ",".join(f"{k}={escape_property(str(v))}" for k, v in properties.items() if v is not None)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def mask_commands(values: Iterable[str]) -> list[str]:
    """``::add-mask::`` for each secret, and for each long line of a multi-line one (a PEM key):
    the runner masks log lines one at a time, so a whole multi-line value never matches."""
    out: list[str] = []
    for value in values:
        out.append(command("add-mask", value))
        lines = value.splitlines()
        if len(lines) > 1:
            out.extend(command("add-mask", ln.strip()) for ln in lines if len(ln.strip()) >= 8)
    return out


def annotation_file(
    file: str, control_plane: str | None, workspace: str | None, branches: Sequence[str]
) -> str | None:
    """Where GitHub finds ``file`` in the checkout, or None when it is not there.

    Messages name environment-branch files ``<branch>:<path>``; such a file is in the checkout
    only when the run is on that branch (a push to it, or a pull request into it).
    """
    branch, sep, path = file.partition(":")
    if sep:
        if branch not in branches:
            return None
        file = path
    if control_plane and workspace:
        root = Path(workspace).resolve()
        here = (root / control_plane).resolve()
        if here == root or root in here.parents:
            prefix = here.relative_to(root).as_posix()
            return file if prefix == "." else f"{prefix}/{file}"
    return file


def error_annotation(err: PromoterError, environ: Mapping[str, str]) -> str:
    """An ``::error`` line for ``err``: file and line for bad input, so GitHub marks the spot."""
    if not isinstance(err, InputError) or not err.file:
        return command("error", mask(str(err)), title="promoter")
    branches = [b for b in (environ.get("GITHUB_BASE_REF"), environ.get("GITHUB_REF_NAME")) if b]
    file = annotation_file(
        err.file, environ.get("PROMOTER_CONTROL_PLANE"), environ.get("GITHUB_WORKSPACE"), branches
    )
    if file is None:  # not in this checkout: the title still says where
        return command("error", mask(err.message), title=mask(str(err)).removesuffix(err.message).strip(": "))
    return command(
        "error", mask(err.message), file=file, line=err.line, col=err.column, title="promoter: bad input"
    )


# ------------------------------------------------------------ outputs


def new_delimiter() -> str:
    """A heredoc delimiter no value can guess, as GitHub's toolkit makes them."""
    return f"ghadelimiter_{uuid.uuid4()}"


def output_entry(name: str, value: str, delimiter: str) -> str:
    """One ``name<<delimiter`` block of ``$GITHUB_OUTPUT``; safe for any value."""
    if delimiter in name or delimiter in value:
        raise ValueError(f"output {name}: the value contains its delimiter")
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def outputs_text(values: Mapping[str, str], delimiter: Callable[[], str] = new_delimiter) -> str:
    return "".join(output_entry(name, value, delimiter()) for name, value in values.items())


# ------------------------------------------------------------ writers


def emit(line: str, stream: TextIO | None = None) -> None:
    print(line, file=stream or sys.stderr, flush=True)


def append_to(variable: str, text: str) -> None:
    """Append ``text`` to the file the runner names in ``variable`` (when it names one)."""
    path = os.environ.get(variable)
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)


def set_outputs(values: Mapping[str, str]) -> None:
    if active():
        append_to("GITHUB_OUTPUT", outputs_text({k: mask(v) for k, v in values.items()}))


def add_summary(markdown: str) -> None:
    if active():
        append_to("GITHUB_STEP_SUMMARY", mask(markdown).rstrip("\n") + "\n\n")


def mask_new_secrets(stream: TextIO | None = None) -> None:
    """``::add-mask::`` every secret not announced yet (tokens minted during the run too)."""
    if not active():
        return
    fresh = [s for s in secrets() if s not in _masked]
    for line in mask_commands(fresh):
        emit(line, stream)
    _masked.update(fresh)


def end_group() -> None:
    """Close the open log group, on the stream it was opened on."""
    if _open_group:
        _, stream = _open_group.pop()
        emit("::endgroup::", stream)


@contextmanager
def commands_stopped() -> Iterator[None]:
    """In Actions, text printed inside this block cannot act as a workflow command (an error
    message may quote an input or a file, and a line of it may start with ``::``)."""
    if not active():
        yield
        return
    token = uuid.uuid4().hex
    emit(f"::stop-commands::{token}")
    try:
        yield
    finally:
        emit(f"::{token}::")


def report_error(err: PromoterError) -> None:
    """Close any open log group and annotate the error (when in Actions)."""
    if active():
        end_group()
        emit(error_annotation(err, os.environ))


def record_error(message: str) -> None:
    """A record the run could not write (refs/promoter/*: the token lacks Contents write): an
    error annotation and a line in the step summary in Actions, an ``error:`` line elsewhere; the
    run's outcome stays the promotion's (docs/github-actions.md#holds-windows-and-overrides)."""
    text = mask(message)
    if active():
        end_group()
        emit(command("error", text, title="promoter: records"))
        add_summary(f"\n❌ **Not recorded**: {text}. Give the promoter's token Contents write on the "
                    "control-plane repo (`promoter validate --github` checks it).\n")  # fmt: skip
    else:
        emit(f"error: {text}")


def warn(message: str) -> None:
    """A warning that does not stop the run: an annotation in Actions, a line elsewhere."""
    if active():
        end_group()
        emit(command("warning", mask(message), title="promoter"))
    else:
        emit(f"warning: {mask(message)}")


# ------------------------------------------------------------ console

_PREFIX = re.compile(r"^([\w.-]+): ")


class GroupingConsole(Console):
    """A Console that folds each environment's lines into a ``::group::`` of the log."""

    def __init__(self, groups: Iterable[str], stream: TextIO | None = None) -> None:
        super().__init__(stream=stream)
        self.groups = set(groups)

    def say(self, line: str) -> None:
        mask_new_secrets()
        match = _PREFIX.match(line)
        title = match.group(1) if match and match.group(1) in self.groups else None
        if title != (_open_group[0][0] if _open_group else None):
            end_group()
            if title:
                stream = self.stream or sys.stdout
                _open_group.append((title, stream))
                emit(command("group", title), stream)
        super().say(line)


def console(groups: Iterable[str], stream: TextIO | None = None) -> Console:
    """The console for a command: grouped by environment in Actions, plain elsewhere."""
    return GroupingConsole(groups, stream) if active() else Console(stream=stream)
