"""The CEL rules (``x-kubernetes-validations``) of the Flux and Argo CD CRDs, evaluated as the API
server does, for the part of CEL they are written in: ``self`` and its fields, ``has()``,
string, number and boolean literals, ``==``, ``!=``, ``!``, ``&&``, ``||`` and parentheses.

A rule outside that part does not compile (``compile_rule`` raises ``Unsupported``) and is
listed by ``skipped``; every rule of the CRDs promoter ships compiles today. As in CEL, reading
a field that is not set is an error, and ``a || b`` / ``a && b`` are true / false when either
side decides them, even if the other is an error; a rule that ends in an error fails. Before it
evaluates a rule, the API server gives the object's fields their schema defaults.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")|(?P<num>-?\d+(?:\.\d+)?)"
    r"|(?P<op>==|!=|&&|\|\||[!().])|(?P<name>[A-Za-z_][A-Za-z0-9_]*))"
)


class Unsupported(ValueError):
    """A rule written in more of CEL than this evaluator reads."""


class Missing:
    """CEL's error value: a field that is not set was read."""


MISSING = Missing()
Expr = Callable[[Any], Any]


def tokens(rule: str) -> list[tuple[str, str]]:
    out, at = [], 0
    while at < len(rule.rstrip()):
        match = TOKEN.match(rule, at)
        if match is None or match.end() == at:
            raise Unsupported(f"cannot read {rule[at:]!r}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        at = match.end()
    return out


class _Parser:
    def __init__(self, rule: str) -> None:
        self.tokens = tokens(rule)
        self.at = 0

    def peek(self) -> str:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.at >= len(self.tokens) or (expected is not None and self.peek() != expected):
            raise Unsupported(f"expected {expected or 'more'} at token {self.at}")
        self.at += 1
        return self.tokens[self.at - 1]

    def binary(self, operator: str, operand: Callable[[], Expr], decided: bool) -> Expr:
        """``a || b`` (``decided`` True) or ``a && b`` (False): the right side is read only when
        the left does not decide, and an error on one side gives way to a decision on the other."""
        left = operand()
        while self.peek() == operator:
            self.take()
            left = _logical(left, operand(), decided)
        return left

    def disjunction(self) -> Expr:
        return self.binary("||", self.conjunction, True)

    def conjunction(self) -> Expr:
        return self.binary("&&", self.comparison, False)

    def comparison(self) -> Expr:
        left = self.unary()
        if self.peek() in ("==", "!="):
            negate = self.take()[1] == "!="
            right = self.unary()
            return lambda s: _equal(left(s), right(s), negate)
        return left

    def unary(self) -> Expr:
        if self.peek() == "!":
            self.take()
            inner = self.unary()
            return lambda s: _not(inner(s))
        return self.primary()

    def primary(self) -> Expr:
        kind, text = self.take()
        if text == "(":
            inner = self.disjunction()
            self.take(")")
            return inner
        if kind in ("str", "num") or text in ("true", "false", "null"):
            value = _literal(kind, text)
            return lambda _s: value
        if text == "has":
            self.take("(")
            path = self.path()
            self.take(")")
            return lambda s: _has(s, path)
        if text == "self":
            self.at -= 1
            path = self.path()
            return lambda s: _get(s, path)
        raise Unsupported(f"{text!r} is not supported")

    def path(self) -> tuple[str, ...]:
        if self.take()[1] != "self":
            raise Unsupported("a field path starts with self")
        names: list[str] = []
        while self.peek() == ".":
            self.take()
            kind, name = self.take()
            if kind != "name":
                raise Unsupported(f"{name!r} is not a field name")
            names.append(name)
        return tuple(names)


def _literal(kind: str, text: str) -> Any:
    if kind == "str":
        return re.sub(r"\\(.)", r"\1", text[1:-1])
    if kind == "num":
        return float(text) if "." in text else int(text)
    return {"true": True, "false": False, "null": None}[text]


def _get(value: Any, path: tuple[str, ...]) -> Any:
    for name in path:
        if not isinstance(value, dict) or name not in value:
            return MISSING
        value = value[name]
    return value


def _has(value: Any, path: tuple[str, ...]) -> Any:
    parent = _get(value, path[:-1])
    if parent is MISSING:
        return MISSING
    return isinstance(parent, dict) and path[-1] in parent


def _logical(left: Expr, right: Expr, decided: bool) -> Expr:
    def evaluate(s: Any) -> Any:
        a = left(s)
        if a is decided:
            return decided
        b = right(s)
        if b is decided:
            return decided
        return MISSING if a is MISSING or b is MISSING else not decided

    return evaluate


def _not(a: Any) -> Any:
    return MISSING if a is MISSING else not a


def _equal(a: Any, b: Any, negate: bool) -> Any:
    if a is MISSING or b is MISSING:
        return MISSING
    return (a == b) != negate


def compile_rule(rule: str) -> Expr:
    """``rule`` as a function of ``self`` giving True, False or ``MISSING`` (an error)."""
    parser = _Parser(rule)
    expr = parser.disjunction()
    if parser.at != len(parser.tokens):
        raise Unsupported(f"unexpected {parser.peek()!r}")
    return expr


def holds(expr: Expr, value: dict[str, Any], defaults: dict[str, Any]) -> bool:
    """Whether a compiled rule holds for ``value`` once its fields have their defaults."""
    if defaults and not defaults.keys() <= value.keys():
        value = {**defaults, **value}
    return expr(value) is True
