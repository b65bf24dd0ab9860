"""The one retry layer: rate limits, backoff, spacing, ETags and counting, on the fake GitHub."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests
import responses
from github.GithubException import GithubException

from promoter.clock import FakeClock
from promoter.errors import ForgeError, GitError
from promoter.forges.github.api import GitHubHttp
from promoter.forges.github.auth import StaticToken
from promoter.forges.github.forge import GitHubForge
from promoter.forges.github.policy import RetryPolicy, classify, git_verdict
from tests.support.fake_github import TOKEN, FakeGitHub
from tests.support.helpers import ControlPlaneFactory


class Setup:
    def __init__(self, factory: ControlPlaneFactory) -> None:
        self.clock = FakeClock(start=0.0)
        path = factory.create(platform_branches=("dev",))
        self.commit = factory.refs()[f"{path.name}:refs/heads/main"]
        self.platform_sha = factory.refs()["platform.git:refs/heads/dev"]
        self.fake = FakeGitHub(self.clock, tokens=(TOKEN,))
        self.fake.add_repo("org/platform", factory.platform)
        self.fake.add_repo("org/control-plane", path)
        self.http = GitHubHttp("https://api.github.com", self.clock, wall=self.fake.wall)
        self.forge = GitHubForge(self.http, StaticToken(TOKEN), "org/platform", "org/control-plane")

    @property
    def waits(self) -> list[float]:
        return [round(s, 3) for s in self.http.waited]


@pytest.fixture
def gh(factory: ControlPlaneFactory) -> Iterator[Setup]:
    setup = Setup(factory)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        setup.fake.install(mock)
        yield setup


def test_every_request_is_counted_once(gh: Setup) -> None:
    gh.forge.set_status(gh.commit, "promoter/dev", "pending", "PR open")
    gh.forge.get_statuses(gh.commit)
    gh.forge.platform_statuses(gh.platform_sha)
    assert gh.forge.request_count() == len(gh.fake.requests) == 3
    assert gh.http.counts.polls == 1
    assert dict(gh.http.counts.by_call) == {
        "create status promoter/dev": 1,
        "get statuses": 2,
    }


def test_pygithub_retries_nothing_behind_our_back(gh: Setup) -> None:
    gh.http.policy = RetryPolicy(attempts=1)
    gh.fake.fail("get_statuses", "503", 1)
    with pytest.raises(ForgeError, match=r"^GitHub get statuses: 503 Service Unavailable"):
        gh.forge.get_statuses(gh.commit)
    assert len(gh.fake.requests) == 1  # urllib3 did not retry on its own


def test_primary_limit_waits_until_github_says_it_resets(gh: Setup) -> None:
    gh.fake.fail("get_statuses", "primary", 1, reset_in=300)
    assert gh.forge.get_statuses(gh.commit) == {}
    assert gh.waits == [301.0]  # x-ratelimit-reset minus the response's Date, plus a second
    assert [r.status for r in gh.fake.requests] == [403, 200]


def test_primary_limit_beyond_the_cap_fails_at_once(gh: Setup) -> None:
    gh.fake.fail("get_statuses", "primary", 1, reset_in=3 * 3600)
    with pytest.raises(ForgeError) as caught:
        gh.forge.get_statuses(gh.commit)
    assert str(caught.value) == (
        "GitHub get statuses: 403 Forbidden: API rate limit exceeded for user ID 1. If you reach out to "
        "GitHub Support for help, please include the request ID 0A1B:2C3D.; the rate limit resets in "
        "3h00m01s, longer than the 15m00s this run may wait (--github-rate-limit-wait); rerun later"
    )
    assert gh.waits == [] and len(gh.fake.requests) == 1


def test_secondary_limit_waits_a_minute_then_doubles(gh: Setup) -> None:
    gh.fake.fail("get_statuses", "429", 3)
    gh.forge.get_statuses(gh.commit)
    assert gh.waits == [60.0, 120.0, 240.0]


def test_secondary_limit_honours_retry_after_but_never_less_than_a_minute(gh: Setup) -> None:
    gh.fake.fail("get_statuses", "secondary", 2)  # 403 with Retry-After: 60
    gh.forge.get_statuses(gh.commit)
    assert gh.waits == [60.0, 120.0]


def test_server_errors_back_off_exponentially_then_give_up(gh: Setup) -> None:
    gh.fake.fail("get_statuses", "502", 1000)
    with pytest.raises(ForgeError) as caught:
        gh.forge.get_statuses(gh.commit)
    assert str(caught.value) == "GitHub get statuses: 502 Bad Gateway, still failing after 5 attempts"
    assert gh.waits == [2.0, 4.0, 8.0, 16.0]
    assert len(gh.fake.requests) == 5


def test_connection_errors_are_retried(gh: Setup) -> None:
    gh.fake.fail("get_statuses", "reset", 1)
    gh.fake.fail("get_statuses", "timeout", 1)
    assert gh.forge.get_statuses(gh.commit) == {}
    assert gh.waits == [2.0, 4.0]


def test_mutating_requests_are_spaced(gh: Setup) -> None:
    gh.forge.set_status(gh.commit, "promoter/dev", "pending", "one")
    gh.clock.sleep(0.25)  # something else took a quarter of a second
    gh.forge.set_status(gh.commit, "promoter/dev", "pending", "two")
    gh.forge.get_statuses(gh.commit)  # reads are not spaced
    assert gh.waits == [0.75] and gh.clock.slept == [0.25, 0.75]


def test_a_lost_status_post_is_not_posted_twice(gh: Setup) -> None:
    gh.fake.fail("create_status", "reset", 1, after=True)
    gh.forge.set_status(gh.commit, "promoter/dev", "success", "healthy")
    assert [(r.method, r.call, r.status) for r in gh.fake.requests] == [
        ("POST", "create_status", "reset"),
        ("GET", "get_statuses", 200),  # the check: it is there
    ]
    assert len(gh.fake.statuses[("org/control-plane", gh.commit)]) == 1


def test_a_failed_status_post_is_sent_again(gh: Setup) -> None:
    gh.fake.fail("create_status", "503", 1)
    gh.forge.set_status(gh.commit, "promoter/dev", "success", "healthy")
    assert [(r.method, r.status) for r in gh.fake.requests] == [("POST", 503), ("GET", 200), ("POST", 201)]
    assert len(gh.fake.statuses[("org/control-plane", gh.commit)]) == 1


def test_conditional_polls_cost_nothing_against_the_rate_limit(gh: Setup) -> None:
    gh.fake.post_status("org/platform", gh.platform_sha, "kustomization/apps/1", "success")
    first = gh.forge.platform_statuses(gh.platform_sha)
    remaining = gh.fake.remaining
    second = gh.forge.platform_statuses(gh.platform_sha)
    assert first == second and [s.context for s in first] == ["kustomization/apps/1"]
    assert [r.status for r in gh.fake.requests] == [200, 304]
    assert gh.fake.remaining == remaining
    assert gh.http.counts.not_modified == 1
    gh.fake.post_status("org/platform", gh.platform_sha, "kustomization/apps/1", "failure")
    third = gh.forge.platform_statuses(gh.platform_sha)
    assert [s.state for s in third] == ["success", "failure"]  # oldest first


@pytest.mark.parametrize(
    ("status", "headers", "message", "kind", "wait"),
    [
        (503, {"retry-after": "7"}, "", "transient", 7.0),
        (500, {}, "", "transient", 8.0),  # third attempt: 2 * 2**2
        (
            403,
            {
                "x-ratelimit-remaining": "0",
                "x-ratelimit-reset": "1060",
                "date": "Thu, 01 Jan 1970 00:16:40 GMT",
            },
            "API rate limit exceeded",
            "primary",
            61.0,
        ),
        (429, {}, "", "secondary", 60.0),
        (403, {}, "You have exceeded a secondary rate limit.", "secondary", 60.0),
        (403, {"retry-after": "600"}, "You have exceeded a secondary rate limit.", "secondary", 600.0),
        (403, {}, "Resource not accessible by integration", "fatal", 0.0),
        (404, {}, "Not Found", "fatal", 0.0),
        (422, {}, "Validation Failed", "fatal", 0.0),
    ],
)
def test_classify(status: int, headers: dict[str, str], message: str, kind: str, wait: float) -> None:
    err = GithubException(status, {"message": message}, headers)
    verdict = classify(err, 3, 0, RetryPolicy(), wall=lambda: 0.0)
    assert (verdict.kind, verdict.wait) == (kind, wait)


def test_classify_network_errors() -> None:
    reset = requests.exceptions.ConnectionError(
        "('Connection aborted.', ConnectionResetError(104, 'Connection reset by peer'))"
    )
    timeout = requests.exceptions.ReadTimeout("Read timed out. (read timeout=30)")
    assert classify(reset, 1, 0, RetryPolicy(), wall=lambda: 0.0).reason == "connection reset"
    assert classify(timeout, 2, 0, RetryPolicy(), wall=lambda: 0.0).reason == "timed out"
    assert classify(timeout, 2, 0, RetryPolicy(), wall=lambda: 0.0).wait == 4.0
    assert classify(ValueError("a bug"), 1, 0, RetryPolicy(), wall=lambda: 0.0).kind == "fatal"


@pytest.mark.parametrize(
    ("stderr", "kind", "reason"),
    [
        (
            "error: RPC failed; HTTP 503 curl 22 The requested URL returned error: 503",
            "transient",
            "HTTP 503 Service Unavailable",
        ),
        (
            "fatal: unable to access 'https://github.com/o/r.git/': The requested URL returned error: 429",
            "secondary",
            "HTTP 429 Too Many Requests",
        ),
        (
            "fatal: unable to access 'https://github.com/o/r.git/': The requested URL returned error: 403",
            "fatal",
            "HTTP 403 Forbidden",
        ),
        (
            "error: RPC failed; curl 18 transfer closed with 4096 bytes remaining to read",
            "transient",
            "connection reset or timed out",
        ),
        (
            "error: RPC failed; curl 28 Operation too slow. Less than 1000 bytes/sec",
            "transient",
            "connection reset or timed out",
        ),
        ("! [rejected] promoter/dev (stale info)", "fatal", ""),
    ],
)
def test_git_verdict(stderr: str, kind: str, reason: str) -> None:
    verdict = git_verdict(stderr, 1, 0, RetryPolicy())
    assert (verdict.kind, verdict.reason) == (kind, reason)


def test_git_call_retries_then_names_the_call(gh: Setup) -> None:
    attempts: list[int] = []

    def push() -> Any:
        attempts.append(1)
        raise GitError(
            "push of dev to https://github.com/o/r.git was refused: error: RPC failed; HTTP 502 curl 22"
        )

    with pytest.raises(GitError) as caught:
        gh.http.git_call("push of dev", push)
    assert len(attempts) == 5 and gh.waits == [2.0, 4.0, 8.0, 16.0]
    assert str(caught.value).startswith("push of dev: HTTP 502 Bad Gateway, still failing after 5 attempts (")
