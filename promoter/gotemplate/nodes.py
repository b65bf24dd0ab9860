"""The parse tree of a Go template: what ``parser`` builds and ``execute`` walks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# ---- operands
#
# Each operand and command knows where it is (``pos``: its offset in the source, where Go's
# parser puts it) and how Go writes it back (``text``: ``Node.String()``), for Go's error
# context ``template:1:18: executing "template" at <upper>``.


@dataclass(frozen=True)
class Dot:
    pos: int = field(default=0, compare=False)
    text: str = field(default=".", compare=False)


@dataclass(frozen=True)
class Literal:
    value: Any
    pos: int = field(default=0, compare=False)
    text: str = field(default="", compare=False)


@dataclass(frozen=True)
class Field:
    """``.A.B``: fields of dot."""

    names: tuple[str, ...]
    pos: int = field(default=0, compare=False)
    text: str = field(default="", compare=False)


@dataclass(frozen=True)
class Variable:
    """``$x.A.B`` (``$`` alone is the data the template was run with)."""

    name: str
    names: tuple[str, ...] = ()
    pos: int = field(default=0, compare=False)
    text: str = field(default="", compare=False)


@dataclass(frozen=True)
class Ident:
    """A function name."""

    name: str
    pos: int = field(default=0, compare=False)
    text: str = field(default="", compare=False)


@dataclass(frozen=True)
class Chain:
    """``(pipeline).A.B``."""

    node: Pipe
    names: tuple[str, ...]
    pos: int = field(default=0, compare=False)
    text: str = field(default="", compare=False)


@dataclass(frozen=True)
class Command:
    args: tuple[Any, ...]
    pos: int = field(default=0, compare=False)
    text: str = field(default="", compare=False)


@dataclass(frozen=True)
class Pipe:
    """``$x := a | b c``: the declared (or assigned) variables and the commands."""

    decl: tuple[str, ...]
    assign: bool
    cmds: tuple[Command, ...]
    line: int


# ---- statements


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Action:
    pipe: Pipe


@dataclass(frozen=True)
class Branch:
    """``if``, ``with`` or ``range``, with the list it runs and its ``else`` list."""

    kind: str
    pipe: Pipe
    body: tuple[Any, ...]
    orelse: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Call:
    """``{{template "name" pipeline}}``."""

    name: str
    pipe: Pipe | None
    line: int


@dataclass(frozen=True)
class Jump:
    """``break`` or ``continue``."""

    kind: str
    line: int


@dataclass
class Tree:
    """A parsed template: its body and the templates it defines."""

    name: str
    body: tuple[Any, ...]
    defines: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    source: str = ""
