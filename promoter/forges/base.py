"""What the orchestrator needs from a forge: statuses on control-plane commits, and pull
requests (open, update, merge, observe) on the platform repo. Git content goes through
``promoter.platform.PlatformRepo``; a forge never renders or decides."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal

from promoter.model import Environment, Status, StatusState, promotion_branch

PRState = Literal["open", "merged", "closed"]
CheckState = Literal["success", "failure", "pending"]
CheckKind = Literal["check-run", "status"]


@dataclass(frozen=True)
class PullRequest:
    environment: str
    head_branch: str
    base_branch: str
    head_sha: str
    state: PRState
    url: str
    number: int | None = None
    merge_sha: str | None = None
    # a hold label holds the environment (docs/change-control.md); an observation, not identity
    labels: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class PRCheck:
    """One check on a promotion PR's head commit: a check run (GitHub's Checks API) or a commit
    status, judged ``success``, ``failure`` or ``pending``; ``detail`` is what the forge said (a
    check run's conclusion or status, a status's state), ``app`` who ran a check run."""

    name: str
    kind: CheckKind
    state: CheckState
    detail: str
    url: str | None = None
    app: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "state": self.state,
            "detail": self.detail,
            "url": self.url,
            "app": self.app or None,
        }


def status_check(context: str, state: str, url: str | None) -> PRCheck:
    """A commit status as a PR check: ``failure`` and ``error`` fail, ``pending`` waits."""
    judged: CheckState = "success" if state == "success" else "pending" if state == "pending" else "failure"
    return PRCheck(context, "status", judged, state, url)


class MergeNotReady(Exception):
    """The forge cannot merge yet (checks running, mergeability being computed); retry later."""


class Forge(ABC):
    name: str
    #: Whether something starts checks on every PR by itself (GitHub's CI does, on each push), so
    #: that a PR with none yet has them still to come; on the local forge nothing does.
    runs_checks: bool = False

    def status_context(self, environment: str) -> str:
        return promotion_branch(environment)

    @abstractmethod
    def get_statuses(self, commit: str) -> dict[str, Status]:
        """Current status per context on a control-plane commit."""

    @abstractmethod
    def set_status(
        self, commit: str, context: str, state: StatusState, description: str, target_url: str | None = None
    ) -> None:
        """Post a status on a control-plane commit."""

    @abstractmethod
    def find_pr(self, env: Environment, head_branch: str) -> PullRequest | None:
        """The newest PR from ``head_branch`` into ``env``'s platform branch (open, else the last
        merged or closed), if any."""

    @abstractmethod
    def open_pr(
        self,
        env: Environment,
        head_branch: str,
        head_sha: str,
        title: str,
        body: str,
        labels: tuple[str, ...] = (),
    ) -> PullRequest:
        """Open the PR from ``head_branch`` (already pushed, at ``head_sha``) into ``env``'s
        platform branch, or update the open one (idempotent); ``labels`` go on it besides the
        forge's own."""

    @abstractmethod
    def refresh_pr(self, pr: PullRequest) -> PullRequest:
        """The PR as the forge sees it now."""

    @abstractmethod
    def merge_pr(self, pr: PullRequest, expected_head: str, message: str) -> str:
        """Merge if the head is still ``expected_head``; the merge commit. MergeNotReady to retry."""

    @abstractmethod
    def platform_statuses(self, sha: str) -> list[Status]:
        """Every status posted on a platform-repo commit (by the clusters' reconcilers), oldest
        first, all pages."""

    def pr_checks(self, pr: PullRequest) -> list[PRCheck] | None:
        """The checks on ``pr``'s head commit, the newest per name; None where the forge keeps no
        checks at all."""
        return None

    def comment(self, pr: PullRequest, body: str) -> None:  # noqa: B027 - optional
        """Add a note to the PR where the forge has comments."""

    def request_count(self) -> int:
        return 0
