"""Change control's records in git (DESIGN section 13): a JSON document on a ref of its own in
the control-plane repo (``refs/promoter/holds``, ``refs/promoter/notifications``), each change a
commit whose message says who did what, so ``git log refs/promoter/holds`` is the audit trail.

A write is a compare-and-swap like every other push of the promoter: the new commit's parent is
the tip that was read, and the ref moves only if it is still there (``--force-with-lease`` on
the remote, ``update-ref`` with the old value in a repo without one); a writer that lost the
race reads again and applies its change to what won.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from promoter.errors import GitError
from promoter.gitcmd import Git
from promoter.gitremote import fetch_ref, push_ref

DOCUMENT = "record.json"
ATTEMPTS = 5
#: A change of the document: the new document and the commit message, or None to leave it.
Change = Callable[[dict[str, Any]], tuple[dict[str, Any], str] | None]


class Records:
    """One JSON document on ``ref`` of a repository, read from and written to ``remote`` when
    there is one (``auth``: the environment that authenticates git to it)."""

    def __init__(
        self,
        git: Git,
        ref: str,
        remote: str | None = None,
        auth: Callable[[], Mapping[str, str]] | None = None,
    ) -> None:
        self.git = git
        self.ref = ref
        self.remote = remote
        self.auth = auth
        self._read: tuple[str | None, dict[str, Any]] | None = None

    def read(self, *, fresh: bool = False) -> dict[str, Any]:
        """The document (empty when the ref does not exist yet), read once unless ``fresh``."""
        if self._read is None or fresh:
            self._read = self._load()
        return self._read[1]

    def update(self, change: Change, author: str = "promoter") -> dict[str, Any] | None:
        """Apply ``change`` to the newest document and record it; the document written, or None
        when ``change`` left it as it was."""
        for attempt in range(ATTEMPTS):
            tip, doc = self._load() if attempt or self._read is None else self._read
            self._read = (tip, doc)  # the newest known, also when the change leaves it as it is
            changed = change(json.loads(json.dumps(doc)))
            if changed is None:
                return None
            new_doc, message = changed
            commit = self._commit(tip, new_doc, message, author)
            if self._swap(tip, commit):
                self._read = (commit, new_doc)
                return new_doc
        raise GitError(f"{self.ref} kept moving while this run wrote it; try again")

    def _env(self) -> Mapping[str, str] | None:
        return self.auth() if self.auth else None

    def _load(self) -> tuple[str | None, dict[str, Any]]:
        if self.remote is not None:
            fetch_ref(self.git, self.remote, self.ref, self.ref, self._env())
        tip = self.git.commit_of(self.ref)
        if tip is None:
            return None, {}
        raw = self.git.read_file(tip, DOCUMENT)
        try:
            doc = json.loads(raw or b"{}")
        except ValueError:
            doc = {}
        return tip, doc if isinstance(doc, dict) else {}

    def _commit(self, tip: str | None, doc: dict[str, Any], message: str, author: str) -> str:
        text = json.dumps(doc, indent=2, sort_keys=True) + "\n"
        blob = self.git.out("hash-object", "-w", "--stdin", input=text.encode())
        tree = self.git.out("mktree", input=f"100644 blob {blob}\t{DOCUMENT}\n".encode())
        parents = ["-p", tip] if tip else []
        who = {"GIT_AUTHOR_NAME": author[:200] or "promoter"}
        proc = self.git.run(
            "commit-tree", *parents, "-F", "-", operands=[tree], input=message.encode(), env=who
        )
        return proc.stdout.decode().strip()

    def _swap(self, old: str | None, new: str) -> bool:
        """Move the ref from ``old`` to ``new`` if nobody moved it since; False if someone did."""
        if self.remote is None:
            proc = self.git.run(
                "update-ref", "-m", "promoter", operands=[self.ref, new, old or "0" * 40], check=False
            )
            return proc.returncode == 0
        if not push_ref(self.git, self.remote, new, self.ref, old, self._env()):
            return False
        self.git.run("update-ref", operands=[self.ref, new])
        return True
