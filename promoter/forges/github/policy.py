"""How GitHub is retried (docs: "Rate limits for the REST API", "Best practices"): which failure
is a primary or secondary rate limit, a transient failure or a fatal one, and how long to wait.
Pure: ``api.GitHubHttp`` applies it to every request, and to git over HTTPS."""

from __future__ import annotations

import email.utils
import http
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import requests
from github.GithubException import GithubException

Kind = Literal["primary", "secondary", "transient", "fatal"]


@dataclass(frozen=True)
class RetryPolicy:
    """How patient the promoter is with GitHub. Durations in seconds."""

    attempts: int = 5
    backoff: float = 2.0  # first wait after a 5xx or a connection error; doubles
    backoff_cap: float = 60.0
    secondary_wait: float = 60.0  # GitHub: "wait for at least one minute"
    rate_limit_wait: float = 900.0  # the longest wait for a primary limit to reset
    write_gap: float = 1.0  # GitHub: at least one second between mutating requests
    pr_gap: float = 3.0  # before creating or merging a PR, which notify people and start CI
    timeout: int = 30
    progress: float = 10.0  # a line this often while a retry waits (promote's default progress interval)


@dataclass(frozen=True)
class Verdict:
    kind: Kind
    wait: float
    reason: str


def header(headers: Mapping[str, Any] | None, name: str) -> str | None:
    if not headers:
        return None
    for key, value in headers.items():
        if key.lower() == name:
            return str(value)
    return None


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def server_time(headers: Mapping[str, Any] | None, wall: Callable[[], float]) -> float:
    """GitHub's idea of now (its ``Date`` header), else ours: the reset time is GitHub's."""
    date = header(headers, "date")
    if date:
        try:
            return email.utils.parsedate_to_datetime(date).timestamp()
        except (TypeError, ValueError):
            pass
    return wall()


def github_message(err: GithubException) -> str:
    """GitHub's message with its details: ``Validation Failed: A pull request already exists ...``,
    or a GraphQL error's text."""
    data = err.data if isinstance(err.data, dict) else {}
    parts = [str(data.get("message") or err.message or "")]
    for item in data.get("errors") or []:
        if isinstance(item, dict) and item.get("message"):
            parts.append(str(item["message"]))
    return ": ".join(part for part in parts if part)


def describe(err: BaseException) -> str:
    """``503 Service Unavailable: <GitHub's message>``, ``connection reset``, ``timed out``."""
    if isinstance(err, GithubException):
        try:
            phrase = http.HTTPStatus(err.status).phrase
        except ValueError:
            phrase = "error"
        message = github_message(err)
        said = message and message.lower() != phrase.lower()  # not "404 Not Found: Not Found"
        return f"{err.status} {phrase}" + (f": {message}" if said else "")
    if isinstance(err, requests.Timeout):
        return "timed out"
    if "reset" in str(err).lower():
        return "connection reset"
    return f"connection failed ({err})"


def is_secondary(status: int, message: str) -> bool:
    lower = message.lower()
    return status == 429 or "secondary rate limit" in lower or "abuse" in lower


def classify(
    err: BaseException, attempt: int, secondary_hits: int, policy: RetryPolicy, wall: Callable[[], float]
) -> Verdict:
    """What to do after ``err`` on the ``attempt``-th try (pure: no clock, no I/O)."""
    reason = describe(err)
    backoff = min(policy.backoff_cap, policy.backoff * 2 ** (attempt - 1))
    if isinstance(err, requests.RequestException):
        return Verdict("transient", backoff, reason)
    if not isinstance(err, GithubException):
        return Verdict("fatal", 0, reason)
    status, headers = err.status, err.headers
    retry_after = _seconds(header(headers, "retry-after"))
    if status in (403, 429) and header(headers, "x-ratelimit-remaining") == "0":
        reset = _seconds(header(headers, "x-ratelimit-reset")) or 0
        wait = max(reset - server_time(headers, wall), 0) + 1  # one second for clock granularity
        if retry_after is not None:
            wait = max(wait, retry_after)
        return (
            Verdict("primary", wait, reason)
            if wait <= policy.rate_limit_wait
            else Verdict("fatal", wait, reason)
        )
    if status in (403, 429) and is_secondary(status, github_message(err)):
        wait = max(retry_after or 0, policy.secondary_wait * 2**secondary_hits)
        return (
            Verdict("secondary", wait, reason)
            if wait <= policy.rate_limit_wait
            else Verdict("fatal", wait, reason)
        )
    if status >= 500:
        return Verdict("transient", retry_after if retry_after is not None else backoff, reason)
    return Verdict("fatal", 0, reason)


HINTS = {
    401: " (check PROMOTER_GITHUB_TOKEN or GITHUB_TOKEN, or the GitHub App's id and key)",
    403: " (the token lacks a permission; see docs/github.md)",
    404: " (no such repository or object, or the token cannot see it)",
}

_GIT_STATUS = re.compile(r"(?:returned error:|HTTP) (\d{3})")

_GIT_NETWORK = re.compile(
    r"reset by peer|empty reply|timed out|too slow|hung up unexpectedly|unexpected disconnect|"
    r"early eof|failed to connect|could not resolve host|couldn't connect|curl (?:7|18|28|52|55|56)\b",
    re.IGNORECASE,
)


def git_verdict(message: str, attempt: int, secondary_hits: int, policy: RetryPolicy) -> Verdict:
    """The same policy for git over HTTPS, from git's error text (git shows no headers)."""
    backoff = min(policy.backoff_cap, policy.backoff * 2 ** (attempt - 1))
    match = _GIT_STATUS.search(message)
    if match:
        status = int(match.group(1))
        reason = f"HTTP {status} {_phrase(status)}".strip()
        if status == 429:
            return Verdict("secondary", policy.secondary_wait * 2**secondary_hits, reason)
        if status >= 500:
            return Verdict("transient", backoff, reason)
        return Verdict("fatal", 0, reason)
    if _GIT_NETWORK.search(message):
        return Verdict("transient", backoff, "connection reset or timed out")
    return Verdict("fatal", 0, "")


def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""
