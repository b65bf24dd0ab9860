"""Writing a planned tree as a commit with ``git fast-import``: one process for the whole
tree (two for the blobs and folders of a very large one), never file by file through an index."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from itertools import chain

from promoter.errors import GitError
from promoter.gitcmd import IDENTITY, Git
from promoter.platform.objects import TREE_MODE, fast_import_path, join
from promoter.platform.plan import Entry, TreePlan

# fast-import tries each blob as a delta of the blob before it in the stream, so blobs are written
# grouped by file name (``delta_order``): files of one name come from one template and differ in a
# few names, and each is stored as a small delta of the one before. At 100,000 files that writes
# the blobs faster than without deltas (less to compress), stores a third of the bytes, and lets
# the push send those deltas as they are instead of searching for its own (5 times faster). A
# depth of 10 bounds what reading one blob costs.
FAST_IMPORT_OPTIONS = ("--depth=10",)
# From this many new files, a commit writes its blobs in two processes first (see write_in_two).
PARALLEL_BLOBS = 20_000


def write_commit(git: Git, plan: TreePlan, root: str, parents: list[str], message: str) -> str:
    """Write the planned tree as a commit with ``parents`` (the first is the base); its sha.

    On the base it was planned against, only the touched folders and new content are written;
    otherwise the whole tree under ``root`` (whole folders by tree id)."""
    ref = _temporary_ref()
    touched = _touched_on_base(plan, parents)
    chunks = [_header(ref, message), *_parent_commands(root, parents, touched)]
    explicit, trees, whole = _content(plan, touched)
    inline = delta_order(p for p in explicit if p in plan.inline)
    marks: dict[str, int] = {}
    temporary: list[str] = []
    if len(inline) >= PARALLEL_BLOBS and _cpus() >= 2:  # the commit names them by id
        written = write_in_two(git, plan, explicit, inline, whole, temporary)
        explicit = {p: e for p, e in explicit.items() if p.split("/", 1)[0] not in written}
        trees = {**trees, **written}
    else:  # the blobs before the commit that names them by mark
        marks = marks_of(inline)
        chunks = _blobs(plan, inline, marks) + chunks
    chunks += _entries(root, trees, explicit, marks)
    git.run("fast-import", "--quiet", "--date-format=raw", *FAST_IMPORT_OPTIONS, input=b"".join(chunks))
    sha = git.rev_parse(ref)
    if sha is None:
        raise GitError(f"git fast-import wrote no {ref} in {git.path}")
    for name in (ref, *temporary):
        git.delete_ref(name)
    return sha


def _touched_on_base(plan: TreePlan, parents: list[str]) -> frozenset[str] | None:
    """The folders the plan touched, when the commit's first parent is the base it was planned
    against (then only those are written); None when the whole tree is."""
    on_base = bool(parents) and parents[0] == plan.base
    return plan.touched if on_base else None


def _parent_commands(root: str, parents: list[str], touched: frozenset[str] | None) -> list[bytes]:
    """``from`` and ``merge`` of each parent, and what of the first parent's tree the commit
    replaces: the ``touched`` folders, else everything under ``root``."""
    if not parents:
        return []
    chunks = [f"from {parents[0]}\n".encode(), *(f"merge {p}\n".encode() for p in parents[1:])]
    if touched is None:
        return [*chunks, f"D {root}\n".encode() if root else b"deleteall\n"]
    return chunks + [f"D {fast_import_path(join(root, n))}\n".encode() for n in sorted(touched)]


def _content(
    plan: TreePlan, touched: frozenset[str] | None
) -> tuple[dict[str, Entry], dict[str, str], set[str]]:
    """The entries the commit writes one by one, the folders it names by tree id, and the
    folders whose every file is among those entries: all of the plan's, or on its base only the
    ``touched`` folders' and the new content."""
    explicit, trees = plan.explicit(), plan.trees
    whole = _folders(explicit)
    if touched is None:
        return explicit, trees, whole
    trees = {n: t for n, t in trees.items() if n in touched}
    explicit = {p: e for p, e in explicit.items() if p in plan.inline or p.split("/", 1)[0] in touched}
    return explicit, trees, whole & touched  # a new file in another folder joins what the base has there


def blob_command(mark: int, data: bytes) -> bytes:
    """fast-import's command for one blob, named ``:mark`` in the rest of the stream."""
    return b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(data), data)


def marks_of(paths: list[str]) -> dict[str, int]:
    """Each path's blob mark, in the order the blobs are written."""
    return {path: mark for mark, path in enumerate(paths, 1)}


def _blobs(plan: TreePlan, paths: list[str], marks: dict[str, int]) -> list[bytes]:
    return [blob_command(marks[p], plan.inline[p]) for p in paths]


def _temporary_ref() -> str:
    return f"refs/promoter/tmp/{uuid.uuid4().hex}"


def _folders(explicit: dict[str, Entry]) -> set[str]:
    return {path.split("/", 1)[0] for path in explicit if "/" in path}


def _header(ref: str, message: str) -> bytes:
    stamp = f"{int(time.time())} +0000"
    who = f"{IDENTITY['GIT_COMMITTER_NAME']} <{IDENTITY['GIT_COMMITTER_EMAIL']}>"
    msg = message.encode()
    return f"commit {ref}\nauthor {who} {stamp}\ncommitter {who} {stamp}\n".encode() + b"data %d\n%s\n" % (
        len(msg),
        msg,
    )


def delta_order(paths: Iterable[str]) -> list[str]:
    """Paths grouped by file name, then in path order: the order blobs are written in."""
    return sorted(paths, key=lambda path: (path.rpartition("/")[2], path))


def _entries(
    root: str, trees: dict[str, str], explicit: dict[str, Entry], marks: dict[str, int]
) -> list[bytes]:
    chunks = [
        f"M {TREE_MODE} {trees[name]} {fast_import_path(join(root, name))}\n".encode()
        for name in sorted(trees)
    ]
    for path in sorted(explicit):
        mode, sha = explicit[path]
        target = fast_import_path(join(root, path))
        mark = marks.get(path)
        chunks.append(f"M {mode} {sha if mark is None else f':{mark}'} {target}\n".encode())
    return chunks


def write_in_two(
    git: Git, plan: TreePlan, explicit: dict[str, Entry], inline: list[str], whole: set[str], refs: list[str]
) -> dict[str, str]:
    """Write many new blobs, and the trees of the ``whole`` folders, with two fast-import
    processes at once: compressing blobs and hashing trees is most of a big commit's cost,
    and both split by folder. Each process writes the new blobs of its folders in
    ``delta_order`` and commits its folders on a ref of its own (added to ``refs``, for the
    caller to delete); the first also writes the new blobs outside a whole folder, for the
    commit to name by id. Returns the folders' tree ids, for the commit to name."""
    parts = [(_temporary_ref(), paths, entries) for paths, entries in _parts(explicit, inline, whole)]
    refs += [ref for ref, _, _ in parts]
    with ThreadPoolExecutor(2) as pool:
        for done in [pool.submit(_write_part, git, plan, *part) for part in parts]:
            done.result()
    return {
        folder: sha for ref, _, entries in parts if entries for folder, sha in _top_trees(git, ref).items()
    }


def _parts(
    explicit: dict[str, Entry], inline: list[str], whole: set[str]
) -> list[tuple[list[str], dict[str, Entry]]]:
    """The new blobs and the entries of each half of the ``whole`` folders; the first half also
    has the new blobs outside a whole folder."""
    parts = []
    for i, folders in enumerate(_halves(inline, whole)):
        mine = [p for p in inline if _top(p) in folders or (i == 0 and _top(p) not in whole)]
        parts.append((mine, {p: e for p, e in explicit.items() if _top(p) in folders}))
    return parts


def _write_part(git: Git, plan: TreePlan, ref: str, paths: list[str], entries: dict[str, Entry]) -> None:
    """One fast-import of ``write_in_two``: the new blobs ``paths``, and a commit of ``entries``
    on ``ref`` when there are any."""
    marks = marks_of(paths)
    blobs = (blob_command(marks[p], plan.inline[p]) for p in paths)
    commit = (
        [_header(ref, "promoter: part of a commit"), *_entries("", {}, entries, marks)] if entries else []
    )
    stream = b"".join(chain(blobs, commit))  # no list of the blobs: the stream is their one copy
    git.run("fast-import", "--quiet", "--date-format=raw", *FAST_IMPORT_OPTIONS, input=stream)


def _top(path: str) -> str:
    """The top-level folder of ``path`` (the path itself at the top)."""
    return path.split("/", 1)[0]


def _halves(inline: list[str], whole: set[str]) -> tuple[set[str], set[str]]:
    """The ``whole`` folders in two, in order, cut where about half of the new blobs are."""
    count = dict.fromkeys(whole, 0)
    for path in inline:
        folder = path.split("/", 1)[0]
        if folder in count:
            count[folder] += 1
    halves: tuple[set[str], set[str]] = (set(), set())
    seen = 0
    for folder in sorted(whole):
        halves[0 if seen < len(inline) / 2 else 1].add(folder)
        seen += count[folder]
    return halves


def _top_trees(git: Git, ref: str) -> dict[str, str]:
    """The folders at the top of ``ref``'s tree, by tree id."""
    return {e.path: e.sha for e in git.folders(ref, [""])[""] if e.type == "tree"}


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
