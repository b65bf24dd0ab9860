"""Conditions on a measurement, such as ``result[0] >= 0.95``: parsed and evaluated without eval.

The language is the part of Argo Rollouts' analysis conditions (the ``expr`` language) that
conditions on a number or a vector actually use:

- the value ``result`` (a number, a list of numbers, or a string), numbers (``0.95``, ``1e3``),
  strings (``'ok'``), ``true``, ``false``;
- indexing ``result[0]``; arithmetic ``+ - * / %``; comparisons ``== != < <= > >=``;
- ``&&``/``and``, ``||``/``or``, ``!``/``not``, parentheses;
- functions ``len``, ``abs``, ``min``, ``max``, ``sum``, ``isNaN``, ``isInf``, and
  ``all(list, {# >= 0.9})`` / ``any(list, {...})`` where ``#`` is each element.

A bad expression is an ``ExpressionError`` when parsed (at load time); a type error or an index
out of range while evaluating is an ``EvaluationError`` (a measurement error, not a crash).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
    r"|(?P<str>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>&&|\|\||==|!=|<=|>=|[<>!+\-*/%()\[\],{}#]))"
)
_WORDS = {"and": "&&", "or": "||", "not": "!"}
_COMPARE = ("==", "!=", "<", "<=", ">", ">=")
_FUNCTIONS = {"len": 1, "abs": 1, "min": 1, "max": 1, "sum": 1, "isNaN": 1, "isInf": 1, "all": 2, "any": 2}


class ExpressionError(ValueError):
    """The text is not a valid condition."""


class EvaluationError(Exception):
    """The condition cannot be evaluated on this value (wrong type, index out of range)."""


@dataclass(frozen=True)
class Node:
    kind: str  # num str bool name elem index unary binary call closure
    value: Any = None
    args: tuple[Node, ...] = ()


@dataclass(frozen=True)
class Token:
    kind: str  # num str name op end
    text: str
    column: int


def _tokens(text: str) -> list[Token]:
    out: list[Token] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            col = len(text) - len(text[pos:].lstrip()) + 1
            raise ExpressionError(f"at column {col}: unexpected {text[col - 1]!r}")
        kind = match.lastgroup or "op"
        value = match.group(kind)
        column = match.start(kind) + 1
        if kind == "name" and value in _WORDS:
            kind, value = "op", _WORDS[value]
        out.append(Token(kind, value, column))
        pos = match.end()
    out.append(Token("end", "", len(text) + 1))
    return out


class _Parser:
    """Recursive descent, lowest precedence first: || && ! comparison + - * / % unary postfix."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.i = 0
        self.closure_depth = 0

    def peek(self) -> Token:
        return self.tokens[self.i]

    def take(self, text: str | None = None) -> Token:
        token = self.tokens[self.i]
        if text is not None and token.text != text:
            found = "the end" if token.kind == "end" else repr(token.text)
            raise ExpressionError(f"at column {token.column}: expected {text!r}, found {found}")
        self.i += 1
        return token

    def at(self, *texts: str) -> bool:
        token = self.peek()
        return token.kind == "op" and token.text in texts

    def parse(self) -> Node:
        node = self.or_()
        token = self.peek()
        if token.kind != "end":
            raise ExpressionError(f"at column {token.column}: unexpected {token.text!r}")
        return node

    def or_(self) -> Node:
        node = self.and_()
        while self.at("||"):
            self.take()
            node = Node("binary", "||", (node, self.and_()))
        return node

    def and_(self) -> Node:
        node = self.not_()
        while self.at("&&"):
            self.take()
            node = Node("binary", "&&", (node, self.not_()))
        return node

    def not_(self) -> Node:
        if self.at("!"):
            self.take()
            return Node("unary", "!", (self.not_(),))
        return self.compare()

    def compare(self) -> Node:
        node = self.additive()
        if self.at(*_COMPARE):
            op = self.take().text
            node = Node("binary", op, (node, self.additive()))
            if self.at(*_COMPARE):
                token = self.peek()
                raise ExpressionError(f"at column {token.column}: comparisons do not chain; use &&")
        return node

    def additive(self) -> Node:
        node = self.term()
        while self.at("+", "-"):
            op = self.take().text
            node = Node("binary", op, (node, self.term()))
        return node

    def term(self) -> Node:
        node = self.unary()
        while self.at("*", "/", "%"):
            op = self.take().text
            node = Node("binary", op, (node, self.unary()))
        return node

    def unary(self) -> Node:
        if self.at("-", "+"):
            op = self.take().text
            return Node("unary", op, (self.unary(),))
        node = self.primary()
        while self.at("["):
            self.take()
            index = self.or_()
            self.take("]")
            node = Node("index", None, (node, index))
        return node

    def primary(self) -> Node:
        token = self.take()
        if token.kind == "num":
            return Node("num", float(token.text))
        if token.kind == "str":
            return Node("str", _unquote(token.text))
        if token.kind == "name":
            return self.name(token)
        if token.text == "(":
            node = self.or_()
            self.take(")")
            return node
        if token.text == "#":
            if not self.closure_depth:
                raise ExpressionError(f"at column {token.column}: '#' is only valid inside {{...}}")
            return Node("elem")
        found = "the end" if token.kind == "end" else repr(token.text)
        raise ExpressionError(f"at column {token.column}: unexpected {found}")

    def name(self, token: Token) -> Node:
        if token.text in ("true", "false"):
            return Node("bool", token.text == "true")
        if token.text == "result":
            return Node("name", "result")
        if token.text not in _FUNCTIONS or not self.at("("):
            known = "result, true, false, " + ", ".join(_FUNCTIONS)
            raise ExpressionError(f"at column {token.column}: unknown name {token.text!r} (known: {known})")
        self.take("(")
        args = [self.or_()]
        if _FUNCTIONS[token.text] == 2:
            self.take(",")
            args.append(self.closure())
        self.take(")")
        return Node("call", token.text, tuple(args))

    def closure(self) -> Node:
        self.take("{")
        self.closure_depth += 1
        body = self.or_()
        self.closure_depth -= 1
        self.take("}")
        return Node("closure", None, (body,))


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


@dataclass(frozen=True)
class Expression:
    """A parsed condition; ``evaluate(result)`` gives True or False."""

    text: str
    root: Node

    def evaluate(self, result: Any) -> bool:
        value = _eval(self.root, result, None)
        if not isinstance(value, bool):
            raise EvaluationError(f"the condition gave {show(value)}, not true or false")
        return value


def parse(text: str) -> Expression:
    """Parse a condition; ExpressionError names the column of the first problem."""
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("a condition must be a non-empty string")
    return Expression(text, _Parser(text).parse())


def _eval(node: Node, result: Any, elem: Any) -> Any:
    kind = node.kind
    if kind in ("num", "str", "bool"):
        return node.value
    if kind == "name":
        return result
    if kind == "elem":
        return elem
    if kind == "index":
        return _index(_eval(node.args[0], result, elem), _eval(node.args[1], result, elem))
    if kind == "unary":
        value = _eval(node.args[0], result, elem)
        if node.value == "!":
            return not _boolean(value, "!")
        number = _number(value, node.value)
        return -number if node.value == "-" else number
    if kind == "call":
        return _call(node, result, elem)
    return _binary(node, result, elem)


def _binary(node: Node, result: Any, elem: Any) -> Any:
    op = node.value
    left = _eval(node.args[0], result, elem)
    if op == "&&":
        return _boolean(left, op) and _boolean(_eval(node.args[1], result, elem), op)
    if op == "||":
        return _boolean(left, op) or _boolean(_eval(node.args[1], result, elem), op)
    right = _eval(node.args[1], result, elem)
    if op in ("==", "!="):
        return _equal(left, right) == (op == "==")
    if op in _ORDER:
        return _compare(op, left, right)
    if op == "+" and isinstance(left, str) and isinstance(right, str):
        return left + right
    return _arith(op, _number(left, op), _number(right, op))


def _equal(left: Any, right: Any) -> bool:
    """``==``: true == 1 is false here (Python's bool is an int, the language's is not)."""
    return isinstance(left, bool) == isinstance(right, bool) and bool(left == right)


def _compare(op: str, left: Any, right: Any) -> bool:
    """An order: of two strings, as strings; else of two numbers."""
    if not (isinstance(left, str) and isinstance(right, str)):
        left, right = _number(left, op), _number(right, op)
    return bool(_ORDER[op](left, right))


_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _arith(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:  # IEEE 754, as PromQL and Go do: no exception on a zero rate
        if op == "%" or a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b if op == "/" else math.fmod(a, b)


def _quantified(name: str, items: list[Any], body: Node, result: Any) -> bool:
    """``all`` or ``any`` of ``body`` over ``items`` (each the ``elem`` of its turn), lazily."""
    checks = (_boolean(_eval(body, result, item), name) for item in items)
    return all(checks) if name == "all" else any(checks)


def _aggregate(name: str, numbers: list[float]) -> float:
    """``min``, ``max`` or ``sum`` of ``numbers`` (the sum of none is 0, the others need one)."""
    if name == "sum":
        return math.fsum(numbers)
    if not numbers:
        raise EvaluationError(f"{name}() of an empty list")
    return min(numbers) if name == "min" else max(numbers)


def _call(node: Node, result: Any, elem: Any) -> Any:
    name = node.value
    arg = _eval(node.args[0], result, elem)
    if name in ("all", "any"):
        return _quantified(name, _list(arg, name), node.args[1].args[0], result)
    if name == "len":
        if isinstance(arg, list | str):
            return float(len(arg))
        raise EvaluationError(f"len() needs a list or a string, got {show(arg)}")
    if name in ("min", "max", "sum"):
        return _aggregate(name, [_number(v, name) for v in _list(arg, name)])
    number = _number(arg, name)
    if name == "abs":
        return abs(number)
    return math.isnan(number) if name == "isNaN" else math.isinf(number)


def _index(value: Any, index: Any) -> Any:
    if not isinstance(value, list | str):
        raise EvaluationError(f"cannot index {show(value)}")
    number = _number(index, "[]")
    if number != int(number):
        raise EvaluationError(f"index {show(number)} is not a whole number")
    i = int(number)
    if not 0 <= i < len(value):
        what = "the result is empty" if not value else f"it has {len(value)}"
        raise EvaluationError(f"index {i} is out of range: {what}")
    return value[i]


def _number(value: Any, op: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise EvaluationError(f"{op} needs a number, got {show(value)}")
    return float(value)


def _boolean(value: Any, op: str) -> bool:
    if not isinstance(value, bool):
        raise EvaluationError(f"{op} needs true or false, got {show(value)}")
    return value


def _list(value: Any, op: str) -> list[Any]:
    if not isinstance(value, list):
        raise EvaluationError(f"{op}() needs a list, got {show(value)}")
    return value


def show(value: Any) -> str:
    """A value as gate messages show it: ``[0.99, 1]``, ``NaN``, ``'text'``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_number(value)
    if isinstance(value, list):
        shown = ", ".join(show(v) for v in value[:5])
        return f"[{shown}{', ...' if len(value) > 5 else ''}]"
    return repr(value)


def format_number(value: float) -> str:
    """``1.0`` -> ``1``, ``0.123456789`` -> ``0.123457``; NaN and infinities as Prometheus spells them."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return f"{value:.6g}"
