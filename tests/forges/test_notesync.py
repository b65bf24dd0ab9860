"""The statuses' notes shared through the control plane's origin: what one clone writes, a fresh
clone reads; two clones that write at once both land (compare-and-swap, then a merge that keeps
every line of both); notes a clone kept to itself before are merged, never dropped."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest

from promoter.errors import GitError
from promoter.forges.notes import NOTES_REF, NoteStatuses
from promoter.forges.notesync import SharedNotes, tracking_ref, union
from promoter.gitcmd import Git
from promoter.gitremote import fetch_ref
from promoter.model import Status

T0 = 1_800_000_000.0


def clone(origin: Path, path: Path) -> Git:
    subprocess.run(["git", "clone", "-q", str(origin), str(path)], check=True)
    return Git(path)


@pytest.fixture
def origin(tmp_path: Path) -> tuple[Path, str]:
    """A bare control plane with one commit on main: the origin, and the commit."""
    origin = tmp_path / "cp.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    seed = tmp_path / "seed"
    subprocess.run(["git", "clone", "-q", str(origin), str(seed)], check=True)
    subprocess.run(["git", "-C", str(seed), "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    subprocess.run(["git", "-C", str(seed), "push", "-q", "origin", "main"], check=True)
    return origin, Git(seed).out("rev-parse", "HEAD")


def statuses(git: Git, at: float = T0, *, shared: bool = True) -> NoteStatuses:
    """Statuses of one clone, shared through its origin, stamped from ``at`` on, a second apart."""
    times = iter(range(10_000))
    return NoteStatuses(
        git,
        wall=lambda: at + next(times),
        shared=SharedNotes(git, NOTES_REF, "origin") if shared else None,
    )


def lines(repo: Path, commit: str) -> list[tuple[str, str]]:
    """(context, description) of each line of the note on ``commit``, in order."""
    text = Git(repo).note(NOTES_REF, commit) or b""
    parsed = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [(p["context"], p["description"]) for p in parsed]


def test_a_fresh_clone_reads_what_another_clone_wrote(tmp_path: Path, origin: tuple[Path, str]) -> None:
    remote, x = origin
    a = clone(remote, tmp_path / "a")
    statuses(a).post(x, Status("promoter/dev", "success", "healthy at 1234"))
    assert lines(remote, x) == [("promoter/dev", "healthy at 1234")]  # pushed by the promoter itself

    b = clone(remote, tmp_path / "b")  # git clone fetches no notes
    assert Git(b.path).note(NOTES_REF, x) is None
    assert statuses(b).latest(x)["promoter/dev"].state == "success"
    assert b.rev_parse(tracking_ref(NOTES_REF, "origin")) == Git(remote).rev_parse(NOTES_REF)


def test_two_clones_that_race_both_land(tmp_path: Path, origin: tuple[Path, str]) -> None:
    """Both read before either writes; the second push's lease is stale: it reads again, merges
    and pushes again. Every line is kept, in the order of their times, in every clone."""
    remote, x = origin
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    mine, theirs = statuses(a, T0), statuses(b, T0 + 0.5)
    assert mine.latest(x) == theirs.latest(x) == {}  # both have read origin: nothing yet
    mine.post(x, Status("promoter/dev", "pending", "PR open"))  # T0
    theirs.post(x, Status("promoter/qa", "pending", "PR open"))  # T0 + 0.5: lost the race, landed
    mine.post(x, Status("promoter/dev", "success", "healthy"))  # T0 + 1: lost the race too

    expected = [
        ("promoter/dev", "PR open"),
        ("promoter/qa", "PR open"),
        ("promoter/dev", "healthy"),
    ]
    assert lines(remote, x) == expected
    assert lines(a.path, x) == expected
    c = clone(remote, tmp_path / "c")
    assert {k: s.state for k, s in statuses(c).latest(x).items()} == {
        "promoter/dev": "success",
        "promoter/qa": "pending",
    }
    parents = Git(remote).out("rev-list", "--parents", "-n", "1", operands=[NOTES_REF]).split()
    assert len(parents) == 3  # a merge: both histories kept


def test_notes_kept_in_one_clone_before_are_merged_not_dropped(
    tmp_path: Path, origin: tuple[Path, str]
) -> None:
    """A clone that an older promoter wrote notes into (never pushed) and a teammate's statuses
    on origin: the first shared read merges both, and the next write pushes both."""
    remote, x = origin
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    statuses(a, shared=False).post(x, Status("promoter/dev", "success", "old, local only"))
    statuses(b, T0 + 5).post(x, Status("promoter/qa", "success", "from b"))

    shared = statuses(a, T0 + 10)
    assert {k: s.description for k, s in shared.latest(x).items()} == {
        "promoter/dev": "old, local only",
        "promoter/qa": "from b",
    }
    shared.post(x, Status("promoter/prod", "pending", "PR open"))
    assert lines(remote, x) == [
        ("promoter/dev", "old, local only"),
        ("promoter/qa", "from b"),
        ("promoter/prod", "PR open"),
    ]


def test_a_read_another_run_in_the_clone_has_not_merged_yet_is_merged_before_the_push(
    tmp_path: Path, origin: tuple[Path, str]
) -> None:
    """Another run in the same clone fetched the remote's notes (the tracking ref moved) and has
    not merged them yet: a push now, with that lease, would drop them from the remote."""
    remote, x = origin
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    mine = statuses(a, T0 + 10)
    assert mine.latest(x) == {}  # read: nothing on origin yet
    statuses(b, T0).post(x, Status("promoter/qa", "success", "from b"))
    fetch_ref(a, "origin", NOTES_REF, tracking_ref(NOTES_REF, "origin"))  # the other run's read
    mine.post(x, Status("promoter/dev", "pending", "from a"))
    assert lines(remote, x) == [("promoter/qa", "from b"), ("promoter/dev", "from a")]


def test_clones_writing_at_once_lose_nothing(tmp_path: Path, origin: tuple[Path, str]) -> None:
    """Two clones post eight statuses each at the same time, in threads: every push is a
    compare-and-swap, every lost race a merge; origin ends with all sixteen lines, each clone's in
    its own order."""
    remote, x = origin
    clones = [clone(remote, tmp_path / name) for name in ("a", "b")]
    errors: list[BaseException] = []

    def write(git: Git, name: str) -> None:
        try:
            mine = statuses(git)
            for i in range(8):
                mine.post(x, Status(f"promoter/{name}", "pending", f"{name} {i}"))
        except BaseException as err:  # reported by the test, not lost in the thread
            errors.append(err)

    threads = [threading.Thread(target=write, args=(git, n)) for git, n in zip(clones, "ab", strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    found = [d for _, d in lines(remote, x)]
    for name in "ab":
        assert [d for d in found if d.startswith(name)] == [f"{name} {i}" for i in range(8)]
    assert len(found) == 16


def test_notes_of_many_commits_merge_at_any_fan_out(tmp_path: Path, origin: tuple[Path, str]) -> None:
    """Hundreds of notes: git keeps them in fan-out folders (``ab/cdef...``); the merge reads
    both sides' and writes one tree that git reads and appends to."""
    remote, _ = origin
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    objects = _noted_commits(b, 300, "from b")
    Git(b.path).run("push", "-q", operands=["origin", f"{NOTES_REF}:{NOTES_REF}"])
    _noted_commits(a, 300, "from a")  # the same 300 commits, noted in a alone
    assert len(Git(a.path).out("ls-tree", operands=[NOTES_REF]).split("\n")) < 300  # fanned out

    SharedNotes(a, NOTES_REF, "origin").fetch()
    for obj in objects[::50]:
        assert Git(a.path).note(NOTES_REF, obj) == b"from a\n\nfrom b\n"
    a.run("notes", f"--ref={NOTES_REF}", "append", "-m", "more", operands=[objects[0]])
    assert Git(a.path).note(NOTES_REF, objects[0]) == b"from a\n\nfrom b\n\nmore\n"
    assert len(Git(a.path).out("notes", f"--ref={NOTES_REF}", "list").splitlines()) == 300


def _noted_commits(git: Git, count: int, text: str) -> list[str]:
    """``count`` commits (the same in every clone: same content, same times), each with the note
    ``text``, in one fast-import."""
    who = b"committer t <t@x> 0 +0000\n"
    stream = bytearray()
    for i in range(1, count + 1):
        stream += b"commit refs/heads/many\nmark :%d\n%sdata %d\n%d\n" % (i, who, len(str(i)), i)
    stream += b"commit %s\n%sdata 0\n" % (NOTES_REF.encode(), who)
    note = text.encode() + b"\n"
    for i in range(1, count + 1):
        stream += b"N inline :%d\ndata %d\n%s" % (i, len(note), note)
    stream += b"\n" + b"".join(b"get-mark :%d\n" % i for i in range(1, count + 1))
    done = subprocess.run(
        ["git", "-C", str(git.path), "fast-import", "--quiet"],
        input=bytes(stream),
        capture_output=True,
        check=True,
    )
    return done.stdout.decode().split()


def test_a_remote_that_cannot_be_read_is_an_error_naming_it(tmp_path: Path, origin: tuple[Path, str]) -> None:
    remote, x = origin
    a = clone(remote, tmp_path / "a")
    a.run("remote", "set-url", operands=["origin", str(tmp_path / "gone.git")])
    with pytest.raises(GitError, match="cannot read refs/notes/promoter from origin"):
        statuses(a).latest(x)


def test_the_union_of_two_notes() -> None:
    def line(context: str, at: str, what: str) -> bytes:
        return json.dumps(
            {"context": context, "created_at": at, "description": what}, sort_keys=True
        ).encode()

    shared = line("promoter/dev", "2027-01-01T00:00:00Z", "PR open")
    a1 = line("promoter/dev", "2027-01-01T00:00:05Z", "a1")
    a2 = line("promoter/dev", "2027-01-01T00:00:03Z", "a2, its clock behind")  # kept after a1
    b1 = line("promoter/qa", "2027-01-01T00:00:04Z", "b1")
    tie = line("promoter/qa", "2027-01-01T00:00:05Z", "b2, a tie")
    mine = b"\n\n".join([shared, a1, a2]) + b"\n"
    theirs = b"\n\n".join([shared, b1, tie, a1, b"a line added by hand"]) + b"\n"
    merged = union(mine, theirs).split(b"\n\n")
    assert merged == [shared, b1, a1, a2, tie, b"a line added by hand\n"]
    assert union(mine, mine) == mine
