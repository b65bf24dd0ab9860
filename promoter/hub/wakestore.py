"""The waker's record in the database (``wake.py``), so that however many hub processes serve
one database, one of them wakes each control plane, once per verdict change (docs/hub.md#waking-the-promotion):

- ``wakers``, a row per control plane: a **lease** (``holder`` until ``held_until``) that one
  process holds at a time and renews while it runs; ``watching``, 0 until the first waker
  learned the verdicts; and the wake it has yet to send (``Pending``).
- ``wake_verdicts``: the verdict last seen of each commit it watches.

Only the lease's holder writes them, and every write names the holder in its transaction
(``UPDATE wakers ... WHERE holder = ?``), which on PostgreSQL locks the row until the commit
(SQLite takes its one write lock): a process that lost the lease, having stalled past
``held_until`` while another took it over, writes nothing. A process that takes the lease over
reads what the last one saw, and the wake it left, and goes on from there.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from promoter.hub.db import Database, Tx

Key = tuple[str, str]  # (environment, platform commit)


@dataclass(frozen=True)
class Pending:
    """The wake still to send: how many verdict changes it carries, the newest one, when it is
    due (None: nothing to send) and how many attempts failed."""

    changes: int = 0
    environment: str = ""
    sha: str = ""
    verdict: str = ""
    due: float | None = None
    attempts: int = 0


@dataclass(frozen=True)
class Watch:
    """What the waker of a control plane saw last: whether it watched before, the verdicts, the
    pending wake."""

    watching: bool = False
    known: Mapping[Key, str] = field(default_factory=dict)
    pending: Pending = Pending()


def holder_id() -> str:
    """A hub process's name in ``wakers.holder``: the host and pid an operator can find, and a
    random part so a restarted process with the same pid is another holder."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def lead(db: Database, repo: str, holder: str, now: float, lease: float) -> bool:
    """Whether ``holder`` wakes ``repo`` now: it holds the lease (renewed once half of it is
    gone), or took it (nobody held it, or its holder let it run out). A read alone while
    another holds it, or while half of its own is left."""
    with db.transaction(write=False) as tx:
        row = tx.one("SELECT holder, held_until FROM wakers WHERE repo = ?", (repo,))
    if row is not None:
        mine, left = row[0] == holder, float(row[1]) - now
        if mine and left > lease / 2:
            return True
        if not mine and left >= 0:
            return False
    with db.transaction() as tx:
        taken = tx.rows(
            "INSERT INTO wakers (repo, holder, held_until) VALUES (?, ?, ?) ON CONFLICT (repo) DO UPDATE"
            " SET holder = excluded.holder, held_until = excluded.held_until"
            " WHERE wakers.holder = excluded.holder OR wakers.held_until < ? RETURNING holder",
            (repo, holder, now + lease, now),
        )
    return bool(taken)


def release(db: Database, repo: str, holder: str) -> None:
    """Let the lease go (the process stops), so another process takes it at its next tick."""
    with db.transaction() as tx:
        tx.run("UPDATE wakers SET held_until = 0 WHERE repo = ? AND holder = ?", (repo, holder))


def watch_of(tx: Tx, repo: str) -> Watch:
    """What the waker of ``repo`` saw last (nothing yet: not watching)."""
    row = tx.one(
        "SELECT watching, changes, environment, sha, verdict, due, attempts FROM wakers WHERE repo = ?",
        (repo,),
    )
    if row is None:
        return Watch()
    known = {
        (str(e), str(s)): str(v)
        for e, s, v in tx.rows("SELECT environment, sha, verdict FROM wake_verdicts WHERE repo = ?", (repo,))
    }
    due = None if row[5] is None else float(row[5])
    pending = Pending(int(row[1]), str(row[2]), str(row[3]), str(row[4]), due, int(row[6]))
    return Watch(bool(row[0]), known, pending)


def save(
    db: Database,
    repo: str,
    holder: str,
    pending: Pending,
    seen: Mapping[Key, str] | None = None,
    gone: Sequence[Key] = (),
) -> bool:
    """Write the pending wake, and the verdicts ``seen`` (new or changed) and ``gone`` (no longer
    watched), as the holder of the lease; False, writing nothing, when another process holds it."""
    with db.transaction() as tx:
        held = tx.rows(
            "UPDATE wakers SET watching = 1, changes = ?, environment = ?, sha = ?, verdict = ?, due = ?,"
            " attempts = ? WHERE repo = ? AND holder = ? RETURNING repo",
            (
                pending.changes,
                pending.environment,
                pending.sha,
                pending.verdict,
                pending.due,
                pending.attempts,
                repo,
                holder,
            ),
        )
        if not held:
            return False
        tx.run_many(
            "INSERT INTO wake_verdicts (repo, environment, sha, verdict) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (repo, environment, sha) DO UPDATE SET verdict = excluded.verdict",
            [(repo, e, s, v) for (e, s), v in (seen or {}).items()],
        )
        tx.run_many(
            "DELETE FROM wake_verdicts WHERE repo = ? AND environment = ? AND sha = ?",
            [(repo, e, s) for e, s in gone],
        )
    return True
