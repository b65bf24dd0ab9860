"""Go ``text/template`` source -> items: text runs and actions (their tokens), trim markers
applied, comments dropped. The grammar is Go's (pkg.go.dev/text/template): ``{{`` and ``}}``,
``{{- `` and `` -}}`` trim the white space next to them, ``{{/* ... */}}`` is a comment."""

from __future__ import annotations

import re
from dataclasses import dataclass

from promoter.errors import TemplateError

LEFT, RIGHT = "{{", "}}"
_SPACE = " \t\r\n"

# One token of an action, tried in order. Fields come before numbers (".5" is a number, ".x" a
# field), and raw strings, strings and characters are matched whole, so "}}" inside one is text.
_TOKENS = [
    ("space", r"[ \t\r\n]+"),
    ("string", r'"(?:[^"\\\n]|\\.)*"'),
    ("raw", r"`[^`]*`"),
    ("char", r"'(?:[^'\\\n]|\\.)+'"),
    ("declare", r":="),
    ("assign", r"="),
    ("pipe", r"\|"),
    ("lparen", r"\("),
    ("rparen", r"\)"),
    ("comma", r","),
    ("field", r"(?:\.[A-Za-z_][A-Za-z0-9_]*)+"),
    ("variable", r"\$[A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"),
    (
        "number",
        r"[+-]?(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+"
        r"|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d+)?)",
    ),
    ("ident", r"[A-Za-z_][A-Za-z0-9_]*"),
    ("dot", r"\."),
]
_TOKEN = re.compile("|".join(f"(?P<{name}>{rx})" for name, rx in _TOKENS))


@dataclass(frozen=True)
class Token:
    kind: str
    value: str
    spaced: bool  # white space (or the action's start) came right before it
    pos: int = 0  # its offset in the source


@dataclass(frozen=True)
class Item:
    """A text run (``tokens`` is None) or an action, with the line it starts on."""

    text: str
    tokens: tuple[Token, ...] | None
    line: int


GO_NAME = "template"  # the name Kalypso's scheduler gives every template (template.New)


def fail(name: str, line: int, message: str) -> TemplateError:
    """A parse error as Go words it (``template: template:1: unclosed action``); ``name`` is the
    file the error names."""
    return TemplateError(f"template: {GO_NAME}:{line}: {message}", file=name, line=line)


def lex(source: str, name: str) -> list[Item]:
    """The items of ``source`` (``name`` is the file the errors name)."""
    items: list[Item] = []
    pos, line, trim_next = 0, 1, False
    while pos <= len(source):
        start = source.find(LEFT, pos)
        trim_left = _trims_left(source, start)
        text = _text_run(source[pos:] if start < 0 else source[pos:start], trim_next, trim_left)
        if text:
            items.append(Item(text, None, line))
        if start < 0:
            break
        line += source.count("\n", pos, start)
        tokens, end, trim_next = _action(source, start + (3 if trim_left else 2), name, line)
        if tokens is not None:
            items.append(Item("", tokens, line))
        line += source.count("\n", start, end)
        pos = end
    return items


def _trims_left(source: str, start: int) -> bool:
    """The action at ``start`` opens with ``{{- `` (a dash, then white space)."""
    after = source[start + 3 : start + 4]
    return start >= 0 and source[start + 2 : start + 3] == "-" and after != "" and after in _SPACE


def _text_run(text: str, trim_start: bool, trim_end: bool) -> str:
    """A text run with the white space the actions around it trim removed."""
    if trim_start:
        text = text.lstrip(_SPACE)
    return text.rstrip(_SPACE) if trim_end else text


def _action(source: str, pos: int, name: str, line: int) -> tuple[tuple[Token, ...] | None, int, bool]:
    """The tokens of the action whose text starts at ``pos`` (None for a comment), where the
    text after it starts, and whether that text is trimmed."""
    if source[pos:].lstrip(_SPACE).startswith("/*"):
        return _comment(source, pos, name, line)
    tokens: list[Token] = []
    spaced, origin = True, pos
    while True:
        if pos >= len(source):
            raise fail(name, line, "unclosed action")
        closing = _closing(source, pos, origin)
        if closing is not None:
            return tuple(tokens), *closing
        match = _token_at(source, pos, origin, name, line)
        kind = match.lastgroup or ""
        if kind != "space":
            tokens.append(Token(kind, match.group(), spaced, pos))
        spaced = kind == "space"
        pos = match.end()


def _closing(source: str, pos: int, origin: int) -> tuple[int, bool] | None:
    """When the action whose text starts at ``origin`` closes at ``pos``: where the text after it
    starts and whether ``-}}`` trims it."""
    if source.startswith(RIGHT, pos):
        return pos + 2, False
    if source.startswith("-" + RIGHT, pos) and pos > origin and source[pos - 1] in _SPACE:
        return pos + 3, True
    return None


def _token_at(source: str, pos: int, origin: int, name: str, line: int) -> re.Match[str]:
    """The token at ``pos`` (white space is one), an error naming its line when there is none."""
    match = _TOKEN.match(source, pos)
    if match is None or match.end() == pos:
        where = line + source.count("\n", origin, pos)
        raise fail(name, where, f"unexpected {source[pos]!r} in action")
    return match


def _comment(source: str, pos: int, name: str, line: int) -> tuple[None, int, bool]:
    close = source.find("*/", pos)
    if close < 0:
        raise fail(name, line, "unclosed comment")
    after = close + 2
    if source.startswith(RIGHT, after):
        return None, after + 2, False
    if source.startswith(" -" + RIGHT, after):
        return None, after + 4, True
    raise fail(name, line, "comment ends before closing delimiter")
