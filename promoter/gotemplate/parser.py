"""Items -> the parse tree of a Go template (``if``/``else if``/``with``/``range``/``define``/
``template``/``block``/``break``/``continue``, pipelines, variables), with Go's errors worded as
Go words them where it matters and always naming the line."""

from __future__ import annotations

import ast
from typing import Any

from promoter.errors import TemplateError
from promoter.gotemplate.lexer import Item, Token, fail, lex
from promoter.gotemplate.nodes import (
    Action,
    Branch,
    Call,
    Chain,
    Command,
    Dot,
    Field,
    Ident,
    Jump,
    Literal,
    Pipe,
    Text,
    Tree,
    Variable,
)

KEYWORDS = ("if", "else", "end", "range", "with", "define", "template", "block", "break", "continue")
MAX_NESTING = 100


def parse(source: str, name: str, functions: frozenset[str]) -> Tree:
    """The tree of ``source``; an unknown function is an error here, as in Go."""
    parser = _Parser(lex(source, name), name, functions)
    tree = Tree(name, (), source=source)
    parser.tree = tree
    body, stop = parser.block(set())
    if stop is not None:
        raise fail(name, stop.line, f"unexpected {{{{{stop.tokens[0].value if stop.tokens else ''}}}}}")
    tree.body = body
    return tree


class _Parser:
    def __init__(self, items: list[Item], name: str, functions: frozenset[str]) -> None:
        self.items = items
        self.pos = 0
        self.name = name
        self.functions = functions
        self.tree: Tree | None = None
        self.loops = 0
        self.depth = 0

    def error(self, line: int, message: str) -> TemplateError:
        return fail(self.name, line, message)

    def block(self, stops: set[str]) -> tuple[tuple[Any, ...], Item | None]:
        """Nodes up to one of the keywords ``stops`` (returned, unconsumed tokens and all)."""
        nodes: list[Any] = []
        while self.pos < len(self.items):
            item = self.items[self.pos]
            self.pos += 1
            if item.tokens is None:
                nodes.append(Text(item.text))
                continue
            first = item.tokens[0] if item.tokens else None
            keyword = first.value if first is not None and first.kind == "ident" else ""
            if keyword in stops:
                return tuple(nodes), item
            node = self.statement(item, keyword)
            if node is not None:
                nodes.append(node)
        if stops:
            raise self.error(self.items[-1].line if self.items else 1, "unexpected EOF")
        return tuple(nodes), None

    def statement(self, item: Item, keyword: str) -> Any:
        tokens = list(item.tokens or ())
        if not tokens:
            raise self.error(item.line, "missing value for command")
        if keyword in ("if", "with", "range"):
            return self.branch(keyword, tokens[1:], item.line)
        if keyword in ("break", "continue"):
            if not self.loops:
                raise self.error(item.line, f"{{{{{keyword}}}}} outside {{{{range}}}}")
            if len(tokens) > 1:
                raise self.error(item.line, f"unexpected {tokens[1].value} in {keyword}")
            return Jump(keyword, item.line)
        if keyword in ("define", "block"):
            return self.define(keyword, tokens[1:], item.line)
        if keyword == "template":
            return self.call(tokens[1:], item.line)
        if keyword in ("else", "end"):
            raise self.error(item.line, f"unexpected {{{{{keyword}}}}}")
        return Action(self.pipe(tokens, item.line, "command"))

    def branch(self, kind: str, tokens: list[Token], line: int) -> Branch:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(line, f"more than {MAX_NESTING} nested actions")
        pipe = self.pipe(tokens, line, kind, decl_max=2 if kind == "range" else 1)
        self.loops += kind == "range"
        body, stop = self.block({"else", "end"})
        self.loops -= kind == "range"
        assert stop is not None
        orelse = self.orelse(kind, stop)
        self.depth -= 1
        return Branch(kind, pipe, body, orelse)

    def orelse(self, kind: str, stop: Item) -> tuple[Any, ...]:
        """What runs when the ``kind`` branch does not, from the ``{{else}}`` or ``{{end}}``
        that closed its body: nothing, an ``{{else if}}`` (or ``{{else with}}``) branch, or the
        list up to ``{{end}}``."""
        assert stop.tokens is not None
        if stop.tokens[0].value != "else":
            _check_end(self.name, stop)
            return ()
        rest = list(stop.tokens[1:])
        if rest and rest[0].kind == "ident" and rest[0].value in ("if", "with") and kind != "range":
            if rest[0].value != kind:
                raise self.error(stop.line, f"{{{{else {rest[0].value}}}}} inside {{{{{kind}}}}}")
            return (self.branch(rest[0].value, rest[1:], stop.line),)
        if rest:
            raise self.error(stop.line, f"unexpected {rest[0].value!r} in else")
        orelse, end = self.block({"end"})
        assert end is not None
        _check_end(self.name, end)
        return orelse

    def define(self, keyword: str, tokens: list[Token], line: int) -> Call | None:
        name = self.template_name(keyword, tokens, line)
        pipe = self.pipe(tokens[1:], line, keyword) if keyword == "block" else None
        if keyword == "define" and len(tokens) > 1:
            raise self.error(line, "unexpected tokens after the define's name")
        loops, self.loops = self.loops, 0  # a define's body is outside any range
        body, _ = self.block({"end"})
        self.loops = loops
        assert self.tree is not None
        if keyword == "define" and self.tree.defines.get(name):
            raise self.error(line, f"template: multiple definition of template {name!r}")
        self.tree.defines[name] = body
        return Call(name, pipe, line) if keyword == "block" else None

    def call(self, tokens: list[Token], line: int) -> Call:
        name = self.template_name("template", tokens, line)
        pipe = self.pipe(tokens[1:], line, "template") if len(tokens) > 1 else None
        return Call(name, pipe, line)

    def template_name(self, keyword: str, tokens: list[Token], line: int) -> str:
        """The quoted name that ``define``, ``block`` and ``template`` start with."""
        if not tokens or tokens[0].kind not in ("string", "raw"):
            raise self.error(line, f"{keyword} needs a template name in quotes")
        return _string(tokens[0])

    def pipe(self, tokens: list[Token], line: int, context: str, decl_max: int = 1) -> Pipe:
        decl, assign, rest = _declaration(tokens)
        if len(decl) > decl_max:
            raise self.error(line, f"too many declarations in {context}")
        cmds: list[Command] = []
        current: list[Any] = []
        stream = _Stream(rest)
        while not stream.done():
            token = stream.next()
            if token.kind == "pipe":
                if not current:
                    raise self.error(line, "missing command before '|'")
                cmds.append(_command(current))
                current = []
                continue
            current.append(self.operand(token, stream, line))
        if current:
            cmds.append(_command(current))
        elif cmds:
            raise self.error(line, "missing command after '|'")
        if not cmds:
            raise self.error(line, f"missing value for {context}")
        return Pipe(decl, assign, tuple(cmds), line)

    def operand(self, token: Token, stream: _Stream, line: int) -> Any:
        kind = token.kind
        if kind == "lparen":
            inner = stream.until_close(lambda: self.error(line, "unclosed left paren"))
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise self.error(line, f"more than {MAX_NESTING} nested parentheses")
            node = self.pipe(inner, line, "parenthesized pipeline")
            self.depth -= 1
            names = stream.chain()
            text = "(" + _pipe_text(node) + ")" + "".join("." + n for n in names)
            return Chain(node, names, token.pos, text)
        if kind == "field":
            names = tuple(token.value[1:].split("."))
            return Field(names, _chained_pos(token, names), token.value)
        if kind == "variable":
            name, *rest = token.value.split(".")
            return Variable(name, tuple(rest), _chained_pos(token, (name[1:], *rest)), token.value)
        if kind == "dot":
            return Dot(token.pos)
        if kind in ("string", "raw", "char", "number"):
            return Literal(self.literal(token, line), token.pos, token.value)
        if kind == "ident":
            return self.ident(token, line)
        raise self.error(line, f"unexpected {token.value!r} in operand")

    def ident(self, token: Token, line: int) -> Any:
        value = token.value
        if value in ("true", "false"):
            return Literal(value == "true", token.pos, value)
        if value == "nil":
            return Literal(None, token.pos, value)
        if value in KEYWORDS:
            raise self.error(line, f"unexpected {value!r} in operand")
        if value not in self.functions:
            raise self.error(line, f'function "{value}" not defined')
        return Ident(value, token.pos, value)

    def literal(self, token: Token, line: int) -> Any:
        try:
            if token.kind in ("string", "raw"):
                return _string(token)
            if token.kind == "char":
                text = ast.literal_eval(token.value)
                if not isinstance(text, str) or len(text) != 1:
                    raise ValueError(token.value)
                return ord(text)
            return _number(token.value)
        except (ValueError, SyntaxError) as err:
            raise self.error(line, f"bad {token.kind} syntax: {token.value}") from err


class _Stream:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.pos = 0

    def done(self) -> bool:
        return self.pos >= len(self.tokens)

    def next(self) -> Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def until_close(self, unclosed: Any) -> list[Token]:
        depth, start = 1, self.pos
        while not self.done():
            token = self.next()
            depth += {"lparen": 1, "rparen": -1}.get(token.kind, 0)
            if depth == 0:
                return self.tokens[start : self.pos - 1]
        raise unclosed()

    def chain(self) -> tuple[str, ...]:
        """Fields right after a ``)`` (no space between): ``(pipe).A.B``."""
        if not self.done() and self.tokens[self.pos].kind == "field" and not self.tokens[self.pos].spaced:
            return tuple(self.next().value[1:].split("."))
        return ()


def _check_end(name: str, end: Item) -> None:
    """``{{end}}`` takes nothing after it."""
    assert end.tokens is not None
    if len(end.tokens) > 1:
        raise fail(name, end.line, "unexpected tokens in end")


def _command(args: list[Any]) -> Command:
    return Command(tuple(args), args[0].pos, " ".join(a.text for a in args))


def _pipe_text(pipe: Pipe) -> str:
    """Go's ``PipeNode.String()``."""
    decl = ", ".join(pipe.decl) + (" = " if pipe.assign else " := ") if pipe.decl else ""
    return decl + " | ".join(c.text for c in pipe.cmds)


def _chained_pos(token: Token, names: tuple[str, ...]) -> int:
    """Go's lexer cuts ``.A.B`` (or ``$x.A``) into one item per part, and its parser places the
    whole at the second part: the position errors name."""
    if len(names) < 2:
        return token.pos
    return token.pos + len(names[0]) + 1


def _declaration(tokens: list[Token]) -> tuple[tuple[str, ...], bool, list[Token]]:
    """``$x :=`` / ``$i, $v :=`` / ``$x =`` at the start of a pipeline."""
    names: list[str] = []
    i = 0
    while i < len(tokens) and tokens[i].kind == "variable" and "." not in tokens[i].value:
        names.append(tokens[i].value)
        follow = tokens[i + 1].kind if i + 1 < len(tokens) else ""
        if follow in ("declare", "assign"):
            return tuple(names), follow == "assign", tokens[i + 2 :]
        if follow != "comma":
            break
        i += 2
    return (), False, tokens


def _string(token: Token) -> str:
    if token.kind == "raw":
        return token.value[1:-1]
    value = ast.literal_eval(token.value)
    if not isinstance(value, str):
        raise ValueError(token.value)
    return value


def _number(text: str) -> int | float:
    clean = text.replace("_", "")
    lowered = clean.lower().lstrip("+-")
    if lowered.startswith(("0x", "0b", "0o")):
        return int(clean, 0)
    if any(c in lowered for c in ".e"):
        return float(clean)
    if len(lowered) > 1 and lowered.startswith("0"):
        return int(clean, 8)
    return int(clean)
