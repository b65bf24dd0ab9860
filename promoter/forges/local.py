"""The embedded ``local`` forge: the platform repo is a local or file:// git repo.

A pull request is the promotion branch ``promoter/<env>``; merging it is a real git merge that
the promoter performs and pushes with compare-and-swap. Statuses on control-plane commits live in
git notes of the control-plane repo, shared through its ``origin`` when it has one, so
``promoter status`` reads them back from the repos alone, in any clone. A PR's labels are notes
of the platform repo itself (a path: every clone writes to the same repo).
"""

from __future__ import annotations

import time
from dataclasses import replace

from promoter.clock import Clock
from promoter.errors import GitError
from promoter.forges.base import Forge, MergeNotReady, PRCheck, PullRequest, status_check
from promoter.forges.notes import NOTES_REF, NoteStatuses
from promoter.forges.notesync import SharedNotes
from promoter.gitcmd import Git
from promoter.model import Environment, Status, StatusState
from promoter.platform.repo import PlatformRepo

#: Where the local forge keeps a promotion PR's labels: notes on its head commit.
LABELS_REF = "refs/notes/promoter-labels"


class LocalForge(Forge):
    name = "local"

    def __init__(
        self,
        control_plane: Git,
        platform: PlatformRepo,
        clock: Clock | None = None,
        *,
        origin: str | None = None,
    ) -> None:
        """``origin``: the control plane's remote, when it has one: the statuses' notes are read
        from it and written to it (DESIGN section 6: any clone makes the same decisions)."""
        shared = SharedNotes(control_plane, NOTES_REF, origin) if origin else None
        self.statuses = NoteStatuses(control_plane, wall=clock.wall if clock else time.time, shared=shared)
        self.platform = platform
        self._remote: Git | None = None

    @property
    def remote(self) -> Git:
        """The platform repository itself (a path: this forge's platform repo is local), where
        its statuses and PR labels are kept; one handle, so one reader, for the run."""
        if self._remote is None:
            self._remote = Git(self.platform.url)
        return self._remote

    def get_statuses(self, commit: str) -> dict[str, Status]:
        return self.statuses.latest(commit)

    def set_status(
        self, commit: str, context: str, state: StatusState, description: str, target_url: str | None = None
    ) -> None:
        # Whole: git notes have no limit, and `status -o json` shows what the gates said in full.
        self.statuses.post(commit, Status(context, state, description, target_url))

    def _url(self, head_branch: str) -> str:
        return f"{self.platform.url}#{head_branch}"

    def platform_statuses(self, sha: str) -> list[Status]:
        return NoteStatuses(self.remote).history(sha)

    def pr_checks(self, pr: PullRequest) -> list[PRCheck]:
        """The statuses posted on the PR's head commit (``promoter report-status``, kept as notes
        of the platform repo), the newest per context; nothing else runs checks here."""
        latest = {s.context: s for s in self.platform_statuses(pr.head_sha)}
        return [status_check(s.context, s.state, s.target_url) for s in latest.values()]

    def find_pr(self, env: Environment, head_branch: str) -> PullRequest | None:
        heads = self.platform.fetch([head_branch, env.gitops_branch])
        head, base = heads[head_branch], heads[env.gitops_branch]
        if head is None:
            return None
        pr = PullRequest(
            env.name,
            head_branch,
            env.gitops_branch,
            head,
            "open",
            self._url(head_branch),
            labels=self._labels(head),
        )
        if base and self.platform.git.is_ancestor(head, base):
            return replace(pr, state="merged", merge_sha=self._merge_commit(head, base))
        return pr

    def _merge_commit(self, head: str, base: str) -> str:
        """The first commit on the base branch's first-parent line that contains ``head``."""
        if head == base:
            return base
        line = self.platform.git.out(
            "rev-list", "--first-parent", "--ancestry-path", operands=[f"{head}..{base}"]
        )
        commits = line.split()
        return commits[-1] if commits else base

    def _labels(self, head: str) -> tuple[str, ...]:
        """A PR's labels: the lines of its head commit's note in ``refs/notes/promoter-labels``
        of the platform repo (``git notes --ref=promoter-labels add -m promoter/hold <sha>``)."""
        note = self.remote.note(LABELS_REF, head)
        text = note.decode("utf-8", "replace") if note is not None else ""
        return tuple(line.strip() for line in text.splitlines() if line.strip())

    def open_pr(
        self,
        env: Environment,
        head_branch: str,
        head_sha: str,
        title: str,
        body: str,
        labels: tuple[str, ...] = (),
    ) -> PullRequest:
        # The branch was pushed by the orchestrator; on this forge it is the PR.
        pr = self.find_pr(env, head_branch)
        if pr is None or pr.head_sha != head_sha:
            raise GitError(f"branch {head_branch} is not at {head_sha[:12]}; it moved")
        missing = [label for label in labels if label not in pr.labels]
        if missing:  # in the labels' notes, where a person puts promoter/hold
            self.remote.run(
                "notes", f"--ref={LABELS_REF}", "append", "-m", "\n".join(missing), operands=[head_sha]
            )
            pr = replace(pr, labels=(*pr.labels, *missing))
        return pr

    def refresh_pr(self, pr: PullRequest) -> PullRequest:
        heads = self.platform.fetch([pr.head_branch, pr.base_branch])
        head, base = heads[pr.head_branch], heads[pr.base_branch]
        if base and self.platform.git.is_ancestor(pr.head_sha, base):
            return PullRequest(
                pr.environment,
                pr.head_branch,
                pr.base_branch,
                pr.head_sha,
                "merged",
                pr.url,
                None,
                self._merge_commit(pr.head_sha, base),
            )
        if head != pr.head_sha:  # deleted or replaced without being merged
            return PullRequest(
                pr.environment, pr.head_branch, pr.base_branch, head or pr.head_sha, "closed", pr.url
            )
        return pr

    def merge_pr(self, pr: PullRequest, expected_head: str, message: str) -> str:
        now = self.refresh_pr(pr)
        if now.state == "merged" and now.merge_sha:
            return now.merge_sha
        if now.state == "closed" or now.head_sha != expected_head:
            raise MergeNotReady(f"the head of {pr.head_branch} moved; not merging unseen content")
        base = self.platform.fetch([pr.base_branch])[pr.base_branch]
        if base is None or base == expected_head:
            merged = expected_head
        else:
            merged = self.platform.merge(base, expected_head, message)
        self.platform.push({pr.base_branch: (base, merged)})
        return merged
