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
        text = source[pos:] if start < 0 else source[pos:start]
        trim_left = (
            start >= 0 and source[start + 2 : start + 3] == "-" and source[start + 3 : start + 4] in _SPACE
        )
        trim_left = trim_left and source[start + 3 : start + 4] != ""
        if trim_next:
            text = text.lstrip(_SPACE)
        if trim_left:
            text = text.rstrip(_SPACE)
        if text:
            items.append(Item(text, None, line))
        if start < 0:
            break
        line += source.count("\n", pos, start)
        inner = start + (3 if trim_left else 2)
        tokens, end, trim_next = _action(source, inner, name, line)
        if tokens is not None:
            items.append(Item("", tokens, line))
        line += source.count("\n", start, end)
        pos = end
    return items


def _action(source: str, pos: int, name: str, line: int) -> tuple[tuple[Token, ...] | None, int, bool]:
    """The tokens of the action whose text starts at ``pos`` (None for a comment), where the
    text after it starts, and whether that text is trimmed."""
    rest = source[pos:].lstrip(_SPACE)
    if rest.startswith("/*"):
        return _comment(source, pos, name, line)
    tokens: list[Token] = []
    spaced, origin = True, pos
    while True:
        if pos >= len(source):
            raise fail(name, line, "unclosed action")
        if source.startswith(RIGHT, pos):
            return tuple(tokens), pos + 2, False
        if source.startswith("-" + RIGHT, pos) and pos > origin and source[pos - 1] in _SPACE:
            return tuple(tokens), pos + 3, True
        match = _TOKEN.match(source, pos)
        if match is None or match.end() == pos:
            where = line + source.count("\n", origin, pos)
            raise fail(name, where, f"unexpected {source[pos]!r} in action")
        kind = match.lastgroup or ""
        if kind == "space":
            spaced = True
        else:
            tokens.append(Token(kind, match.group(), spaced, pos))
            spaced = False
        pos = match.end()


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
