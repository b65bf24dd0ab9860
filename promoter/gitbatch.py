"""One ``git cat-file --batch-command`` process per repository handle, for the reads a run repeats.

A promotion asks the same repositories dozens of questions: what a ref names, a file at a
commit, the entries of a tree, many blobs. Each was a git process of its own (about 2 ms of CPU,
more from a large parent). Here a ``gitcmd.Git`` starts one reader the first time it reads and
asks it everything after over a pipe; the reader ends when the handle is collected or the
interpreter exits.

The reader answers as the one-shot commands would: git reads loose refs from disk on each
question and checks packed-refs for changes, and looks for new packs when an object is not found,
so refs moved and objects written by other processes (a fetch, a push, ``update-ref``) are seen.
What it cannot carry raises ``Unavailable`` (a name with a newline or with spaces at its ends, a
path with ``.`` or ``..`` in it, a reader that could not start or died), and the caller runs the
one-shot command; a process forked from the one that started a reader starts its own.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, NamedTuple

#: Command bytes written before the answers are read: well under a pipe's buffer (64 KiB on
#: Linux), so that git never waits on a full stdout while this side still writes its stdin.
_CHUNK = 16 * 1024


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    type: str
    sha: str
    path: str


class Answer(NamedTuple):
    sha: str
    type: str
    contents: bytes  # empty for ``info``


class Unavailable(Exception):
    """The reader cannot answer: run the one-shot command instead."""


class BatchReader:
    """``git cat-file --batch-command --buffer`` in ``path``: ``info`` and ``contents`` of named
    objects, many per round trip. Thread-safe; usable only by the process that started it."""

    def __init__(self, path: Path, env: Mapping[str, str]) -> None:
        self._path, self._env = path, env
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid = 0
        self._lock = threading.Lock()
        self._broken = False

    def ask(self, questions: Sequence[tuple[str, str]]) -> list[Answer | None]:
        """The answers to ``(command, name)`` questions, ``info`` or ``contents``, in one round
        trip per 16 KiB of questions: (sha, type, contents, empty for ``info``), None for a name
        git cannot resolve to an object here. Unavailable when the reader cannot ask."""
        for _, name in questions:
            if not _askable(name):
                raise Unavailable(name)
        with self._lock:
            proc = self._running()
            try:
                return _exchange(proc, questions)
            except (OSError, ValueError) as err:
                self._broken = True
                self._proc = None
                _end(proc)
                raise Unavailable(str(err)) from err

    def close(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
            if proc is not None and self._pid == os.getpid():
                _end(proc)

    def _running(self) -> subprocess.Popen[bytes]:
        if self._broken:
            raise Unavailable("the reader stopped")
        if self._proc is not None and self._pid == os.getpid():
            return self._proc
        self._pid = os.getpid()  # a forked child starts its own: the pipes are the parent's
        try:
            self._proc = subprocess.Popen(
                ["git", "-C", str(self._path), "cat-file", "--batch-command", "--buffer"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=dict(self._env),
            )
        except OSError as err:
            self._broken = True
            raise Unavailable(str(err)) from err
        return self._proc


def _askable(name: str) -> bool:
    """Whether the reader can carry ``name``: one line, no spaces at its ends."""
    return bool(name) and "\n" not in name and "\r" not in name and name == name.strip()


def _exchange(proc: subprocess.Popen[bytes], questions: Sequence[tuple[str, str]]) -> list[Answer | None]:
    """Ask the reader a chunk of questions at a time, reading its answers after each."""
    assert proc.stdin is not None and proc.stdout is not None
    answers: list[Answer | None] = []
    for chunk in _chunks(questions):
        proc.stdin.write(b"".join(f"{c} {n}\n".encode() for c, n in chunk) + b"flush\n")
        proc.stdin.flush()
        answers += [_answer(proc.stdout, c == "contents") for c, _ in chunk]
    return answers


def _chunks(questions: Iterable[tuple[str, str]]) -> Iterable[list[tuple[str, str]]]:
    chunk: list[tuple[str, str]] = []
    size = 0
    for question in questions:
        length = len(question[0]) + len(question[1]) * 4 + 2  # utf-8: at most 4 bytes a character
        if chunk and size + length > _CHUNK:
            yield chunk
            chunk, size = [], 0
        chunk.append(question)
        size += length
    if chunk:
        yield chunk


def _answer(out: IO[bytes], with_contents: bool) -> Answer | None:
    """One answer: ``<sha> <type> <size>`` (then the contents and a newline), or ``<name>
    missing`` / ``ambiguous``; an end of the stream is an OSError (the reader died)."""
    header = out.readline()
    if not header.endswith(b"\n"):
        raise OSError("git cat-file ended")
    fields = header.split()
    if len(fields) != 3 or not fields[2].isdigit():
        return None  # "<name> missing", "<name> ambiguous"
    body = b""
    if with_contents:
        size = int(fields[2])
        body = out.read(size + 1)
        if len(body) != size + 1:
            raise OSError("git cat-file ended")
        body = body[:size]
    return Answer(fields[0].decode(), fields[1].decode(), body)


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Close the reader's stdin (git exits at its end) and reap it."""
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
    finally:
        if proc.stdout is not None:
            proc.stdout.close()


def tree_entries(raw: bytes, hash_bytes: int) -> list[tuple[str, str, bytes]]:
    """The entries of a raw tree object: (mode, sha, name), in the tree's order."""
    entries = []
    pos, end = 0, len(raw)
    while pos < end:
        space = raw.index(b" ", pos)
        nul = raw.index(b"\0", space)
        sha = raw[nul + 1 : nul + 1 + hash_bytes].hex()
        entries.append((raw[pos:space].decode(), sha, raw[space + 1 : nul]))
        pos = nul + 1 + hash_bytes
    return entries


def entry(mode: str, sha: str, path: str) -> TreeEntry:
    """A tree entry as ``git ls-tree`` prints it: six-digit mode, its type."""
    kind = "tree" if mode == "40000" else "commit" if mode == "160000" else "blob"
    return TreeEntry(mode.zfill(6), kind, sha, path)


def require_plain(path: str) -> None:
    """Unavailable for a path that is not a plain ``a/b/c`` (empty parts, ``.``, ``..``): git's
    own rules for such paths, through the one-shot command."""
    if path and any(part in ("", ".", "..") for part in path.split("/")):
        raise Unavailable(path)


def folders(reader: BatchReader, treeish: str, paths: Sequence[str]) -> dict[str, list[TreeEntry]]:
    """The entries directly in each folder of ``paths`` ("" for the top) of ``treeish``, with
    full paths, in one round trip; none for a path that is no folder there. Unavailable when
    ``treeish`` names no tree, or a path is not plain (``git ls-tree``'s rules then)."""
    for path in paths:
        require_plain(path)
    questions = [("info", f"{treeish}^{{tree}}")]
    questions += [("contents", f"{treeish}:{path}" if path else f"{treeish}^{{tree}}") for path in paths]
    answers = reader.ask(questions)
    if answers[0] is None:
        raise Unavailable(treeish)
    width = len(answers[0].sha) // 2
    return {path: _folder(path, answer, width) for path, answer in zip(paths, answers[1:], strict=True)}


def _folder(path: str, answer: Answer | None, width: int) -> list[TreeEntry]:
    """The entries of the folder ``path``, read as ``answer``; none when it is no tree."""
    prefix = f"{path}/" if path else ""
    listed = tree_entries(answer.contents, width) if answer and answer.type == "tree" else []
    return [entry(m, sha, prefix + n.decode("utf-8", "surrogateescape")) for m, sha, n in listed]


def files(reader: BatchReader, trees: Sequence[tuple[str, str]]) -> list[TreeEntry]:
    """Every blob and submodule under each ``(folder, tree id)``, recursively, with paths below
    ``folder``, in git's order: the trees of each depth are read in one round trip."""
    raw, width = _all_trees(reader, [sha for _, sha in trees])
    out: list[TreeEntry] = []
    for folder, sha in trees:
        _flatten(raw, sha, f"{folder}/" if folder else "", width, out)
    return out


def _all_trees(reader: BatchReader, tops: list[str]) -> tuple[dict[str, bytes], int]:
    """The raw trees ``tops`` and every tree below them, a depth per round trip; and the width
    of an object id in bytes (20, or 32 in a SHA-256 repository)."""
    raw: dict[str, bytes] = {}
    level = list(dict.fromkeys(tops))
    width = len(level[0]) // 2 if level else 20
    while level:
        raw.update(_raw_trees(reader, level))
        below = (sha for t in level for mode, sha, _ in tree_entries(raw[t], width) if mode == "40000")
        level = [sha for sha in dict.fromkeys(below) if sha not in raw]
    return raw, width


def _raw_trees(reader: BatchReader, shas: list[str]) -> dict[str, bytes]:
    """The raw trees ``shas``, in one round trip; Unavailable for one that is no tree here."""
    raw = {}
    for sha, answer in zip(shas, reader.ask([("contents", sha) for sha in shas]), strict=True):
        if answer is None or answer.type != "tree":
            raise Unavailable(sha)
        raw[sha] = answer.contents
    return raw


def tree_files(reader: BatchReader, treeish: str, path: str | None) -> list[TreeEntry]:
    """Every blob and submodule under the folder ``path`` of ``treeish`` (None: the whole
    tree), recursively, paths from the top; none when ``path`` is no folder. Unavailable when
    ``treeish`` names no tree (``git ls-tree``'s own error then) or ``path`` is not plain."""
    if path is None:
        top = reader.ask([("info", f"{treeish}^{{tree}}")])[0]
        if top is None:
            raise Unavailable(treeish)
        return files(reader, [("", top.sha)])
    require_plain(path)
    parent = path.rpartition("/")[0]
    found = [e for e in folders(reader, treeish, [parent])[parent] if e.path == path and e.type == "tree"]
    return files(reader, [(path, found[0].sha)]) if found else []


def note(reader: BatchReader, notes_ref: str, sha: str) -> bytes | None:
    """The note of the object ``sha`` on ``notes_ref``: the blob its id names in the ref's tree,
    at whatever fan-out git gave it (``ab/cdef...``, ``ab/cd/ef...``); None when it has none."""
    names = [f"{notes_ref}:{_fanned_out(sha, depth)}" for depth in range(4)]
    found = [a for a in reader.ask([("contents", name) for name in names]) if a is not None]
    return next((a.contents for a in found if a.type == "blob"), None)


def _fanned_out(sha: str, depth: int) -> str:
    """``sha`` as a path under ``depth`` folders of two hex digits each (``ab/cd/ef...``)."""
    return "/".join([*(sha[2 * i : 2 * i + 2] for i in range(depth)), sha[2 * depth :]])


def _flatten(raw: dict[str, bytes], sha: str, prefix: str, width: int, out: list[TreeEntry]) -> None:
    for mode, below, name in tree_entries(raw[sha], width):
        path = prefix + name.decode("utf-8", "surrogateescape")
        if mode == "40000":
            _flatten(raw, below, path + "/", width, out)
        else:
            out.append(entry(mode, below, path))


def ls_tree_records(raw: bytes) -> list[TreeEntry]:
    """The entries ``git ls-tree -z`` printed."""
    entries = []
    for record in filter(None, raw.split(b"\0")):
        meta, _, name = record.partition(b"\t")
        mode, kind, sha = meta.decode().split(" ")
        entries.append(TreeEntry(mode, kind, sha, name.decode("utf-8", "surrogateescape")))
    return entries


def batch_records(raw: bytes, count: int) -> list[Answer | None]:
    """The ``count`` answers ``git cat-file --batch`` printed."""
    answers: list[Answer | None] = []
    pos = 0
    for _ in range(count):
        end = raw.index(b"\n", pos)
        header = raw[pos:end].decode().split(" ")
        if len(header) < 3 or header[1] == "missing":
            answers.append(None)
            pos = end + 1
            continue
        size = int(header[2])
        answers.append(Answer(header[0], header[1], raw[end + 1 : end + 1 + size]))
        pos = end + 1 + size + 1
    return answers
