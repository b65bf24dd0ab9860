"""Git object math with no git call: the ids git gives blobs and trees, and the paths and
records of its plumbing. Pure: the planner and the renderer's memo use it to know a tree's id
before (or without) writing it."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass

ZERO = "0" * 40
TREE_MODE = "040000"
SHA = re.compile(r"[0-9a-f]{40}")


def is_sha(value: str) -> bool:
    """A full 40-hex object id (a ref name moves; a sha names the same content forever)."""
    return SHA.fullmatch(value) is not None


def blob_id(data: bytes) -> str:
    """The sha git gives a blob with these bytes (no git call)."""
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def tree_id(entries: Mapping[str, tuple[str, str]]) -> str:
    """The id git gives a tree with these entries (name -> (mode, id)); no git call."""
    items = sorted(entries.items(), key=lambda e: e[0].encode() + (b"/" if e[1][0] == TREE_MODE else b""))
    body = b"".join(
        b"%s %s\0%s" % (mode.lstrip("0").encode(), name.encode(), bytes.fromhex(sha))
        for name, (mode, sha) in items
    )
    return hashlib.sha1(b"tree %d\0%s" % (len(body), body)).hexdigest()


def files_tree_id(blobs: Mapping[str, str]) -> str:
    """The id of the tree holding these regular files (path -> blob id), folders included."""
    entries: dict[str, tuple[str, str]] = {}
    folders: dict[str, dict[str, str]] = {}
    for path, sha in blobs.items():
        head, sep, rest = path.partition("/")
        if sep:
            folders.setdefault(head, {})[rest] = sha
        else:
            entries[head] = ("100644", sha)
    for name, inside in folders.items():
        entries[name] = (TREE_MODE, files_tree_id(inside))
    return tree_id(entries)


@dataclass
class Change:
    added: int = 0
    changed: int = 0
    removed: int = 0

    @property
    def total(self) -> int:
        return self.added + self.changed + self.removed


def changes(old: Mapping[str, tuple[str, str]], new: Mapping[str, tuple[str, str]]) -> dict[str, Change]:
    """Files added, changed and removed, per first path component ('.' for top-level files)."""
    out: dict[str, Change] = {}
    for path in old.keys() | new.keys():
        group = path.split("/", 1)[0] if "/" in path else "."
        if path not in new:
            out.setdefault(group, Change()).removed += 1
        elif path not in old:
            out.setdefault(group, Change()).added += 1
        elif old[path] != new[path]:
            out.setdefault(group, Change()).changed += 1
    return out


def join(root: str, path: str) -> str:
    return f"{root}/{path}" if root else path


def fast_import_path(path: str) -> str:
    """A path as git fast-import reads it: C-style quoted when it needs to be."""
    if not any(c in path for c in '"\\\n') and not path.startswith('"'):
        return path
    escaped = path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'
