"""Strict YAML: typed values that remember their line, duplicate keys as errors, size limits.

Control-plane files are read with this instead of ``yaml.safe_load`` so that every later
validation error can name the file and line, and so that hostile files (alias bombs,
oversized files, non-UTF-8 bytes) fail with a clear message instead of eating memory.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from promoter.controlplane.yamlwords import describe
from promoter.errors import ConfigError

MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_NODES = 200_000
MAX_DEPTH = 100  # nesting of mappings and sequences; deeper crashes libyaml's composer or Python
# Numbers: what Kubernetes, JSON tools and Go keep (int64), and no number written longer than this.
# Past them Python's own limits (int-to-string conversion) fail later, far from the file.
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
MAX_NUMBER_CHARS = 100

try:  # the C loader composes several times faster; same semantics
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

try:  # libyaml's parser, driven from C with no Python object per event
    from yaml._yaml import CParser as _CParser

    _HAVE_CPARSER = True
except ImportError:  # pragma: no cover - PyYAML built without libyaml: the full check does it all
    _HAVE_CPARSER = False


class LDict(dict[str, Any]):
    """A mapping that knows the line of itself and of each of its keys."""

    line: int
    lines: dict[str, int]
    # Unquoted scalars that YAML read as something other than a string: their text as written.
    texts: dict[str, str]
    key_texts: dict[str, str]


class LList(list[Any]):
    """A sequence that knows the line of itself and of each item."""

    line: int
    lines: list[int]


def line_of(value: object, key: str | int | None = None, default: int | None = None) -> int | None:
    """The line of ``value`` (or of ``value[key]``), when it was read by this module."""
    if key is not None:
        if isinstance(value, LDict) and isinstance(key, str):
            return value.lines.get(key, value.line)
        if isinstance(value, LList) and isinstance(key, int) and 0 <= key < len(value.lines):
            return value.lines[key]
    return getattr(value, "line", default)


def plain(value: Any) -> Any:
    """Turn located containers back into plain dicts and lists (for dumping, schemas)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


_STD_TAG = "tag:yaml.org,2002:"
_STR_TAG = _STD_TAG + "str"
_NUMBER_TAGS = (_STD_TAG + "int", _STD_TAG + "float")


class _Builder:
    def __init__(self, loader: yaml.SafeLoader, file: str, max_nodes: int, max_depth: int) -> None:
        self.loader = loader
        self.file = file
        self.budget = max_nodes
        self.max_depth = max_depth

    def error(self, node: yaml.Node, message: str) -> ConfigError:
        return ConfigError(message, file=self.file, line=node.start_mark.line + 1)

    def build(self, node: yaml.Node, depth: int = 1) -> Any:
        self.budget -= 1
        if self.budget < 0:
            raise self.error(node, "too many YAML nodes (an alias bomb?); refusing to expand")
        if isinstance(node, yaml.CollectionNode):
            if depth > self.max_depth:  # through aliases, nesting can exceed what the text shows
                raise self.error(node, f"nested more than {self.max_depth} levels deep")
            mapping = isinstance(node, yaml.MappingNode)
            if node.tag != _STD_TAG + ("map" if mapping else "seq"):
                raise self.error(
                    node, f"unsupported YAML tag {_tag(node.tag)} on a {'mapping' if mapping else 'sequence'}"
                )
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, depth)
        if isinstance(node, yaml.SequenceNode):
            out = LList()
            out.line = node.start_mark.line + 1
            out.lines = []
            for item in node.value:
                out.append(self.build(item, depth + 1))
                out.lines.append(_content_line(item))
            return out
        return self.scalar(node)

    def scalar(self, node: yaml.Node) -> Any:
        if node.tag == _STR_TAG and isinstance(node.value, str):  # what the constructor returns
            return node.value
        if isinstance(node.value, str) and len(node.value) > MAX_NUMBER_CHARS and node.tag in _NUMBER_TAGS:
            raise self.error(
                node, f"a number written with {len(node.value)} characters, over {MAX_NUMBER_CHARS}; quote it"
            )
        value = self._construct(node)
        self._check_range(node, value)
        return value

    def _construct(self, node: yaml.Node) -> Any:
        """The scalar's value, by its tag; an error naming the node when it is not valid."""
        try:
            return self.loader.construct_object(node, deep=True)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as err:
            # PyYAML's constructors raise these for values that match a tag's pattern but are
            # not valid, such as the implicit timestamp 2024-02-30 or an explicit "!!int abc".
            detail = "" if isinstance(err, KeyError | AttributeError) else str(err)
            raise self.error(
                node, f"invalid {_tag(node.tag)} value {node.value!r}" + (f" ({detail})" if detail else "")
            ) from err

    def _check_range(self, node: yaml.Node, value: Any) -> None:
        """A number must fit: an integer in 64 bits, a float short of infinity unless written so."""
        if isinstance(value, int) and not isinstance(value, bool) and not INT_MIN <= value <= INT_MAX:
            raise self.error(node, f"integer {node.value!r} is outside the 64-bit range; quote it")
        if isinstance(value, float) and math.isinf(value) and "inf" not in node.value.lower():
            raise self.error(node, f"number {node.value!r} is too large for a float; quote it")

    def _mapping(self, node: yaml.MappingNode, depth: int) -> LDict:
        out = LDict()
        out.line = node.start_mark.line + 1
        out.lines, out.texts, out.key_texts = {}, {}, {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise self.error(key_node, "YAML merge keys (<<) are not supported")
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.error(key_node, "mapping keys must be plain scalars")
            key = self.scalar(key_node)
            if not isinstance(key, str):
                raw_key = key_node.value
                key = str(key) if key is not None else "null"
                out.key_texts[key] = raw_key
            if key in out:
                raise self.error(key_node, f"duplicate key {key!r} (first at line {out.lines[key]})")
            out[key] = self.build(value_node, depth + 1)
            out.lines[key] = key_node.start_mark.line + 1
            if (
                isinstance(value_node, yaml.ScalarNode)
                and not value_node.style
                and not isinstance(out[key], str)
            ):
                out.texts[key] = value_node.value
        return out


def _tag(tag: str) -> str:
    return "!!" + tag[len(_STD_TAG) :] if tag.startswith(_STD_TAG) else tag


def check_depth(text: str, file: str, max_depth: int) -> None:
    """Refuse deep nesting before composing: libyaml's composer recurses in C, and a few
    thousand levels of ``[`` crash the whole process instead of raising."""
    loader = _Loader(text)
    depth = 0
    try:
        while loader.check_event():
            event = loader.get_event()  # type: ignore[no-untyped-call]
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > max_depth:
                    line = event.start_mark.line + 1 if event.start_mark else None
                    raise ConfigError(f"nested more than {max_depth} levels deep", file=file, line=line)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as err:
        # libyaml scans ahead of the events, so its own nesting cap (PyYAML 6.0.4 and later)
        # or a syntax error further on may stop the scan before this loop sees the depth.
        raise yaml_error(err, text, file, max_depth) from err
    finally:
        loader.dispose()


def yaml_error(err: yaml.YAMLError, text: str, file: str, max_depth: int = MAX_DEPTH) -> ConfigError:
    """Any error of any PyYAML version's scanner, parser or composer, in promoter's words."""
    problem = str(getattr(err, "problem", None) or err)
    mark = getattr(err, "problem_mark", None)
    if "nesting depth" in problem or "recursion" in problem:
        line = mark.line + 1 if mark is not None else None
        return ConfigError(f"nested more than {max_depth} levels deep", file=file, line=line)
    if isinstance(err, yaml.MarkedYAMLError):
        return _syntax_error(err, text, file)
    return ConfigError(f"invalid YAML: {problem}", file=file)


def _shallow(text: str, max_depth: int) -> bool:
    """Surely no deeper than ``max_depth``? A block collection nested in another starts on a
    new line further right, or on the same line after ``- ``, ``? `` or ``: ``, or is a sequence
    at its key's own column (at most one per column): its depth is at most twice the widest run
    of leading spaces and indicators, plus one, plus every flow bracket."""
    flow = text.count("[") + text.count("{")
    widest = max((len(ln) - len(ln.lstrip(" -?:")) for ln in text.splitlines()), default=0)
    return 2 * (widest + 1) + flow <= max_depth


def _parse_only(text: str) -> None:
    parser = _CParser(text)
    try:
        parser.raw_parse()
    finally:
        parser.dispose()


def _content_line(node: yaml.Node) -> int:
    """The line where a node's content starts: a block scalar's text starts after its ``|``."""
    line: int = node.start_mark.line + 1
    if isinstance(node, yaml.ScalarNode) and node.style in ("|", ">"):
        line += 1
    return line


def load_documents(
    data: bytes,
    file: str,
    *,
    max_bytes: int = MAX_FILE_BYTES,
    max_nodes: int = MAX_NODES,
    max_depth: int = MAX_DEPTH,
) -> list[Any]:
    """Every YAML document in ``data``, with line information; ConfigError naming ``file``."""
    if len(data) > max_bytes:
        raise ConfigError(f"file is {len(data)} bytes, over the limit of {max_bytes}", file=file)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise ConfigError(f"not valid UTF-8 (byte {err.start})", file=file, line=line) from err
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise ConfigError("contains a NUL character", file=file, line=line)
    try:
        if _HAVE_CPARSER and _shallow(text, max_depth):
            _parse_only(text)  # the same syntax errors, found in C
        else:
            check_depth(text, file, max_depth)
    except yaml.YAMLError as err:
        raise yaml_error(err, text, file, max_depth) from err
    loader = _Loader(text)
    builder = _Builder(loader, file, max_nodes, max_depth)
    docs: list[Any] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                docs.append(builder.build(node))
    except yaml.YAMLError as err:
        raise yaml_error(err, text, file, max_depth) from err
    finally:
        loader.dispose()
    return docs


def _syntax_error(err: yaml.MarkedYAMLError, text: str, file: str) -> ConfigError:
    spot = describe(err, text)
    return ConfigError(spot.message, file=file, line=spot.line, column=spot.column)


# ---------------------------------------------------------------- a fast check of rendered text

# Constructs that only composing or constructing judge (anchors and aliases, tags, merge keys),
# that may start another document (directives, markers), or that libyaml reads as line breaks
# besides "\n".
_SLOW_MARKS = ("&", "*", "!", "%", "<<", "\n---", "\n...", "\r", "\x85", "\u2028", "\u2029")
_EXPLICIT_KEY = re.compile(r"(?:^|[\s\[{,])\?(?:\s|$)")  # "? key": a key that may be a collection
_FLOW_KEY = re.compile(r"[\]}]\s*:")  # "[a]: b": a collection as a key, which PyYAML refuses
_VALUE_TAG = re.compile(r"(?:^|[\s\[{,:])=(?:\s|$|[\]},])")  # a plain "=" (the YAML value type)
# "key:" at column 0, after any blank or comment lines
_ROOT_KEY = re.compile(r"(?:[ \t]*(?:#[^\n]*)?\n)*[A-Za-z0-9_][A-Za-z0-9_./-]*:(?:[ \t]|$)", re.M)


def surely_one_mapping(text: str) -> bool:
    """True when ``text`` is surely one YAML document holding a mapping that PyYAML's safe
    loader reads without error; False means "not sure", and the caller parses it fully.

    Loading a document builds a Python object per node, ten times the cost of rendering it.
    For text with none of the constructs of ``_SLOW_MARKS``, no collection as a key and no
    plain ``=``, libyaml's parser alone finds every error the safe loader would. With no
    document marker there is one document, and a first line ``key:`` at column 0 (after blank
    or comment lines) makes its root a block mapping. Nesting depth is not judged here: callers check it first.
    """
    if not _HAVE_CPARSER or text.startswith(("---", "...")) or not _ROOT_KEY.match(text):
        return False
    if _needs_loader(text):
        return False
    return _parses(text)


def _needs_loader(text: str) -> bool:
    """Whether ``text`` may hold what only the loader judges: a construct of ``_SLOW_MARKS``,
    an explicit key, a collection as a key, or a plain ``=``."""
    if any(mark in text for mark in _SLOW_MARKS):
        return True
    if "?" in text and _EXPLICIT_KEY.search(text):
        return True
    if ("]" in text or "}" in text) and _FLOW_KEY.search(text):
        return True
    return "=" in text and _VALUE_TAG.search(text) is not None


def _parses(text: str) -> bool:
    """Whether libyaml's parser reads ``text`` without error."""
    parser = _CParser(text)
    try:
        parser.raw_parse()
    except yaml.YAMLError:
        return False
    finally:
        parser.dispose()
    return True


def maybe_deep(text: str) -> bool:
    """Cheap test: could ``text`` nest more than MAX_DEPTH levels? (flow brackets or indentation)"""
    if text.count("[") + text.count("{") > MAX_DEPTH:
        return True
    if len(text) <= 2 * MAX_DEPTH:
        return False
    # Every line of splitlines() lies within one "\n"-separated piece, so when no piece is longer
    # than MAX_DEPTH no line is indented more; str.split measures that at C speed.
    if max(map(len, text.split("\n"))) <= MAX_DEPTH:
        return False
    return max(len(ln) - len(ln.lstrip(" -")) for ln in text.splitlines()) > MAX_DEPTH
