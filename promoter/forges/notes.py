"""Commit statuses kept in git notes (``refs/notes/promoter``), so they travel with the repo.

Each note is a list of JSON lines, one per status posted on that commit; the newest line of
a context is its current state, as on GitHub.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from datetime import UTC, datetime

from promoter.errors import GitError
from promoter.gitcmd import Git
from promoter.model import STATUS_STATES, Status

NOTES_REF = "refs/notes/promoter"
STATES = STATUS_STATES


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class NoteStatuses:
    """Statuses on the commits of one local repository."""

    def __init__(self, git: Git, ref: str = NOTES_REF) -> None:
        self.git = git
        self.ref = ref

    def history(self, commit: str) -> list[Status]:
        proc = self.git.run("notes", f"--ref={self.ref}", "show", operands=[commit], check=False)
        if proc.returncode != 0:
            return []
        out = []
        for line in proc.stdout.decode("utf-8", "replace").splitlines():
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
        stamped = Status(**{**asdict(status), "created_at": status.created_at or now_iso()})
        line = json.dumps(asdict(stamped), sort_keys=True)
        for attempt in range(20):  # notes refs lock; another writer may hold it for a moment
            proc = self.git.run(
                "notes",
                f"--ref={self.ref}",
                "append",
                "--allow-empty",
                "-m",
                line,
                operands=[commit],
                check=False,
            )
            if proc.returncode == 0:
                return stamped
            time.sleep(0.05 * (attempt + 1))
        raise GitError(
            f"cannot write a status note on {commit[:12]} in {self.git.path}: {proc.stderr.decode(errors='replace').strip()}"
        )
