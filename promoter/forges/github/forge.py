"""The ``github`` forge: promotion PRs, merges and commit statuses on GitHub (and GitHub
Enterprise Server), through PyGithub; git content over HTTPS with the token as a header.

Every request goes through ``GitHubHttp`` (retries, rate limits, spacing, ETags, counting) and
every wrapped call is exactly one request: PyGithub objects are lazy, and attributes are read
only from responses that carry them, so that nothing completes itself behind the counter's back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from github.CommitCombinedStatus import CommitCombinedStatus
from github.CommitStatus import CommitStatus
from github.PullRequest import PullRequest as GhPull
from github.PullRequestMergeStatus import PullRequestMergeStatus

from promoter.clock import Clock
from promoter.errors import ForgeError, MergeRefused, shorten
from promoter.forges.base import Forge, MergeNotReady, PRCheck, PRState, PullRequest
from promoter.forges.github import checks
from promoter.forges.github.api import GitHubHttp, GitHubRequestError
from promoter.forges.github.auth import Credentials, credentials_from_env
from promoter.forges.github.commits import GitDatabase
from promoter.forges.github.policy import RetryPolicy
from promoter.forges.github.repo import GitHubPlatformRepo
from promoter.masking import mask
from promoter.model import DESCRIPTION_LIMIT, Environment, Status, StatusState

T = TypeVar("T")
PROMOTION_LABEL = "promotion"
HEAD_WAIT = 20.0  # how long GitHub may take to move a PR's head after a push
# enablePullRequestAutoMerge refuses a PR that can be merged now: merge it directly then.
MERGEABLE_NOW = ("clean status", "unstable status", "has_hooks status")
NO_AUTO_MERGE = ("not allowed", "protected branch rules not configured", "can't enable auto-merge")
WAITING = {
    "blocked": "required reviews or status checks are missing",
    "behind": "the branch protection wants it up to date with its base",
    "draft": "it is a draft",
}


class GitHubForge(Forge):
    """PRs on the platform repo, statuses on the control-plane repo, all on one GitHub."""

    name = "github"
    runs_checks = True  # CI starts its check suites on every push

    def __init__(
        self,
        http: GitHubHttp,
        credentials: Credentials,
        platform_repo: str,
        control_plane_repo: str,
        *,
        auto_merge: bool = False,
    ) -> None:
        self.http = http
        self.platform_repo, self.control_plane_repo = platform_repo, control_plane_repo
        self.owner = platform_repo.split("/")[0]
        self.auto_merge = auto_merge
        self._credentials = credentials
        self._gh = http.client(credentials.api_auth(platform_repo))
        self._cp_gh = http.client(credentials.api_auth(control_plane_repo))
        self._repo = self._gh.get_repo(platform_repo)  # lazy: no request
        self._cp = self._cp_gh.get_repo(control_plane_repo)
        self._pulls: dict[int, GhPull] = {}
        self._fresh: set[int] = set()  # PRs whose last response was a whole PR object
        self._auto_merging: dict[int, str] = {}  # PR -> head sha GitHub's auto-merge is on for
        self._auto_unavailable = False

    def request_count(self) -> int:
        return self.http.counts.total

    def control_plane_token(self) -> str:
        """A token for git on the control-plane repo (change control's records, DESIGN section 13)."""
        return self._credentials.token(self.control_plane_repo)

    # -------------------------------------------------------------- statuses

    def get_statuses(self, commit: str) -> dict[str, Status]:
        url = f"{self._cp.url}/commits/{commit}/status"
        out: dict[str, Status] = {}
        page = 1
        while True:
            try:
                data = self.http.get_json(
                    "get statuses", self._cp_gh, url, {"per_page": 100, "page": page}, poll=False
                )
            except GitHubRequestError as err:
                raise self._unknown_commit(err, commit) from err
            combined = CommitCombinedStatus(self._cp_gh.requester, {}, data)
            for status in combined.statuses:
                out.setdefault(status.context, _status(status))
            if not combined.statuses or len(out) >= combined.total_count:
                return out
            page += 1

    def set_status(
        self, commit: str, context: str, state: StatusState, description: str, target_url: str | None = None
    ) -> None:
        text = shorten(mask(description), DESCRIPTION_LIMIT)  # GitHub refuses longer descriptions
        fields: dict[str, Any] = {"state": state, "description": text, "context": context}
        if target_url and target_url.startswith(("https://", "http://")):
            fields["target_url"] = target_url
        target = self._cp.get_commit(commit)  # lazy: no request

        def posted() -> CommitStatus | None:
            latest = target.get_combined_status().statuses
            return next(
                (s for s in latest if s.context == context and (s.state, s.description) == (state, text)),
                None,
            )

        try:
            self.http.call(
                f"create status {context}",
                lambda: target.create_status(**fields),
                write="write",
                verify=posted,
            )
        except GitHubRequestError as err:
            raise self._unknown_commit(err, commit) from err

    def _unknown_commit(self, err: GitHubRequestError, commit: str) -> ForgeError:
        if "No commit found" not in err.github_message:
            return err
        return ForgeError(
            f"{err}: the control-plane commit {commit[:12]} is not in {self.control_plane_repo} on GitHub; "
            "push it first, or check --control-plane-repo"
        )

    def platform_statuses(self, sha: str) -> list[Status]:
        url = f"{self._repo.url}/commits/{sha}/statuses"
        items: list[dict[str, Any]] = []
        page = 1
        while True:
            data = self.http.get_json(
                "get statuses", self._gh, url, {"per_page": 100, "page": page}, poll=True
            )
            items.extend(data or [])
            if len(data or []) < 100:
                break
            page += 1
        # GitHub lists newest first; the interface wants oldest first.
        return [_status(CommitStatus(self._gh.requester, {}, item)) for item in reversed(items)]

    def commit_verification(self, sha: str) -> tuple[bool, str]:
        """GitHub's verification of control-plane commit ``sha``: (verified, its reason
        explained), for ``signatures.verifyMain: github``."""
        try:
            found = GitDatabase(self.http, self._cp_gh, self.control_plane_repo).verification(sha)
        except GitHubRequestError as err:
            raise self._unknown_commit(err, commit=sha) from err
        return found.verified, found.explained()

    # -------------------------------------------------------------- pull requests

    def find_pr(self, env: Environment, head_branch: str) -> PullRequest | None:
        pulls = self._list(head_branch, env.gitops_branch, "all")
        if not pulls:
            return None
        chosen = next((p for p in pulls if p.state == "open"), pulls[0])
        self._remember(chosen, fresh=False)
        return self._model(env.name, chosen)

    def open_pr(
        self,
        env: Environment,
        head_branch: str,
        head_sha: str,
        title: str,
        body: str,
        labels: tuple[str, ...] = (),
    ) -> PullRequest:
        title, body, base = mask(title), mask(body), env.gitops_branch
        try:
            pr = self.http.call(
                "create PR",
                lambda: self._repo.create_pull(base=base, head=head_branch, title=title, body=body),
                write="pr",
            )
        except GitHubRequestError as err:
            if err.status != 422 or "already exists" not in err.github_message:
                raise
            pr = self._update_existing(head_branch, base, title, body)
        self._label(pr, env, labels)
        self._remember(pr, fresh=True)
        if pr.head.sha != head_sha:
            pr = self._await_head(pr, head_sha)
        return self._model(env.name, pr)

    def refresh_pr(self, pr: PullRequest) -> PullRequest:
        obj = self._read(self._pull(pr))
        self._remember(obj, fresh=True)
        return self._model(pr.environment, obj)

    def merge_pr(self, pr: PullRequest, expected_head: str, message: str) -> str:
        if pr.number not in self._fresh:
            pr = self.refresh_pr(pr)
        obj = self._pull(pr)
        url = obj.html_url
        if obj.merged_at is not None:
            return obj.merge_commit_sha
        if obj.head.sha != expected_head:
            raise MergeNotReady(f"{url}: its head is {obj.head.sha[:12]}, not {expected_head[:12]}")
        if obj.mergeable is None:
            raise MergeNotReady(f"GitHub is still working out whether {url} can be merged")
        state = obj.mergeable_state
        if obj.mergeable is False and state == "dirty":
            raise MergeRefused(
                f"{pr.environment}: {url} conflicts with {obj.base.ref}; rerun the promotion to render it again on top of {obj.base.ref}"
            )
        if self.auto_merge and self._auto_merge(obj, expected_head):
            raise MergeNotReady(
                f"GitHub's auto-merge is on for {url}; it merges once checks and reviews pass"
            )
        if state in WAITING:
            raise MergeNotReady(f"{url} cannot be merged yet: {WAITING[state]}")
        return self._merge(obj, expected_head, message)

    def pr_checks(self, pr: PullRequest) -> list[PRCheck]:
        return checks.pr_checks(self.http, self._gh, self._repo.url, pr.head_sha)

    def comment(self, pr: PullRequest, body: str) -> None:
        if pr.number is None:
            raise ForgeError(f"{pr.url} is not a GitHub pull request")
        issue = self._repo.get_issue(pr.number)  # lazy: no request; a PR is an issue too
        self.http.call("comment on PR", lambda: issue.create_comment(mask(body)), write="write")

    # -------------------------------------------------------------- helpers

    def _list(self, head_branch: str, base: str, state: str) -> list[GhPull]:
        # GitHub ignores a head filter without "<owner>:" and would list every PR.
        query = self._repo.get_pulls(
            state=state, head=f"{self.owner}:{head_branch}", base=base, sort="created", direction="desc"
        )
        return self.http.call("get PR", lambda: query.get_page(0))

    def _update_existing(self, head_branch: str, base: str, title: str, body: str) -> GhPull:
        pr = next(iter(self._list(head_branch, base, "open")), None)
        if pr is None:
            raise ForgeError(
                f"GitHub says a PR from {head_branch} into {base} already exists in {self.platform_repo}, "
                "but lists none open; rerun the promotion"
            )
        if (pr.title, pr.body or "") != (title, body):
            self.http.call("update PR", lambda: pr.edit(title=title, body=body), write="write")
            self._fresh.add(pr.number)
        return pr

    def _label(self, pr: GhPull, env: Environment, extra: tuple[str, ...]) -> None:
        have = {label.name for label in pr.labels}
        missing = [name for name in (PROMOTION_LABEL, f"env:{env.name}", *extra) if name not in have]
        if missing:
            self.http.call("label PR", lambda: pr.add_to_labels(*missing), write="write")

    def _await_head(self, pr: GhPull, head_sha: str) -> GhPull:
        """GitHub moves a PR's head a moment after the push; wait for it, briefly."""
        waited = 0.0
        while pr.head.sha != head_sha and waited < HEAD_WAIT:
            self.http.clock.sleep(2.0)
            waited += 2.0
            pr = self._read(pr)
        return pr

    def _read(self, pr: GhPull, *, retried: bool = True) -> GhPull:
        """The PR as GitHub has it now: a conditional GET with this forge's own ETag for the PR's
        URL (a 304 costs nothing against the rate limit and returns the last body)."""
        url = f"{self._repo.url}/pulls/{pr.number}"
        if retried:
            data = self.http.get_json("get PR", self._gh, url, {}, poll=True)
        else:
            data = self.http.conditional_get(self._gh, url, {})
        return GhPull(self._gh.requester, {}, data, completed=True)

    def _merge(self, obj: GhPull, expected_head: str, message: str) -> str:
        title, _, rest = mask(message).partition("\n")

        def merged() -> PullRequestMergeStatus | None:
            now = self._read(obj, retried=False)  # one request: the merge's own retry counts it
            if now.merged_at is None:
                return None
            data = {"sha": now.merge_commit_sha, "merged": True, "message": "merged"}
            return PullRequestMergeStatus(self._gh.requester, {}, data)

        try:
            result = self.http.call(
                "merge PR",
                lambda: obj.merge(
                    commit_title=title, commit_message=rest.strip(), merge_method="merge", sha=expected_head
                ),
                write="pr",
                verify=merged,
            )
        except GitHubRequestError as err:
            if err.status == 405:  # required checks or reviews, or mergeability changed
                raise MergeNotReady(
                    f"GitHub will not merge {obj.html_url} yet: {err.github_message}"
                ) from err
            if err.status == 409:  # the head moved: never merge content we did not see
                raise MergeNotReady(f"the head of {obj.html_url} moved; checking it again") from err
            raise
        self._fresh.discard(obj.number)
        return result.sha

    def _auto_merge(self, obj: GhPull, head: str) -> bool:
        """Turn on GitHub's auto-merge; False when the PR should be merged directly instead."""
        if self._auto_unavailable:
            return False
        if self._auto_merging.get(obj.number) == head:
            return True
        try:
            self.http.call(
                "enable auto-merge",
                lambda: obj.enable_automerge(merge_method="MERGE", expected_head_oid=head),
                write="write",
            )
        except GitHubRequestError as err:
            text = err.github_message.lower()
            if any(s in text for s in MERGEABLE_NOW):
                return False
            if any(s in text for s in NO_AUTO_MERGE):
                self._auto_unavailable = True
                return False
            raise
        self._auto_merging[obj.number] = head
        return True

    def _pull(self, pr: PullRequest) -> GhPull:
        if pr.number is None:
            raise ForgeError(f"{pr.url} is not a GitHub pull request")
        if pr.number not in self._pulls:
            self._pulls[pr.number] = self._repo.get_pull(pr.number)  # lazy: no request
        return self._pulls[pr.number]

    def _remember(self, pr: GhPull, *, fresh: bool) -> None:
        self._pulls[pr.number] = pr
        if fresh:
            self._fresh.add(pr.number)
        else:
            self._fresh.discard(pr.number)

    def _model(self, environment: str, pr: GhPull) -> PullRequest:
        merged = pr.merged_at is not None
        state: PRState = "merged" if merged else ("closed" if pr.state == "closed" else "open")
        return PullRequest(
            environment,
            pr.head.ref,
            pr.base.ref,
            pr.head.sha,
            state,
            pr.html_url,
            pr.number,
            pr.merge_commit_sha if merged else None,
            tuple(label.name for label in pr.labels),
        )


def _status(status: CommitStatus) -> Status:
    created = status.created_at.strftime("%Y-%m-%dT%H:%M:%SZ") if status.created_at else ""
    return Status(status.context, status.state, status.description or "", status.target_url, created)


def connect(
    *,
    api_url: str,
    git_url: str,
    platform_repo: str,
    control_plane_repo: str,
    clock: Clock,
    policy: RetryPolicy | None = None,
    auto_merge: bool = False,
    environ: Mapping[str, str] | None = None,
) -> tuple[GitHubPlatformRepo, GitHubForge]:
    """The platform repo and the forge for one GitHub (credentials from the environment)."""
    http = GitHubHttp(api_url, clock, policy)
    credentials = credentials_from_env(http, environ, (platform_repo, control_plane_repo))
    platform = GitHubPlatformRepo(git_url, http, credentials, platform_repo)
    forge = GitHubForge(http, credentials, platform_repo, control_plane_repo, auto_merge=auto_merge)
    return platform, forge


__all__ = ["GitHubForge", "connect"]
