"""Writing a planned tree as a commit with ``git fast-import``: one process for the whole
tree (two for the blobs of a very large one), never file by file through an index."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager

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
# From this many new files, a commit writes its blobs in two processes first (see blobs_written).
PARALLEL_BLOBS = 20_000


def write_commit(git: Git, plan: TreePlan, root: str, parents: list[str], message: str) -> str:
    """Write the planned tree as a commit with ``parents`` (the first is the base); its sha.

    On the base it was planned against, only the touched folders and new content are written;
    otherwise the whole tree under ``root`` (whole folders by tree id)."""
    ref = f"refs/promoter/tmp/{uuid.uuid4().hex}"
    chunks = [_header(ref, message)]
    explicit, trees = plan.explicit(), plan.trees
    if parents:
        chunks.append(f"from {parents[0]}\n".encode())
        chunks.extend(f"merge {p}\n".encode() for p in parents[1:])
        if plan.touched is not None and parents[0] == plan.base:
            chunks.extend(f"D {fast_import_path(join(root, n))}\n".encode() for n in sorted(plan.touched))
            trees = {n: t for n, t in trees.items() if n in plan.touched}
            explicit = {
                p: e for p, e in explicit.items() if p in plan.inline or p.split("/", 1)[0] in plan.touched
            }
        else:
            chunks.append(f"D {root}\n".encode() if root else b"deleteall\n")
    inline = delta_order(p for p in explicit if p in plan.inline)
    blobs: list[bytes] = []  # blob commands, before the commit that names them by mark
    marks: dict[str, int] = {}
    with ExitStack() as writing:
        if len(inline) >= PARALLEL_BLOBS and _cpus() >= 2:  # the commit then names them by id
            writing.enter_context(blobs_written(git, [plan.inline[p] for p in inline]))
        else:
            for mark, path in enumerate(inline, 1):
                data = plan.inline[path]
                blobs.append(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(data), data))
                marks[path] = mark
        chunks = blobs + chunks + _entries(root, trees, explicit, marks)
    git.run("fast-import", "--quiet", "--date-format=raw", *FAST_IMPORT_OPTIONS, input=b"".join(chunks))
    sha = git.out("rev-parse", "--verify", operands=[ref])
    git.delete_ref(ref)
    return sha


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


@contextmanager
def blobs_written(git: Git, contents: list[bytes]) -> Iterator[None]:
    """Write many blobs with two fast-import processes at once, while the block runs (the
    commit's own stream is made meanwhile): compressing them is most of a big commit's cost,
    and it is the part that splits. ``contents`` in ``delta_order``: each process gets one run
    of it, so neighbours stay neighbours. Every blob is written when the block ends."""
    half = len(contents) // 2

    def write(part: list[bytes]) -> None:
        stream = b"".join(b"blob\ndata %d\n%s\n" % (len(data), data) for data in part)
        git.run("fast-import", "--quiet", *FAST_IMPORT_OPTIONS, input=stream)

    with ThreadPoolExecutor(2) as pool:
        written = [pool.submit(write, part) for part in (contents[:half], contents[half:])]
        yield
        for done in written:
            done.result()


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
