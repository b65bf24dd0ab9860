"""The one layer between the promoter and GitHub: retries, rate limits, spacing, ETags, counting.

PyGithub's own retry is switched off (``retry=None``, no built-in spacing, which would sleep on
the real clock); every request the github forge makes goes through ``GitHubHttp.call`` instead,
where tenacity retries it as GitHub asks (docs: "Rate limits for the REST API", "Best practices"):

- a primary limit (403/429 with ``x-ratelimit-remaining: 0``) waits until ``x-ratelimit-reset``,
  measured against the response's own ``Date`` so that clock skew does not matter, up to a cap;
- a secondary limit (403/429 whose message says so) waits ``Retry-After``, at least 60 s, and
  doubles while it persists;
- 5xx, connection resets and timeouts back off exponentially; every kind is bounded by
  ``RetryPolicy.attempts``;
- mutating requests are spaced (1 s, more before creating or merging a PR);
- a write that failed ambiguously (the server may have done it) is checked before it is sent
  again, so a retried POST never creates a second object.

Git over HTTPS (fetch, push) goes through ``git_call`` with the same policy, reading git's
error text since git gives no headers. The clock is injectable, so tests never sleep.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import github
import requests
import tenacity
from github.GithubException import GithubException

from promoter import trace
from promoter.clock import Clock, format_duration
from promoter.console import Console
from promoter.errors import ForgeError, GitError
from promoter.forges.github.policy import (
    HINTS,
    RetryPolicy,
    Verdict,
    classify,
    git_verdict,
    github_message,
    header,
)
from promoter.forges.github.shapes import guard
from promoter.masking import mask

T = TypeVar("T")

try:
    USER_AGENT = f"promoter/{importlib.metadata.version('promoter')}"  # GitHub requires one
except importlib.metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
    USER_AGENT = "promoter"

Write = Literal["write", "pr"] | None
API_VERSION = "2022-11-28"  # sent on every request: GitHub answers it until it retires the version
ACCEPT = "application/vnd.github+json"  # GitHub's recommended media type (PyGithub sends */*)


class GitHubRequestError(ForgeError):
    """A GitHub request failed for good; ``status`` is None for a network failure."""

    def __init__(
        self,
        call: str,
        message: str,
        status: int | None = None,
        data: Any = None,
        github_message: str = "",
    ) -> None:
        super().__init__(mask(message))
        self.call = call
        self.status = status
        self.data = data
        self.github_message = github_message


@dataclass
class RequestCounts:
    total: int = 0
    polls: int = 0
    not_modified: int = 0

    def __post_init__(self) -> None:
        self.by_call: Counter[str] = Counter()


class GitHubHttp:
    """Every GitHub request of a run: PyGithub clients without their own retry, one policy."""

    def __init__(
        self,
        api_url: str,
        clock: Clock,
        policy: RetryPolicy | None = None,
        wall: Callable[[], float] | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.clock = clock
        self.policy = policy or RetryPolicy()
        self.wall = wall or _wall_of(clock)
        # waits are told on stderr, beside the progress lines (stdout may carry --output json)
        self.say = say or Console(stream=sys.stderr).say
        self.counts = RequestCounts()
        self.waited: list[float] = []  # every wait: spacing writes, and before each retry
        self._last_write: float | None = None
        self._etags: dict[str, tuple[str, dict[str, Any], Any]] = {}

    def client(self, auth: github.Auth.Auth) -> github.Github:
        """A PyGithub client whose retries and spacing are this layer's, not its own."""
        client = github.Github(auth=auth, lazy=True, **self.client_options())
        self.prepare(client.requester)
        return client

    def prepare(self, requester: Any) -> None:
        """Check every answer's shape (``shapes.guard``) and send GitHub's media type on every
        request; the API version is the requester's own (``client_options``)."""
        guard(requester)
        send = requester.requestJson

        def with_accept(
            verb: str, url: str, parameters: Any = None, headers: Any = None, *rest: Any, **kw: Any
        ) -> Any:
            headers = dict(headers or {})
            # PyGithub still asks for long-graduated previews (machine-man for App installations);
            # nothing the promoter calls needs a preview
            headers["Accept"] = ACCEPT
            return send(verb, url, parameters, headers, *rest, **kw)

        requester.requestJson = with_accept

    def client_options(self) -> dict[str, Any]:
        return {
            "base_url": self.api_url,
            "timeout": self.policy.timeout,
            "user_agent": USER_AGENT,
            "api_version": API_VERSION,
            "per_page": 100,
            "retry": None,
            "seconds_between_requests": None,
            "seconds_between_writes": None,
        }

    # -------------------------------------------------------------- REST

    def call(
        self,
        name: str,
        fn: Callable[[], T],
        *,
        write: Write = None,
        poll: bool = False,
        verify: Callable[[], T | None] | None = None,
    ) -> T:
        """Run ``fn`` (exactly one request) under the retry policy.

        ``write`` spaces it after the previous write; ``verify`` (one read) says whether an
        ambiguously failed write was done after all, before it is sent again.
        """
        tries = _Tries()

        def attempt() -> T:
            tries.number += 1
            if tries.ambiguous and verify is not None:
                done = self._verify(name, verify)
                if done is not None:
                    return done
            self._space(write)
            self._count(name, poll)
            started, outcome = time.monotonic(), "ok"
            try:
                return fn()
            except (requests.RequestException, GithubException) as err:
                outcome = f"HTTP {err.status}" if isinstance(err, GithubException) else type(err).__name__
                if write and (not isinstance(err, GithubException) or err.status >= 500):
                    tries.ambiguous = True  # the server may have done it before failing
                raise
            finally:
                if write:
                    self._last_write = self.clock.now()
                trace.note(mask(f"github: {name}"), outcome, time.monotonic() - started)

        def judge(err: BaseException) -> Verdict:
            return classify(err, tries.number, tries.secondary, self.policy, self.wall)

        try:
            return self._retry(name, tries, attempt, judge)
        except (requests.RequestException, GithubException) as err:
            raise self._failure(name, err, judge(err), tries.number) from err

    def get_json(self, name: str, gh: github.Github, url: str, params: dict[str, Any], *, poll: bool) -> Any:
        """GET with ``If-None-Match``, under the retry policy (see ``conditional_get``)."""
        return self.call(name, lambda: self.conditional_get(gh, url, params), poll=poll)

    def conditional_get(self, gh: github.Github, url: str, params: dict[str, Any]) -> Any:
        """One GET with ``If-None-Match``, no retry: a 304 (free against the primary limit)
        reuses the last body.

        The ETags are this layer's own, one per URL and query: PyGithub gives the items of a list
        the list's ETag, which never matches the item's own URL, so polls do not use its
        conditional ``update()``."""
        key = f"{url}?{sorted(params.items())}"
        cached = self._etags.get(key)
        headers = {"If-None-Match": cached[0]} if cached else {}
        status, response_headers, output = gh.requester.requestJson("GET", url, params, headers)
        if status == 304 and cached:
            self.counts.not_modified += 1
            return cached[2]
        data = _json(output)
        if status >= 400:
            raise gh.requester.createException(status, response_headers, data)
        etag = header(response_headers, "etag")
        if etag:
            self._etags[key] = (etag, response_headers, data)
        return data

    def _count(self, name: str, poll: bool) -> None:
        self.counts.total += 1
        self.counts.by_call[name] += 1
        if poll:
            self.counts.polls += 1

    def _space(self, write: Write) -> None:
        if not write or self._last_write is None:
            return
        gap = self.policy.pr_gap if write == "pr" else self.policy.write_gap
        wait = self._last_write + gap - self.clock.now()
        if wait > 0:
            self.waited.append(wait)
            self.clock.sleep(wait)

    def _verify(self, name: str, verify: Callable[[], T | None]) -> T | None:
        self._count(f"{name} (check)", False)
        try:
            return verify()
        except (requests.RequestException, GithubException):
            return None  # cannot tell; sending the write again is the lesser evil

    def _failure(self, name: str, err: BaseException, verdict: Verdict, attempts: int) -> GitHubRequestError:
        status = err.status if isinstance(err, GithubException) else None
        data = err.data if isinstance(err, GithubException) else None
        message = github_message(err) if isinstance(err, GithubException) else ""
        if verdict.kind == "fatal" and verdict.wait > 0:
            text = (
                f"GitHub {name}: {verdict.reason}; the rate limit resets in {format_duration(verdict.wait)}, "
                f"longer than the {format_duration(self.policy.rate_limit_wait)} this run may wait "
                "(--github-rate-limit-wait); rerun later"
            )
        elif verdict.kind == "fatal":
            text = f"GitHub {name}: {verdict.reason}{HINTS.get(status or 0, '')}"
        else:
            text = f"GitHub {name}: {verdict.reason}, still failing after {attempts} attempts"
        return GitHubRequestError(name, text, status, data, message)

    # -------------------------------------------------------------- git over HTTPS

    def git_call(self, name: str, fn: Callable[[], T], verify: Callable[[], T | None] | None = None) -> T:
        """Run a git network operation under the same policy (git errors are GitError)."""
        tries = _Tries()

        def attempt() -> T:
            tries.number += 1
            if tries.ambiguous and verify is not None:
                done = verify()
                if done is not None:
                    return done
            try:
                return fn()
            except GitError:
                tries.ambiguous = True  # a push may have landed before the connection broke
                raise

        def judge(err: BaseException) -> Verdict:
            if not isinstance(err, GitError):
                return Verdict("fatal", 0, str(err))
            return git_verdict(str(err), tries.number, tries.secondary, self.policy)

        try:
            return self._retry(name, tries, attempt, judge)
        except GitError as err:
            found = judge(err)
            if found.kind == "fatal":
                raise
            raise GitError(
                mask(f"{name}: {found.reason}, still failing after {tries.number} attempts ({err})")
            ) from err

    def _retry(
        self, name: str, tries: _Tries, attempt: Callable[[], T], judge: Callable[[BaseException], Verdict]
    ) -> T:
        """tenacity, with waits and stops from ``judge``, sleeping on the injected clock."""

        def wait(retry_state: tenacity.RetryCallState) -> float:
            err = retry_state.outcome.exception() if retry_state.outcome else None
            found = judge(err) if err else Verdict("transient", 0, "")
            if found.kind == "secondary":
                tries.secondary += 1  # the next one waits twice as long
            tries.verdict = found
            return found.wait

        def sleep(seconds: float) -> None:
            self._wait(name, tries, seconds)

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.policy.attempts),
            wait=wait,
            retry=tenacity.retry_if_exception(lambda err: judge(err).kind != "fatal"),
            sleep=sleep,
            reraise=True,
        )
        return retrying(attempt)

    def _wait(self, name: str, tries: _Tries, seconds: float) -> None:
        """Sleep before the next try, saying why, and again every ``policy.progress`` seconds
        with the time left: a rate limit's wait is a minute or more, and a job log that shows
        nothing for that long looks hung."""
        if seconds <= 0:
            return
        self.waited.append(seconds)
        what = WAITING_FOR.get(tries.verdict.kind) or tries.verdict.reason or "a failure"
        self.say(
            f"GitHub {name}: {what}; trying again in {format_duration(seconds)} "
            f"(try {tries.number + 1} of {self.policy.attempts})"
        )
        left = seconds
        while left > 0:
            step = min(left, self.policy.progress)
            self.clock.sleep(step)
            left -= step
            if left > 0:
                self.say(f"GitHub {name}: still waiting for {what}, {format_duration(left)} left")


def _wall_of(clock: Clock) -> Callable[[], float]:
    """Wall-clock time that advances with ``clock``: the time now, plus what ``clock`` counted
    since. Token expiry and rate-limit resets are wall times; with the real (monotonic) clock
    this is the system's time, with a test's fake clock it is the fake GitHub's."""
    start, wall = clock.now(), time.time()
    return lambda: wall + clock.now() - start


WAITING_FOR = {"primary": "the rate limit to reset", "secondary": "a secondary rate limit to pass"}


class _Tries:
    """One retried operation: which try this is, how many secondary limits it met, whether a
    failure may have happened after the server did the work, and the last failure's verdict."""

    def __init__(self) -> None:
        self.number = 0
        self.secondary = 0
        self.ambiguous = False
        self.verdict = Verdict("transient", 0, "")


def _json(output: Any) -> Any:
    if not output:
        return None
    try:
        return json.loads(output)
    except ValueError:  # an HTML error page from a proxy: no message worth repeating
        return {"data": str(output)[:200]}
