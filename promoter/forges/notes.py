"""Commit statuses kept in git notes (``refs/notes/promoter``), so they travel with the repo.

Each note is a list of JSON lines, one per status posted on that commit; the newest line of
a context is its current state, as on GitHub. Shared through a remote (``shared``), the notes are
read from it before the first status is read or written and pushed to it after each status
written (``promoter.forges.notesync``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict

from promoter.clock import iso
from promoter.errors import GitError
from promoter.forges.notesync import SharedNotes
from promoter.gitcmd import Git
from promoter.model import STATUS_STATES, Status

NOTES_REF = "refs/notes/promoter"
STATES = STATUS_STATES


class NoteStatuses:
    """Statuses on the commits of one local repository."""

    def __init__(
        self,
        git: Git,
        ref: str = NOTES_REF,
        wall: Callable[[], float] = time.time,
        shared: SharedNotes | None = None,
    ) -> None:
        """``wall``: the time of day that stamps each status (the run's clock), which the
        clocks spanning runs read back (a bake's start, a gate's timeout); ``shared``: the
        remote the notes are shared through, if any."""
        self.git = git
        self.ref = ref
        self.wall = wall
        self.shared = shared

    def history(self, commit: str) -> list[Status]:
        if self.shared is not None:
            self.shared.fetch()
        note = self.git.note(self.ref, commit)
        if note is None:
            return []
        out = []
        for line in note.decode("utf-8", "replace").splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                raw = json.loads(line)
                out.append(
                    Status(
                        **{
                            k: raw.get(k)
                            for k in ("context", "state", "description", "target_url", "created_at")
                        }
                    )
                )
            except (ValueError, TypeError):
                continue  # a line a human added by hand; not ours to judge
        return out

    def latest(self, commit: str) -> dict[str, Status]:
        """The current status per context (the last one posted wins)."""
        return {s.context: s for s in self.history(commit)}

    def post(self, commit: str, status: Status) -> Status:
        if status.state not in STATES:
            raise ValueError(f"state must be one of {', '.join(STATES)}")
        stamped = Status(**{**asdict(status), "created_at": status.created_at or iso(self.wall())})
        line = json.dumps(asdict(stamped), sort_keys=True)
        if self.shared is not None:
            self.shared.fetch()
        # The notes ref is locked while another writer appends: try again for a moment (20
        # tries, waiting 0.05 s longer each time: about ten seconds in all).
        add = ("notes", f"--ref={self.ref}", "append", "--allow-empty", "-m", line)
        for attempt in range(1, 21):
            proc = self.git.run(*add, operands=[commit], check=False)
            if proc.returncode == 0 or attempt == 20:
                break
            time.sleep(0.05 * attempt)
        if proc.returncode == 0:
            if self.shared is not None:
                self.shared.push()
            return stamped
        detail = proc.stderr.decode(errors="replace").strip()
        raise GitError(f"cannot write a status note on {commit[:12]} in {self.git.path}: {detail}")
