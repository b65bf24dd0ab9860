"""YAML syntax errors in words: what libyaml found, said as what to fix in the file.

libyaml reports a tab as "found character that cannot start any token" and a line indented too
far as "mapping values are not allowed in this context"; users read neither. ``describe`` turns
the parser's problem, its context and the character at the spot into one sentence.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml


@dataclass(frozen=True)
class Spot:
    """Where a syntax error is (1-based) and what it means."""

    line: int | None
    column: int | None
    message: str


def _char_at(text: str, line: int, column: int) -> str:
    lines = text.splitlines()
    if 0 <= line < len(lines) and 0 <= column < len(lines[line]):
        return lines[line][column]
    return ""


def _context_line(err: yaml.MarkedYAMLError) -> str:
    mark = err.context_mark
    return f" (opened at line {mark.line + 1})" if mark is not None else ""


def _words(err: yaml.MarkedYAMLError, char: str) -> str:
    problem = err.problem or str(err)
    return (
        _character_words(problem, char)
        or _indentation_words(err, problem)
        or _unclosed_words(err, problem, char)
        or _other_words(problem)
    )


def _character_words(problem: str, char: str) -> str | None:
    """A character that cannot be where it is: a tab, a value's first character, a bracket
    that closes nothing."""
    if char == "\t" or "tab character" in problem:
        return "a tab character: YAML indents with spaces only; replace the tab with spaces"
    if problem == "found character that cannot start any token":
        return f"{char!r} cannot start a value; put the value in quotes"
    if char in ("]", "}") and problem.startswith("did not find expected"):
        return f"{char!r} closes nothing: a bracket too many"
    return None


def _indentation_words(err: yaml.MarkedYAMLError, problem: str) -> str | None:
    """A line that does not line up with those above it (or a key without its ':')."""
    if problem.startswith("mapping values are not allowed"):
        return (
            "unexpected ':' here: this line is indented further than the key above it, "
            "or a value holds ': ' and needs quotes"
        )
    if problem == "did not find expected key" or problem.startswith("expected <block end>"):
        return "wrong indentation: this line does not line up with the keys or items above it"
    if problem == "did not find expected '-' indicator":
        return "wrong indentation: this list item does not line up with the items above it"
    if problem == "could not find expected ':'":
        return f"a key without ':' before this line{_context_line(err)}, or a line indented wrongly"
    return None


def _unclosed_words(err: yaml.MarkedYAMLError, problem: str, char: str) -> str | None:
    """A bracket or quote never closed."""
    context = err.context or ""
    if problem == "did not find expected node content" and char == "":
        return "the file ends where a value was expected: a '[' or '{' is never closed"
    if "quoted scalar" in context:
        return f"a quoted string is never closed{_context_line(err)}"
    if context.startswith("while parsing a flow"):
        return f"a '[' or '{{' list or mapping is never closed{_context_line(err)}"
    return None


def _other_words(problem: str) -> str:
    if problem == "found undefined alias":
        return "'*' starts an alias to an anchor that is not defined; put the value in quotes"
    return f"invalid YAML: {problem}"


def describe(err: yaml.MarkedYAMLError, text: str) -> Spot:
    """What ``err`` (raised on ``text``) means, and where."""
    mark = err.problem_mark or err.context_mark
    if mark is None:
        return Spot(None, None, _words(err, ""))
    return Spot(mark.line + 1, mark.column + 1, _words(err, _char_at(text, mark.line, mark.column)))
