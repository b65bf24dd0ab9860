"""Running a parsed Go template, sandboxed: bounded output, steps, time and template-call depth.

Nothing here reaches a file, the network or the process environment: the only functions are
those of ``functions.FUNCTIONS`` (no ``env``, ``expandenv``, ``readFile`` or the like)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from promoter.errors import TemplateError
from promoter.gotemplate.functions import FUNCTIONS, LAZY, Function
from promoter.gotemplate.lexer import GO_NAME
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
from promoter.gotemplate.sprig import SIGNATURES
from promoter.gotemplate.values import NO_VALUE, ExecError, Limits, field, go_type, plain_arg, sprint, truth

MAX_CALL_DEPTH = 100
_CHECK_EVERY = 256  # steps between two looks at the clock
# what a function's failure may raise: an error of the template, not of the promoter
_CALL_ERRORS = (ExecError, TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, OverflowError)


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


@dataclass
class _Vars:
    names: list[tuple[str, Any]]

    def mark(self) -> int:
        return len(self.names)

    def pop(self, mark: int) -> None:
        del self.names[mark:]

    def push(self, name: str, value: Any) -> None:
        self.names.append((name, value))

    def set(self, name: str, value: Any) -> None:
        for i in range(len(self.names) - 1, -1, -1):
            if self.names[i][0] == name:
                self.names[i] = (name, value)
                return
        raise ExecError(f"undefined variable: {name}")

    def get(self, name: str) -> Any:
        for key, value in reversed(self.names):
            if key == name:
                return value
        raise ExecError(f"undefined variable: {name}")


def go_location(source: str, pos: int) -> tuple[int, int]:
    """Go's ``Tree.ErrorContext``: the line of ``pos`` and its byte offset in that line."""
    head = source[:pos].encode("utf-8")
    newline = head.rfind(b"\n")
    return head.count(b"\n") + 1, len(head) if newline < 0 else len(head) - newline - 1


class Executor:
    """One run of one template over one value of data."""

    def __init__(
        self,
        tree: Tree,
        limits: Limits,
        escape: Callable[[str], str] | None = None,
        functions: dict[str, Function] | None = None,
    ) -> None:
        self.tree = tree
        self.limits = limits
        self.escape = escape
        self.functions = functions or FUNCTIONS
        self.out: list[str] = []
        self.size = 0
        self.steps = 0
        self.depth = 0
        self.deadline = time.monotonic() + limits.seconds
        self.line = 1
        self.at: Any = None  # the node evaluated last, which Go's errors name

    def run(self, data: Any) -> str:
        variables = _Vars([("$", data)])
        try:
            self.walk(self.tree.body, data, variables)
        except ExecError as err:
            raise self.error(str(err)) from err
        except RecursionError as err:
            raise self.error("nested too deeply") from err
        return "".join(self.out)

    def error(self, message: str) -> TemplateError:
        """Go's ``template: NAME:LINE:COL: executing "NAME" at <NODE>: MESSAGE``."""
        if self.at is None:
            return TemplateError(
                f'template: {GO_NAME}:{self.line}: executing "{GO_NAME}": {message}',
                file=self.tree.name,
                line=self.line,
            )
        line, column = go_location(self.tree.source, self.at.pos)
        text = f'template: {GO_NAME}:{line}:{column}: executing "{GO_NAME}" at <{self.at.text}>: {message}'
        return TemplateError(text, file=self.tree.name, line=line)

    # ---- statements

    def step(self) -> None:
        self.steps += 1
        if self.steps > self.limits.steps:
            raise ExecError(f"more than {self.limits.steps} steps: the template does too much")
        if self.steps % _CHECK_EVERY == 0 and time.monotonic() > self.deadline:
            raise ExecError(f"took longer than {self.limits.seconds:g}s")

    def write(self, text: str) -> None:
        self.size += len(text)
        if self.size > self.limits.output:
            raise ExecError(f"output over the limit of {self.limits.output} characters")
        self.out.append(text)

    def walk(self, nodes: tuple[Any, ...], dot: Any, variables: _Vars) -> None:
        for node in nodes:
            self.step()
            self._STATEMENTS[type(node)](self, node, dot, variables)

    def text(self, node: Text, dot: Any, variables: _Vars) -> None:
        self.write(node.text)

    def action(self, node: Action, dot: Any, variables: _Vars) -> None:
        """``{{pipeline}}`` writes its value; ``{{$x := pipeline}}`` only declares."""
        self.line = node.pipe.line
        mark = variables.mark()
        value = self.pipe(node.pipe, dot, variables)
        if node.pipe.decl:
            return
        variables.pop(mark)
        text = "<no value>" if value is None else sprint(value)  # Go prints nil so
        self.write(self.escape(text) if self.escape else text)

    def jump(self, node: Jump, dot: Any, variables: _Vars) -> None:
        raise _Break() if node.kind == "break" else _Continue()

    def branch(self, node: Branch, dot: Any, variables: _Vars) -> None:
        self.line = node.pipe.line
        mark = variables.mark()
        try:
            if node.kind == "range":
                self.range(node, dot, variables)
                return
            value = self.pipe(node.pipe, dot, variables)
            if truth(value):
                self.walk(node.body, value if node.kind == "with" else dot, variables)
            else:
                self.walk(node.orelse, dot, variables)
        finally:
            variables.pop(mark)

    def range(self, node: Branch, dot: Any, variables: _Vars) -> None:
        pipe = node.pipe
        value = self.pipe(Pipe((), False, pipe.cmds, pipe.line), dot, variables)
        pairs = _iterate(value, self.limits.steps)
        if not pairs:
            self.walk(node.orelse, dot, variables)
            return
        for key, item in pairs:
            self.step()
            mark = variables.mark()
            if len(pipe.decl) == 1:
                variables.push(pipe.decl[0], item)
            elif len(pipe.decl) == 2:
                variables.push(pipe.decl[0], key)
                variables.push(pipe.decl[1], item)
            try:
                self.walk(node.body, item, variables)
            except _Break:
                break
            except _Continue:
                continue
            finally:
                variables.pop(mark)

    def call(self, node: Call, dot: Any, variables: _Vars) -> None:
        self.line = node.line
        body = self.tree.defines.get(node.name)
        if body is None:
            raise ExecError(f'no such template "{node.name}"')
        value = self.pipe(node.pipe, dot, variables) if node.pipe is not None else None
        self.depth += 1
        if self.depth > MAX_CALL_DEPTH:
            raise ExecError(f"template calls nested more than {MAX_CALL_DEPTH} deep")
        self.walk(body, value, _Vars([("$", value)]))
        self.depth -= 1

    # each statement kind and the method that runs it
    _STATEMENTS: ClassVar[dict[type, Callable[[Executor, Any, Any, _Vars], None]]] = {
        Text: text,
        Action: action,
        Branch: branch,
        Call: call,
        Jump: jump,
    }

    # ---- pipelines

    def pipe(self, pipe: Pipe, dot: Any, variables: _Vars) -> Any:
        value: Any = None
        for i, cmd in enumerate(pipe.cmds):
            value = self.command(cmd, dot, variables, (value,) if i else ())
        for name in pipe.decl:
            if pipe.assign:
                variables.set(name, value)
            else:
                variables.push(name, value)
        return value

    def command(self, cmd: Command, dot: Any, variables: _Vars, final: tuple[Any, ...]) -> Any:
        self.step()
        first = cmd.args[0]
        if isinstance(first, Ident):
            return self.function(first, cmd, dot, variables, final)
        self.at = first
        if len(cmd.args) > 1 or final:
            what = (
                "a field"
                if isinstance(first, Field | Chain | Variable)
                else sprint(self.arg(first, dot, variables))
            )
            raise ExecError(f"can't give argument to non-function {what}")
        return self.arg(first, dot, variables)

    def function(self, ident: Ident, cmd: Command, dot: Any, variables: _Vars, final: tuple[Any, ...]) -> Any:
        name, args = ident.name, cmd.args[1:] if cmd.args and cmd.args[0] is ident else ()
        self.at = ident
        if name in LAZY:
            thunks: list[Callable[[], Any]] = [partial(self.arg, a, dot, variables) for a in args]
            thunks += [partial(_same, v) for v in final]
            return LAZY[name](thunks)
        values = self.arguments(name, args, dot, variables, final)
        return self.invoke(name, cmd, values)

    def arguments(
        self, name: str, args: tuple[Any, ...], dot: Any, variables: _Vars, final: tuple[Any, ...]
    ) -> list[Any]:
        """The values function ``name`` receives, checked against its Go signature (``final``:
        the value piped in, its last argument)."""
        count = len(args) + len(final)
        signature = SIGNATURES.get(name)
        if signature is not None and count != len(signature):
            raise ExecError(f"wrong number of args for {name}: want {len(signature)} got {count}")
        kinds = signature if signature is not None else "a" * count
        raw = [self.typed_arg(a, dot, variables, kinds[i]) for i, a in enumerate(args)]
        raw += [_validate(v, kinds[-1]) for v in final]
        return [plain_arg(v) for v in raw]

    def invoke(self, name: str, cmd: Command, values: list[Any]) -> Any:
        """Function ``name`` called: its failure an error naming it, its string bounded."""
        try:
            result = self.functions[name](self.limits, *values)
        except _CALL_ERRORS as err:
            self.at = cmd
            raise ExecError(f"error calling {name}: {err}") from err
        if isinstance(result, str) and len(result) > self.limits.output:
            raise ExecError(f"{name} made a string over the limit of {self.limits.output} characters")
        return result

    def typed_arg(self, node: Any, dot: Any, variables: _Vars, kind: str) -> Any:
        """An argument for a parameter of Go type ``kind`` (``s`` string, ``i`` int, ``a``
        interface{}), refused as Go's ``evalArg`` refuses it."""
        self.at = node
        if isinstance(node, Literal) and kind != "a":
            wanted = str if kind == "s" else int
            if not isinstance(node.value, wanted) or isinstance(node.value, bool):
                raise ExecError(f"expected {'string' if kind == 's' else 'integer'}; found {node.text}")
            return node.value
        return _validate(self.arg(node, dot, variables), kind)

    def arg(self, node: Any, dot: Any, variables: _Vars) -> Any:
        if not isinstance(node, Literal):
            self.at = node
        if isinstance(node, Dot):
            return dot
        if isinstance(node, Literal):
            return node.value
        if isinstance(node, Field):
            return _fields(dot, node.names)
        if isinstance(node, Variable):
            return _fields(variables.get(node.name), node.names)
        if isinstance(node, Chain):
            mark = variables.mark()
            value = self.pipe(node.node, dot, variables)
            variables.pop(mark)
            return _fields(value, node.names)
        if isinstance(node, Ident):
            return self.function(node, Command((node,), node.pos, node.text), dot, variables, ())
        raise ExecError(f"can't evaluate {node!r}")


def _same(value: Any) -> Any:
    return value


def _validate(value: Any, kind: str) -> Any:
    """Go's ``validateType`` for a ``string`` or ``int`` parameter: no value, nil and other types
    are errors."""
    if kind == "a":
        return value
    wanted, name = (str, "string") if kind == "s" else (int, "int")
    if value is NO_VALUE:
        raise ExecError(f"invalid value; expected {name}")
    if (
        not isinstance(value, wanted)
        or isinstance(value, bool)
        or (isinstance(value, int) and value >= 1 << 63)
    ):
        got = "interface {}" if value is None else go_type(value)
        raise ExecError(f"wrong type for value; expected {name}; got {got}")
    return value


def _fields(value: Any, names: tuple[str, ...]) -> Any:
    for name in names:
        value = field(value, name)
    return value


def _iterate(value: Any, limit: int) -> list[tuple[Any, Any]]:
    """(key, item) pairs of what ``range`` walks: lists, maps (sorted by key), a count; at most
    ``limit`` of them."""
    size = _range_size(value)
    if size > limit:
        raise ExecError(f"range over {size} items, over the limit of {limit}")
    if value is None or value is NO_VALUE:
        return []
    return _range_pairs(value)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _range_size(value: Any) -> int:
    """How many turns ``range`` would take (0 for what it cannot walk)."""
    if _is_count(value):
        return int(value)
    return len(value) if isinstance(value, list | tuple | dict) else 0


def _range_pairs(value: Any) -> list[tuple[Any, Any]]:
    if isinstance(value, list | tuple):
        return list(enumerate(value))
    if isinstance(value, dict):
        return [(k, value[k]) for k in sorted(value, key=str)]
    if _is_count(value):
        return [(i, i) for i in range(max(value, 0))]
    raise ExecError(f"range can't iterate over {sprint(value)} ({go_type(value)})")
