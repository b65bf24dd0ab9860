"""Notes shared through a remote (DESIGN section 6): the statuses one clone of the control plane
writes are the statuses a teammate's fresh clone reads, so both make the same decisions.

The remote's notes ref is fetched once per run into a ref of this clone's own
(``refs/promoter/remotes/<remote>/notes/promoter``: what the remote had when last read) and
merged into the local notes; after each note written, the local notes are pushed with a
compare-and-swap on what was last read (``--force-with-lease=<ref>:<old>``). A writer that
lost the race reads again, merges, and pushes again, a bounded number of times, after a short
random pause (two writers that lost to each other do not meet again at once).

A note of the promoter is a list of JSON lines, only ever appended to, so a merge keeps every
line of both sides: where the two sides' notes on one commit differ, the lines they share come
first, then the lines only one side has, in the order of their times (``created_at``; this
clone's first on a tie), each side's own order kept. Notes a clone wrote before it shared them
(an older promoter never pushed them) are merged the same way, never dropped.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable, Mapping

from promoter.errors import GitError
from promoter.gitcmd import Git
from promoter.gitremote import fetch_ref, push_ref

ATTEMPTS = 10
PAUSE = 0.05  # seconds, times the attempt: at most 2.25 s in all, only when others write too
_OBJECT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_ABSENT = "0" * 40


def tracking_ref(ref: str, remote: str) -> str:
    """Where this clone keeps ``remote``'s ``ref`` as it last read it."""
    return f"refs/promoter/remotes/{remote}/{ref.removeprefix('refs/')}"


class SharedNotes:
    """The notes ref ``ref`` of the repository ``git``, shared through ``remote`` (``auth``: the
    environment that authenticates git to it, none for git's own credentials)."""

    def __init__(
        self, git: Git, ref: str, remote: str, auth: Callable[[], Mapping[str, str]] | None = None
    ) -> None:
        self.git = git
        self.ref = ref
        self.remote = remote
        self.auth = auth
        self.tracking = tracking_ref(ref, remote)
        self._read = False

    def fetch(self, *, again: bool = False) -> None:
        """The remote's notes, merged into this clone's: read once per run unless ``again``."""
        if self._read and not again:
            return
        fetch_ref(self.git, self.remote, self.ref, self.tracking, self.auth() if self.auth else None)
        self._read = True
        self._merge_in()

    def push(self) -> None:
        """This clone's notes onto the remote, if it moved only as this clone last read it; else
        read again, merge, and push again."""
        self.fetch()
        for attempt in range(ATTEMPTS):
            ours, theirs = self.git.rev_parse(self.ref), self.git.rev_parse(self.tracking)
            if ours is None or ours == theirs:
                return
            if theirs is not None and not self.git.is_ancestor(theirs, ours):
                self._merge_in()  # another run in this clone read the remote and has not merged yet
                continue
            if push_ref(self.git, self.remote, ours, self.ref, theirs, self.auth() if self.auth else None):
                self.git.run("update-ref", operands=[self.tracking, ours])
                return
            time.sleep(random.uniform(0, PAUSE * attempt))  # a race lost: others write now too
            self.fetch(again=True)
        raise GitError(
            f"{self.ref} on {self.remote} kept moving while this run wrote it; "
            "the statuses are kept in this clone, and its next run pushes them"
        )

    def _merge_in(self) -> None:
        """The remote's notes as last read, merged into the local ref (compare-and-swap: another
        run in this clone may append at the same time)."""
        for _ in range(ATTEMPTS):
            ours, theirs = self.git.rev_parse(self.ref), self.git.rev_parse(self.tracking)
            if theirs is None or theirs == ours or (ours and self.git.is_ancestor(theirs, ours)):
                return
            if ours is None or self.git.is_ancestor(ours, theirs):
                new = theirs
            else:
                new = merge_notes(self.git, ours, theirs, f"Notes merged by promoter from {self.remote}")
            moved = self.git.run(
                "update-ref", "-m", "promoter", operands=[self.ref, new, ours or _ABSENT], check=False
            )
            if moved.returncode == 0:
                return
        raise GitError(f"{self.ref} kept moving while this run merged {self.remote}'s into it; try again")


def merge_notes(git: Git, ours: str, theirs: str, message: str) -> str:
    """A notes commit holding both sides' notes (its parents ``ours`` and ``theirs``), each note
    that differs the union of both sides' lines."""
    mine, other = _notes(git, ours), _notes(git, theirs)
    differ = [obj for obj, blob in other.items() if obj in mine and mine[obj] != blob]
    texts = git.read_blobs([mine[obj] for obj in differ] + [other[obj] for obj in differ])
    merged = {**other, **mine}
    for obj in differ:
        text = union(texts[mine[obj]], texts[other[obj]])
        merged[obj] = git.out("hash-object", "-w", "--stdin", input=text)
    # flat: git reads a notes tree at any fan-out, and writes its own at the next note
    listing = "".join(f"100644 blob {blob}\t{obj}\n" for obj, blob in sorted(merged.items()))
    tree = git.out("mktree", input=listing.encode())
    return git.out("commit-tree", "-p", ours, "-p", theirs, "-m", message, operands=[tree])


def _notes(git: Git, commit: str) -> dict[str, str]:
    """The annotated object -> note blob of a notes commit, whatever its fan-out (``ab/cdef...``)."""
    out = {}
    for entry in git.ls_tree(commit):
        obj = entry.path.replace("/", "")
        if entry.type == "blob" and _OBJECT.fullmatch(obj):
            out[obj] = entry.sha
    return out


def union(mine: bytes, theirs: bytes) -> bytes:
    """Both notes' lines: the lines they start with in common, then the rest of each in the
    order of their times, this side's first on a tie; a line both have is kept once. Lines are
    separated by a blank line, as ``git notes append`` writes them."""
    ours = [line for line in mine.splitlines() if line.strip()]
    other = [line for line in theirs.splitlines() if line.strip()]
    shared = 0
    while shared < min(len(ours), len(other)) and ours[shared] == other[shared]:
        shared += 1
    seen = set(ours)
    lines = ours[:shared] + _by_time(ours[shared:], [line for line in other[shared:] if line not in seen])
    return b"\n\n".join(lines) + b"\n"


def _by_time(first: list[bytes], second: list[bytes]) -> list[bytes]:
    """Two lists of lines, each in its own order, merged by their times: ``second``'s next line
    goes before ``first``'s only when both have a time and it is earlier."""
    out: list[bytes] = []
    i = j = 0
    while i < len(first) and j < len(second):
        a, b = _time(first[i]), _time(second[j])
        if a is not None and b is not None and b < a:
            out.append(second[j])
            j += 1
        else:
            out.append(first[i])
            i += 1
    return out + first[i:] + second[j:]


def _time(line: bytes) -> str | None:
    """A status line's ``created_at`` (``2026-01-01T00:30:00Z`` sorts as it reads); None when the
    line is not one (a note a person added by hand)."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    stamp = value.get("created_at") if isinstance(value, dict) else None
    return stamp if isinstance(stamp, str) else None
