"""Every ``promoter ...`` command line in README.md and docs/*.md parses with the real CLI: the
commands exist, and so do their options; a full command (no placeholder) also parses whole, with
its arguments. The docs cannot drift from the CLI again (issue 25: a required option that was
not, a flag that did not exist)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

import click
import pytest

from promoter.cli.main import cli
from tests.support.paths import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Where a command starts within a shell line: its start, after a prompt, a pipe, &&, ; or $(.
_STARTS = re.compile(r"(?:^|\$ |\| |&& |; |\$\(|`|run: )((?:\S*/)?promoter (?:[^`|;)]|\)(?!\"))*)")
_INLINE = re.compile(r"`((?:\S*/)?promoter [^`]+)`")
# A synopsis rather than a command: placeholders, alternatives, optional parts, ellipses.
_SYNOPSIS = re.compile(r"[\[\]<>{}|]|\.\.\.|(?<![\w-])[A-Z][A-Z_,]{1,}(?![\w-])")


@dataclass(frozen=True)
class Line:
    where: str  # file:line
    text: str
    fenced: bool = True  # in a code block (a usage line there is the reference), else in prose


# Spans that name something else: the log group the actions print a crash in.
NOT_COMMANDS = {"promoter crash"}


def command_lines() -> list[Line]:
    found: list[Line] = []
    for doc in DOCS:
        lines = doc.read_text().splitlines()
        prose = list(lines)  # the text outside fences, fenced lines blanked: spans may wrap lines
        fenced = False
        for number, raw in enumerate(lines, 1):
            if raw.lstrip().startswith("```"):
                fenced = not fenced
                prose[number - 1] = ""
            elif fenced:
                prose[number - 1] = ""
                where = f"{doc.relative_to(ROOT)}:{number}"
                found += [Line(where, m.group(1)) for m in _STARTS.finditer(raw.strip())]
        text = "\n".join(prose)
        for m in _INLINE.finditer(text):
            where = f"{doc.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}"
            found.append(Line(where, " ".join(m.group(1).split()), fenced=False))
    return [line for line in found if line.text not in NOT_COMMANDS]


def words(text: str) -> list[str]:
    """The words of one command, without the program's path, a trailing comment or continuation."""
    text = text.split("  #", 1)[0].rstrip(" \\")
    try:
        split = shlex.split(text, comments=True)
    except ValueError:  # an unclosed quote: the line goes on in prose
        split = text.split()
    return split[1:]


def resolve(args: list[str]) -> tuple[list[str], click.Command, list[str]]:
    """The command path the words name, its command, and the words left for it."""
    path, command = ["promoter"], cli
    while isinstance(command, click.Group) and args:
        sub = command.get_command(click.Context(command), args[0])
        if sub is None:
            break
        path.append(args[0])
        command, args = sub, args[1:]
    return path, command, args


def option_names(command: click.Command) -> set[str]:
    names = {"--help", "-h"}
    for param in command.params:
        if isinstance(param, click.Option):
            names |= set(param.opts) | set(param.secondary_opts)
    return names


def problem(line: Line) -> str | None:
    """What is wrong with a command line of the docs, or None."""
    path, command, args = resolve(words(line.text))
    name = " ".join(path)
    # A placeholder, or prose naming an option ("the default of `promoter hub report --url`").
    synopsis = bool(_SYNOPSIS.search(line.text) or re.search(r"\s--?[a-z][-a-z]*$", line.text))
    if isinstance(command, click.Group):
        if args and not args[0].startswith("-") and not synopsis:
            return f"{name} has no command {args[0]!r}"
        return None
    known = option_names(command)
    for word in args:
        flag = word.split("=", 1)[0].strip("[](),")
        if re.fullmatch(r"--?[a-zA-Z][-a-zA-Z]*", flag) and flag not in known:
            return f"{name} has no option {flag}"
    shown = shown_required(command, line.text) if line.fenced and "[" in line.text else None
    if shown:
        return f"{name} shows {shown} as required (outside [...]); it is optional"
    if synopsis:  # placeholders: the options exist, the arguments cannot be parsed
        return None
    try:
        command.make_context(name, list(args))
    except click.MissingParameter:  # prose names a command without all it needs: fine
        return None
    except click.exceptions.Exit:  # --help, --version
        return None
    except click.UsageError as err:
        return err.format_message()
    return None


def shown_required(command: click.Command, text: str) -> str | None:
    """An option a usage line writes outside ``[...]`` and ``(... | ...)`` that is optional."""
    depth = 0
    for raw in text.split():
        flag = raw.strip("[]()|").split("=", 1)[0]
        if depth == 0 and not raw.startswith(("[", "(")) and re.fullmatch(r"--?[a-zA-Z][-a-zA-Z]*", flag):
            param = next((p for p in command.params if flag in getattr(p, "opts", ())), None)
            if param is not None and not param.required:
                return flag
        depth += raw.count("[") + raw.count("(") - raw.count("]") - raw.count(")")
    return None


LINES = command_lines()


def test_the_docs_have_commands_to_check() -> None:
    assert len(LINES) > 120  # a change to the extraction that found none would pass every case
    files = {line.where.split(":")[0] for line in LINES}
    assert files >= {"README.md", "docs/cli.md", "docs/getting-started.md", "docs/hub.md"}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("promoter promote --nope", "promoter promote has no option --nope"),
        ("promoter deploy --to qa", "promoter has no command 'deploy'"),
        ("promoter render --env dev --out x extra", "unexpected extra argument (extra)"),
        ("promoter promote --output xml", "'xml' is not one of 'text', 'json'"),
        ("promoter status [--control-plane DIR] [--bogus]", "promoter status has no option --bogus"),
        ("promoter promote --control-plane DIR [--to ENV]", "shows --control-plane as required"),
        ("promoter hub sync --platform-repo URL --environment E (--url URL | --database URL)", None),
        ("promoter hub keys add edge-1 --environment prod --cluster-type edge", None),
    ],
)
def test_the_check_finds_what_drifted(text: str, says: str | None) -> None:
    found = problem(Line("x.md:1", text))
    assert found == says if says is None or found is None else says in found, found


@pytest.mark.parametrize("line", LINES, ids=[f"{line.where} {line.text[:60]}" for line in LINES])
def test_every_command_in_the_docs_parses(line: Line) -> None:
    found = problem(line)
    assert found is None, f"{line.where}: {line.text!r}: {found}"
