"""Strict YAML: typed values that remember their line, duplicate keys as errors, size limits.

Control-plane files are read with this instead of ``yaml.safe_load`` so that every later
validation error can name the file and line, and so that hostile files (alias bombs,
oversized files, non-UTF-8 bytes) fail with a clear message instead of eating memory.
"""

from __future__ import annotations

from typing import Any

import yaml

from promoter.errors import ConfigError

MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_NODES = 200_000

try:  # the C loader composes several times faster; same semantics
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader


class LDict(dict[str, Any]):
    """A mapping that knows the line of itself and of each of its keys."""

    line: int
    lines: dict[str, int]


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


class _Builder:
    def __init__(self, loader: yaml.SafeLoader, file: str, max_nodes: int) -> None:
        self.loader = loader
        self.file = file
        self.budget = max_nodes

    def error(self, node: yaml.Node, message: str) -> ConfigError:
        return ConfigError(message, file=self.file, line=node.start_mark.line + 1)

    def build(self, node: yaml.Node) -> Any:
        self.budget -= 1
        if self.budget < 0:
            raise self.error(node, "too many YAML nodes (an alias bomb?); refusing to expand")
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node)
        if isinstance(node, yaml.SequenceNode):
            out = LList()
            out.line = node.start_mark.line + 1
            out.lines = []
            for item in node.value:
                out.append(self.build(item))
                out.lines.append(_content_line(item))
            return out
        return self.loader.construct_object(node, deep=True)

    def _mapping(self, node: yaml.MappingNode) -> LDict:
        out = LDict()
        out.line = node.start_mark.line + 1
        out.lines = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise self.error(key_node, "YAML merge keys (<<) are not supported")
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.error(key_node, "mapping keys must be plain scalars")
            key = self.loader.construct_object(key_node)
            if not isinstance(key, str):
                key = str(key) if key is not None else "null"
            if key in out:
                raise self.error(
                    key_node, f"duplicate key {key!r} (first at line {out.lines[key]})"
                )
            out[key] = self.build(value_node)
            out.lines[key] = key_node.start_mark.line + 1
        return out


def _content_line(node: yaml.Node) -> int:
    """The line where a node's content starts: a block scalar's text starts after its ``|``."""
    line: int = node.start_mark.line + 1
    if isinstance(node, yaml.ScalarNode) and node.style in ("|", ">"):
        line += 1
    return line


def load_documents(
    data: bytes, file: str, *, max_bytes: int = MAX_FILE_BYTES, max_nodes: int = MAX_NODES
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
    loader = _Loader(text)
    builder = _Builder(loader, file, max_nodes)
    docs: list[Any] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                docs.append(builder.build(node))
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark else None
        problem = err.problem or str(err)
        raise ConfigError(f"invalid YAML: {problem}", file=file, line=line) from err
    except yaml.YAMLError as err:
        raise ConfigError(f"invalid YAML: {err}", file=file) from err
    finally:
        loader.dispose()
    return docs
