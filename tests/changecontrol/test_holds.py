"""Holds on a ref of the control-plane repo: recorded with who, when, why and until when, in git
history, written with a compare-and-swap on the remote, and read back by any clone."""

from __future__ import annotations

import subprocess
from pathlib import Path

from promoter.changecontrol.holds import HOLDS_REF, Hold, HoldBook
from promoter.changecontrol.records import Records
from promoter.gitcmd import Git

NOW = 1_800_000_000.0


def clone(origin: Path, path: Path) -> Git:
    subprocess.run(["git", "clone", "-q", str(origin), str(path)], check=True)
    return Git(path)


def repos(tmp_path: Path) -> tuple[Path, Git, Git]:
    origin = tmp_path / "cp.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    return origin, clone(origin, tmp_path / "a"), clone(origin, tmp_path / "b")


def test_a_hold_is_pushed_and_seen_by_another_clone_until_released(tmp_path: Path) -> None:
    origin, a, b = repos(tmp_path)
    mine = HoldBook(Records(a, HOLDS_REF, "origin"))
    assert mine.hold(Hold("prod", None, "incident 4711", "alice", NOW, NOW + 3600))
    theirs = HoldBook(Records(b, HOLDS_REF, "origin"))
    [held] = theirs.holds(NOW + 60)
    assert (held.environment, held.by, held.reason, held.until) == (
        "prod",
        "alice",
        "incident 4711",
        NOW + 3600,
    )
    assert (
        held.describe()
        == "held by alice since 2027-01-15T08:00:00Z until 2027-01-15T09:00:00Z: incident 4711"
    )
    assert theirs.holds(NOW + 3600) == []  # its until ends it by itself
    released = theirs.release("prod", None, "bob", NOW + 60)
    assert [h.reason for h in released] == ["incident 4711"]
    assert HoldBook(Records(a, HOLDS_REF, "origin")).holds(NOW + 60) == []
    log = Git(origin).out("log", "--format=%an|%s", operands=[HOLDS_REF])
    assert log.splitlines() == [
        "bob|release prod",
        "alice|hold prod until 2027-01-15T09:00:00Z: incident 4711",
    ]


def test_two_writers_that_race_both_land(tmp_path: Path) -> None:
    """The second writer's push is refused (its lease is stale); it reads again and applies its
    change to what won: both holds are there."""
    _, a, b = repos(tmp_path)
    first, second = HoldBook(Records(a, HOLDS_REF, "origin")), HoldBook(Records(b, HOLDS_REF, "origin"))
    assert second.holds(NOW) == []  # read before the first writes
    first.hold(Hold("prod", None, "freeze", "alice", NOW))
    second.hold(Hold("qa", "canary", "drained", "bob", NOW))
    found = HoldBook(Records(a, HOLDS_REF, "origin")).holds(NOW)
    assert sorted((h.environment, h.wave) for h in found) == [("prod", None), ("qa", "canary")]


def test_a_repo_without_a_remote_keeps_them_itself(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path / "solo")], check=True)
    git = Git(tmp_path / "solo")
    book = HoldBook(Records(git, HOLDS_REF))
    book.hold(Hold("prod", None, "freeze", "alice", NOW))
    assert not book.hold(Hold("prod", None, "freeze", "alice", NOW))  # the same hold: nothing new
    book.override("held by alice", "prod", "a" * 40, "carol", "hotfix 12", NOW)
    doc = Records(git, HOLDS_REF).read()
    assert doc["overrides"][0] == {
        "at": "2027-01-15T08:00:00Z",
        "by": "carol",
        "commit": "a" * 40,
        "passed": "held by alice",
        "reason": "hotfix 12",
        "where": "prod",
    }
    assert (
        git.out("log", "-1", "--format=%s", operands=[HOLDS_REF])
        == f"override prod for {'a' * 12}: hotfix 12"
    )


def test_a_wave_hold_stops_that_wave_and_the_whole_environment_only() -> None:
    hold = Hold("prod", "canary", "drained", "bob", NOW)
    assert hold.covers("prod", "canary") and hold.covers("prod", "")
    assert not hold.covers("prod", "rest") and not hold.covers("qa", "canary")
