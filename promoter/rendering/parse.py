"""Rendered YAML read back as objects, for the checks, at a tenth of PyYAML's cost.

PyYAML's safe loader (YAML 1.1, what promoter means by YAML everywhere else) spends about 170 µs
on a typical rendered file, mostly creating an event object per token in Python; at 100,000
files that is most of a promotion. ``yaml_rs`` (a Rust parser) reads the same file in about
20 µs but follows YAML 1.2's core schema, which reads some plain scalars differently (``yes``,
``on``, ``0755``, ``1e3``, ``12:30``, ``0o17``, ``1_000``, tags, merge keys). So a file is read
by ``yaml_rs`` only when its text holds none of those forms anywhere (a conservative test over
the whole text, quoted strings included) and no document marker it cannot split on; every other
file, and every file ``yaml_rs`` refuses, is read by PyYAML. Either way the objects are those
PyYAML would build (``tests/rendering/test_parse.py`` compares them) for text PyYAML reads, which
every rendered file is: the renderer refused any other text before.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from promoter.controlplane.yamlfile import MAX_DEPTH, check_depth, maybe_deep
from promoter.errors import ConfigError

yaml_rs: Any
try:
    import yaml_rs
except ImportError:  # optional: without its wheel (an unusual platform), PyYAML reads everything
    yaml_rs = None

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# What YAML 1.1 and 1.2 (or PyYAML and yaml_rs) might read differently is judged word by word:
# every run of characters between spaces and flow punctuation, quoted text included (so the test
# is conservative), a trailing ":" removed. These words send the file to PyYAML: booleans of
# YAML 1.1 only, the value tag, merge and explicit keys, and numbers written in a way the two
# read differently (only a word starting with a digit, a sign or a dot can be a number).
_BOOLEANS_1_1 = (
    "y",
    "Y",
    "yes",
    "Yes",
    "YES",
    "n",
    "N",
    "no",
    "No",
    "NO",
    "on",
    "On",
    "ON",
    "off",
    "Off",
    "OFF",
)
_DIFFERENT_WORDS = frozenset([*_BOOLEANS_1_1, *(f"{w}:" for w in _BOOLEANS_1_1), "=", "<<", "?"])
_DIFFERENT_NUMBER = re.compile(
    r"[-+]?0[0-9_oObBxX].*"  # octal in 1.1, decimal in 1.2; 0o and 0b prefixes
    r"|.*(?:[0-9]_|_[0-9]).*"  # underscores in 1.1 numbers
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?:?"  # sexagesimal in 1.1
    r"|[-+]?[0-9_]*\.?[0-9_]*[eE][-+]?[0-9]+:?"  # exponents: 1.2 reads more of them as numbers
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*"  # timestamps
    r"|[-+]?[0-9]{16,}.*"  # numbers near or past 64 bits
)
_NUMBER_START = frozenset("+-.0123456789")
_WORDS = re.compile(r"[^\s\[\]{},]+")
# Characters that start tags, anchors, aliases and directives, and line breaks of YAML 1.1 only.
_DIFFERENT_CHARS = "!&*%\t\r\x85\u2028\u2029\ufeff"
_MARKER = re.compile(r"^---[ \t]*(?:\n|$)", re.MULTILINE)
_LAST_WINS = yaml_rs.DuplicateKeyPolicy.LastWins if yaml_rs else None


def load_rendered(data: bytes) -> list[Any]:
    """The documents of one rendered file, as PyYAML's safe loader reads them (empty ones left out)."""
    fast = _fast(data) if yaml_rs is not None else None
    if fast is not None:
        return fast
    return [d for d in yaml.load_all(data, Loader=_Loader) if d is not None]


def _fast(data: bytes) -> list[Any] | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if _differs(text):
        return None
    docs = []
    for piece in _MARKER.split(text):
        if not _has_content(piece):
            continue
        try:
            doc = yaml_rs.loads(piece, parse_datetime=False, duplicate_key_policy=_LAST_WINS)
        except (ValueError, TypeError, OverflowError):
            return None
        if not isinstance(doc, dict):  # a scalar or list document: rare, let PyYAML read it
            return None
        docs.append(doc)
    return docs


def _differs(text: str) -> bool:
    if any(c in text for c in _DIFFERENT_CHARS) or text.startswith("...") or "\n..." in text:
        return True
    words = set(_WORDS.findall(text))
    if not words.isdisjoint(_DIFFERENT_WORDS):
        return True
    return any(w[0] in _NUMBER_START and _DIFFERENT_NUMBER.fullmatch(w) for w in words)


def _has_content(piece: str) -> bool:
    return any(line.strip() and not line.lstrip().startswith("#") for line in piece.splitlines())


Problem = tuple[int | None, str]  # the line in the rendered text (if known) and what is wrong


def read_rendered_text(text: str, file: str) -> tuple[list[Any], Problem | None]:
    """A template's output read as PyYAML reads it (its documents, empty ones left out), or the
    problem that makes it no YAML, in promoter's words; ``file`` is the template's, for errors."""
    try:
        if maybe_deep(text):  # libyaml's composer recurses in C: refuse before it crashes
            check_depth(text, file, MAX_DEPTH)
        return [d for d in yaml.load_all(text, Loader=_Loader) if d is not None], None
    except ConfigError as err:
        words = err.message if err.message.startswith("nested") else f"not valid YAML: {err.message}"
        return [], (err.line, f"rendered text is {words}")
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        return [], ((mark.line + 1 if mark else None), f"rendered text is not valid YAML: {problem}")
