"""The github forge, call by call, against the fake GitHub (real repos behind it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import responses

from promoter.clock import FakeClock
from promoter.demos.promotion import commit_folder
from promoter.errors import ForgeError, MergeRefused
from promoter.forges.base import MergeNotReady, PullRequest
from promoter.forges.github.api import GitHubHttp
from promoter.forges.github.auth import StaticToken
from promoter.forges.github.forge import GitHubForge
from promoter.gitcmd import Git
from promoter.model import Environment, Source
from tests.support.fake_github import TOKEN, FakeGitHub
from tests.support.helpers import ControlPlaneFactory

P = "org/platform"
QA = Environment("qa", "qa", "qa", "", "auto", 600.0, (), Source("promoter.yaml", 1))


class Setup:
    def __init__(self, factory: ControlPlaneFactory) -> None:
        self.factory = factory
        self.pushes = 0
        self.clock = FakeClock(start=0.0)
        path = factory.create(platform_branches=("qa",))
        self.commit = factory.refs()[f"{path.name}:refs/heads/main"]
        self.fake = FakeGitHub(self.clock, tokens=(TOKEN,))
        self.fake.add_repo(P, factory.platform)
        self.fake.add_repo("org/control-plane", path)
        self.http = GitHubHttp("https://api.github.com", self.clock, wall=self.fake.wall)
        self.forge = GitHubForge(self.http, StaticToken(TOKEN), P, "org/control-plane")

    def push_promotion(self, content: str = "rendered\n") -> str:
        """A commit on promoter/qa, on top of it (or of qa), as the orchestrator pushes."""
        repo = self.fake.repos[P]
        parent = repo.ref("promoter/qa") or repo.ref("qa")
        self.pushes += 1
        folder = self.factory.root / f"promotion{self.pushes}"
        (folder / "small").mkdir(parents=True)
        (folder / "README.md").write_text("platform\n")
        (folder / "small" / "app.yaml").write_text(content)
        return commit_folder(Git(self.factory.platform), folder, "promoter/qa", "promote", parent)

    def open(self, title: str = "Promote abc to qa", body: str = "body\n") -> PullRequest:
        head = self.fake.repos[P].ref("promoter/qa") or self.push_promotion()
        return self.forge.open_pr(QA, "promoter/qa", head, title, body)


@pytest.fixture
def gh(factory: ControlPlaneFactory) -> Iterator[Setup]:
    setup = Setup(factory)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        setup.fake.install(mock)
        yield setup


def test_open_pr_creates_and_labels(gh: Setup) -> None:
    pr = gh.open()
    assert (pr.number, pr.state, pr.head_branch, pr.base_branch) == (1, "open", "promoter/qa", "qa")
    assert pr.url == "https://github.com/org/platform/pull/1"
    assert [(r.method, r.call) for r in gh.fake.requests] == [("POST", "create_pr"), ("POST", "label")]
    assert gh.fake.pulls[(P, 1)]["labels"] == ["promotion", "env:qa"]


def test_open_pr_adds_the_labels_it_is_given_once(gh: Setup) -> None:
    head = gh.push_promotion()
    gh.forge.open_pr(QA, "promoter/qa", head, "Promote abc to qa", "body\n", ("promoted",))
    gh.forge.open_pr(QA, "promoter/qa", head, "Promote abc to qa", "body\n", ("promoted",))
    assert gh.fake.pulls[(P, 1)]["labels"] == ["promotion", "env:qa", "promoted"]
    assert [r.call for r in gh.fake.requests].count("label") == 1


def test_open_pr_again_finds_and_updates_the_open_one(gh: Setup) -> None:
    gh.open()
    head = gh.push_promotion("newer\n")
    pr = gh.forge.open_pr(QA, "promoter/qa", head, "Promote def to qa", "supersedes abc\n")
    assert (pr.number, pr.head_sha) == (1, head)
    assert [(r.method, r.call, r.status) for r in gh.fake.requests[2:]] == [
        ("POST", "create_pr", 422),
        ("GET", "get_pr", 200),
        ("PATCH", "update_pr", 200),
    ]
    assert gh.fake.requests[3].query["head"] == "org:promoter/qa"
    assert (gh.fake.pulls[(P, 1)]["title"], gh.fake.pulls[(P, 1)]["body"]) == (
        "Promote def to qa",
        "supersedes abc\n",
    )
    assert len(gh.fake.pulls) == 1


def test_open_pr_waits_for_github_to_move_the_head(gh: Setup) -> None:
    gh.open()
    gh.fake.head_lag = 2
    head = gh.push_promotion("newer\n")
    pr = gh.forge.open_pr(QA, "promoter/qa", head, "Promote def to qa", "body\n")
    assert pr.head_sha == head
    after = [(r.method, r.call) for r in gh.fake.requests[2:]]
    assert after == [
        ("POST", "create_pr"),  # 422
        ("GET", "get_pr"),  # the list: still the old head
        ("PATCH", "update_pr"),  # still the old head
        ("GET", "get_pr"),  # 2 s later: still the old head
        ("GET", "get_pr"),  # 2 s later: the new one
    ]
    assert gh.clock.slept[-2:] == [2.0, 2.0]


def test_find_pr_prefers_the_open_one_else_the_newest(gh: Setup) -> None:
    assert gh.forge.find_pr(QA, "promoter/qa") is None
    first = gh.open()
    gh.fake.human_merges(P, first.number or 0)
    assert gh.forge.find_pr(QA, "promoter/qa") == PullRequest(
        "qa", "promoter/qa", "qa", first.head_sha, "merged", first.url, 1, gh.fake.repos[P].ref("qa")
    )
    gh.push_promotion("again\n")
    second = gh.open()
    found = gh.forge.find_pr(QA, "promoter/qa")
    assert found is not None and (found.number, found.state) == (second.number, "open")


def test_merge_waits_for_mergeability_then_merges_with_the_head_as_guard(gh: Setup) -> None:
    pr = gh.open()
    with pytest.raises(MergeNotReady, match="GitHub is still working out whether"):
        gh.forge.merge_pr(gh.forge.refresh_pr(pr), pr.head_sha, "Merge it")
    sha = gh.forge.merge_pr(gh.forge.refresh_pr(pr), pr.head_sha, "Merge it\n\nbecause")
    assert sha == gh.fake.repos[P].ref("qa")
    put = gh.fake.calls("merge")[0]
    assert put.status == 200
    assert gh.fake.pulls[(P, 1)]["merge_commit_sha"] == sha
    assert gh.forge.refresh_pr(pr).state == "merged"


def test_merge_405_is_not_ready_yet(gh: Setup) -> None:
    pr = gh.forge.refresh_pr(gh.open())
    pr = gh.forge.refresh_pr(pr)  # mergeable: true, clean
    gh.fake.protect(P, "qa", contexts=("ci/test",))  # required by the time the merge arrives
    with pytest.raises(
        MergeNotReady,
        match=r'GitHub will not merge .*/pull/1 yet: Required status check "ci/test" is expected.',
    ):
        gh.forge.merge_pr(pr, pr.head_sha, "Merge")
    assert [r.status for r in gh.fake.calls("merge")] == [405]


def test_merge_409_means_the_head_moved(gh: Setup) -> None:
    pr = gh.forge.refresh_pr(gh.open())
    pr = gh.forge.refresh_pr(pr)
    gh.fake.hooks.append(lambda fake, method, path: method == "PUT" and bool(gh.push_promotion("sneaky\n")))
    with pytest.raises(MergeNotReady, match=r"the head of .*/pull/1 moved; checking it again"):
        gh.forge.merge_pr(pr, pr.head_sha, "Merge")
    assert [r.status for r in gh.fake.calls("merge")] == [409]
    assert gh.forge.refresh_pr(pr).head_sha != pr.head_sha


def test_merge_conflict_is_refused(gh: Setup) -> None:
    pr = gh.open()
    gh.factory.commit_platform("qa", {"README.md": "platform\n", "small/app.yaml": "someone else\n"})
    gh.forge.refresh_pr(pr)
    with pytest.raises(MergeRefused, match=r"qa: .*/pull/1 conflicts with qa; rerun the promotion"):
        gh.forge.merge_pr(gh.forge.refresh_pr(pr), pr.head_sha, "Merge")


def test_statuses_of_many_contexts_come_in_pages(gh: Setup) -> None:
    for i in range(130):
        gh.fake.post_status("org/control-plane", gh.commit, f"ci/{i:03d}", "success")
    gh.forge.set_status(
        gh.commit, "promoter/qa", "pending", "x" * 200, "https://github.com/org/platform/pull/1"
    )
    statuses = gh.forge.get_statuses(gh.commit)
    assert len(statuses) == 131
    assert statuses["promoter/qa"].description == "x" * 137 + "..."  # GitHub's limit, said
    assert statuses["promoter/qa"].target_url == "https://github.com/org/platform/pull/1"
    assert [r.query.get("page") for r in gh.fake.calls("get_statuses")] == ["1", "2"]
    gh.forge.set_status(gh.commit, "promoter/qa", "success", "gate soak 2.0s: success; " * 8, None)
    text = gh.forge.get_statuses(gh.commit)["promoter/qa"].description
    assert len(text) <= 140 and text.endswith("success; gate soak...")  # cut at a word


def test_platform_statuses_all_pages_oldest_first(gh: Setup) -> None:
    sha = gh.fake.repos[P].ref("qa") or ""
    for i in range(150):
        gh.fake.post_status(P, sha, "kustomization/apps/1", "success" if i % 2 else "failure", f"#{i}")
    statuses = gh.forge.platform_statuses(sha)
    assert [s.description for s in statuses] == [f"#{i}" for i in range(150)]
    assert statuses[0].created_at.endswith("Z")


def test_comment_goes_on_the_pr(gh: Setup) -> None:
    pr = gh.open()
    gh.forge.comment(pr, "gates passed")
    assert gh.fake.pulls[(P, 1)]["comment_bodies"] == ["gates passed"]
    assert gh.fake.calls("comment")[0].path == "/repos/org/platform/issues/1/comments"


def test_unknown_repository_names_the_fix(gh: Setup, tmp_path: Path) -> None:
    forge = GitHubForge(gh.http, StaticToken(TOKEN), P, "org/nope")
    with pytest.raises(ForgeError) as caught:
        forge.get_statuses(gh.commit)
    assert str(caught.value) == (
        "GitHub get statuses: 404 Not Found (no such repository or object, or the token cannot see it)"
    )


def test_bad_token_names_the_variables(gh: Setup) -> None:
    forge = GitHubForge(gh.http, StaticToken("ghp_wrongwrongwrong"), P, "org/control-plane")
    with pytest.raises(ForgeError) as caught:
        forge.get_statuses(gh.commit)
    assert str(caught.value) == (
        "GitHub get statuses: 401 Unauthorized: Bad credentials "
        "(check PROMOTER_GITHUB_TOKEN or GITHUB_TOKEN, or the GitHub App's id and key)"
    )


def test_a_commit_github_does_not_have(gh: Setup) -> None:
    with pytest.raises(ForgeError) as caught:
        gh.forge.set_status("f" * 40, "promoter/qa", "pending", "PR open")
    assert str(caught.value) == (
        f"GitHub create status promoter/qa: 422 Unprocessable Entity: No commit found for SHA: {'f' * 40}: "
        "the control-plane commit ffffffffffff is not in org/control-plane on GitHub; push it first, "
        "or check --control-plane-repo"
    )
