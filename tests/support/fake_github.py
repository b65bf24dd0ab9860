"""A stateful fake GitHub for the github forge's tests.

``FakeGitHub`` answers the REST (and the one GraphQL mutation) the forge uses, at the HTTP layer
through ``responses`` callbacks: repositories backed by real git repos, pull requests with
GitHub's ``head=<owner>:<branch>`` filter (a bare branch name is silently ignored, as on
GitHub), mergeability computed in the background (``mergeable: null`` at first), real merges
(``git merge-tree`` and ``commit-tree`` on the bare repo), branch protection, statuses and
combined status with pagination, ETags and 304s, the primary and secondary rate limits, and
injectable faults (5xx, 403/429, connection reset, timeout), before or after the request was
carried out. Bodies have GitHub's shape: whole objects, as the REST API returns them.

``GitServer`` serves the same repos over smart HTTP (``git http-backend`` behind a loopback
HTTP server), optionally demanding the token as an ``Authorization`` header, with the same
faults on pushes. The fake's wall clock is its start time plus the tests' FakeClock.
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import json
import re
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import jwt
import requests
import responses
import urllib3

from promoter.clock import FakeClock
from tests.support.fake_github_objects import (
    check_run,
    check_run_pull,
    combined_status,
    github_app,
    label,
    pull_request,
    repository,
    status_object,
    user,
)
from tests.support.helpers import WORKLOAD, stage
from tests.support.helpers import pipeline as build_pipeline

DOCS = "https://docs.github.com/rest"
SECONDARY = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID 0A1B:2C3D:4E5F."
)
API_VERSIONS = ("2022-11-28",)  # the REST API versions the fake serves
ACCEPTED = ("application/vnd.github+json", "application/vnd.github.v3+json", "application/json")
FAULTS = ("500", "502", "503", "secondary", "primary", "429", "reset", "timeout")


@dataclass
class Fault:
    call: str  # get_pr | create_pr | update_pr | merge | label | create_status | get_statuses | push | ...
    kind: str  # one of FAULTS
    times: int = 1
    after: bool = False  # carry the request out, then fail (the answer is lost)
    reset_in: float = 120.0  # for "primary": when the exhausted limit resets
    ref: str | None = None  # a push: only one that updates this ref


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    call: str
    status: int | str
    headers: dict[str, str]
    etag: str = ""  # the ETag of the answer (sent or matched), for GETs answered 200 or 304


@dataclass
class FakeRepo:
    full_name: str
    path: Path
    id: int
    protection: dict[str, dict[str, Any]] = field(default_factory=dict)
    _merges: dict[tuple[str, str], bool] = field(default_factory=dict)

    @property
    def owner(self) -> str:
        return self.full_name.split("/")[0]

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "-C", str(self.path), *args], capture_output=True, text=True, check=check
        )

    def ref(self, branch: str) -> str | None:
        """A branch's commit, read from the ref files (a git process per read is slow)."""
        gitdir = self.path / ".git" if (self.path / ".git").is_dir() else self.path
        loose = gitdir / "refs" / "heads" / branch
        if loose.is_file():
            return loose.read_text().strip()
        packed = gitdir / "packed-refs"
        for line in packed.read_text().splitlines() if packed.is_file() else []:
            if line.endswith(f" refs/heads/{branch}"):
                return line.split(" ")[0]
        return None

    def merges_cleanly(self, base: str, head: str) -> bool:
        key = (base, head)
        if key not in self._merges:
            proc = self.git("merge-tree", "--write-tree", "--no-messages", base, head, check=False)
            self._merges[key] = proc.returncode == 0
        return self._merges[key]

    def has_commit(self, sha: str) -> bool:
        return self.git("cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0


class Reply(Exception):
    """An error answer, raised from a handler."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"message": message, "documentation_url": DOCS, "status": str(status), **extra}


class FakeGitHub:
    """GitHub's REST API for a few repositories, with state, ETags, rate limits and faults."""

    def __init__(
        self,
        clock: FakeClock,
        *,
        api_url: str = "https://api.github.com",
        web_url: str = "https://github.com",
        tokens: tuple[str, ...] = (),
    ) -> None:
        self.clock = clock
        self.epoch = float(int(time.time()))  # wall clock = epoch + clock.now(): near real time
        self.api_url = api_url.rstrip("/")
        self.web_url = web_url.rstrip("/")
        self.tokens = set(tokens)
        self.app: tuple[int, Any] | None = None  # (app id, public key) of a GitHub App
        self.installation_tokens: dict[str, float] = {}
        self.token_scopes: dict[str, set[str]] = {}  # installation token -> the repos it may use
        self.repos: dict[str, FakeRepo] = {}
        self.pulls: dict[tuple[str, int], dict[str, Any]] = {}
        self.statuses: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.check_runs: dict[tuple[str, str], list[dict[str, Any]]] = {}  # oldest first
        self.labels: dict[str, dict[str, dict[str, Any]]] = {}
        self.variables: dict[str, dict[str, str]] = {}  # repo -> Actions variable -> value
        self.dispatches: list[tuple[str, dict[str, Any]]] = []  # (repo, body) of repository_dispatch
        self.requests: list[Recorded] = []
        self.faults: list[Fault] = []
        self.hooks: list[Callable[[FakeGitHub, str, str], bool]] = []
        self.mergeable_delay = 1  # GETs of a PR that answer mergeable: null after a change
        self.head_lag = 0  # reads of a PR that still show the old head after a push
        self.limit, self.remaining = 5000, 5000
        self.reset_at = self.wall() + 3600
        self._next_id = 1000
        self._lock = threading.Lock()
        parts = urlsplit(self.api_url)
        self.prefix = parts.path.rstrip("/")
        self.graphql_path = "/api/graphql" if self.prefix.endswith("/api/v3") else "/graphql"
        self._origin = f"{parts.scheme}://{parts.hostname}"
        self._port = parts.port

    # -------------------------------------------------------------- setup

    def wall(self) -> float:
        return self.epoch + self.clock.now()

    def add_repo(self, full_name: str, path: Path) -> FakeRepo:
        repo = FakeRepo(full_name, path, self._new_id())
        self.repos[full_name] = repo
        return repo

    def protect(
        self, full_name: str, branch: str, *, contexts: tuple[str, ...] = (), reviews: int = 0
    ) -> None:
        """Branch protection: required status contexts and approving reviews on ``branch``."""
        self.repos[full_name].protection[branch] = {"contexts": list(contexts), "reviews": reviews}

    def fail(
        self, call: str, kind: str, times: int = 1, *, after: bool = False, reset_in: float = 120.0
    ) -> Fault:
        fault = Fault(call, kind, times, after, reset_in)
        self.faults.append(fault)
        return fault

    def install(self, mock: responses.RequestsMock) -> None:
        port = f"(?::{self._port})?" if self._port else "(?::443|:80)?"
        pattern = re.compile(re.escape(self._origin) + port + r"/.*")
        for method in ("GET", "POST", "PATCH", "PUT", "DELETE"):
            mock.add_callback(method, pattern, callback=self._handle)

    # -------------------------------------------------------------- what tests look at

    def calls(self, call: str | None = None, method: str | None = None) -> list[Recorded]:
        return [
            r
            for r in self.requests
            if (call is None or r.call == call) and (method is None or r.method == method)
        ]

    def prs(self, full_name: str) -> list[dict[str, Any]]:
        return [self._pull_json(full_name, n) for (repo, n) in sorted(self.pulls) if repo == full_name]

    def latest_statuses(self, full_name: str, sha: str) -> dict[str, dict[str, Any]]:
        latest: dict[str, dict[str, Any]] = {}
        for status in self.statuses.get((full_name, sha), []):
            latest[status["context"]] = status
        return latest

    def post_status(
        self,
        full_name: str,
        sha: str,
        context: str,
        state: str,
        description: str = "",
        target_url: str | None = None,
    ) -> None:
        """A status posted by someone else (a reconciler, a CI system)."""
        body = {"state": state, "context": context, "description": description, "target_url": target_url}
        self._add_status(full_name, sha, body, "flux")

    def add_check_run(
        self,
        full_name: str,
        sha: str,
        name: str,
        status: str = "queued",
        conclusion: str | None = None,
        *,
        app: str = "github-actions",
        suite: int | None = None,
    ) -> dict[str, Any]:
        """A check run a CI App starts on ``sha`` (a new check suite unless ``suite``); a re-run
        is another check run of the same name, in a new suite."""
        run = {
            "id": self._new_id(),
            "name": name,
            "head_sha": sha,
            "status": status,
            "conclusion": conclusion,
            "suite": suite or self._new_id(),
            "app": app,
            "started_at": self._iso(),
            "completed_at": self._iso() if status == "completed" else None,
        }
        self.check_runs.setdefault((full_name, sha), []).append(run)
        return run

    def finish_check_run(self, run: dict[str, Any], conclusion: str, status: str = "completed") -> None:
        """The App reports a check run's progress or its end."""
        run.update(status=status, conclusion=conclusion if status == "completed" else None)
        run["completed_at"] = self._iso() if status == "completed" else None

    def human_merges(self, full_name: str, number: int) -> None:
        self._merge(self.repos[full_name], self.pulls[(full_name, number)], None, "octocat")

    def human_closes(self, full_name: str, number: int) -> None:
        pr = self.pulls[(full_name, number)]
        pr["head_sha"] = self.repos[full_name].ref(pr["head"]) or pr["head_sha"]
        pr.update(state="closed", closed_at=self._iso())

    # -------------------------------------------------------------- the HTTP layer

    def _handle(self, request: Any) -> tuple[int, dict[str, str], str]:
        with self._lock:
            return self._dispatch(request)

    def _dispatch(self, request: Any) -> tuple[int, dict[str, str], str]:
        url = urlsplit(request.url)
        path = url.path.removeprefix(self.prefix) if url.path != self.graphql_path else "/graphql"
        query = dict(parse_qsl(url.query))
        headers = {k: v for k, v in request.headers.items()}
        method = request.method
        route = self._route(method, path)
        call = route[2] if route else "unknown"
        record = Recorded(method, path, query, call, 0, headers)
        self.requests.append(record)
        for hook in list(self.hooks):
            if hook(self, method, path):
                self.hooks.remove(hook)
        self._roll_window()
        self._auto_merge()
        fault = self._fault(call, after=False)
        if fault:
            return self._fault_reply(fault, record)
        if self.remaining <= 0:
            record.status = 403
            return self._reply(403, self._primary_body(), record, counted=False)
        try:
            self._check_headers(path, headers)
            self._authenticate(path, headers)
            if route is None:
                raise Reply(404, "Not Found")
            handler, params, _ = route
            status, body, extra = handler(params, query, _body(request), headers)
        except Reply as err:
            status, body, extra = err.status, err.body, {}
        fault = self._fault(call, after=True)
        if fault:
            return self._fault_reply(fault, record)
        text = json.dumps(body)
        etag = 'W/"' + hashlib.sha256(text.encode()).hexdigest()[:40] + '"'
        if method == "GET" and status == 200:
            extra["ETag"] = record.etag = etag
            if headers.get("If-None-Match") == etag:
                record.status = 304
                return self._reply(304, None, record, extra, counted=False)
        record.status = status
        return self._reply(status, body, record, extra)

    def _reply(
        self,
        status: int,
        body: Any,
        record: Recorded,
        extra: dict[str, str] | None = None,
        *,
        counted: bool = True,
    ) -> tuple[int, dict[str, str], str]:
        if counted and self.remaining > 0:
            self.remaining -= 1  # GitHub: a 304 costs nothing against the primary limit
        record.status = status
        headers = {
            "Content-Type": "application/json; charset=utf-8",
            "Date": email.utils.formatdate(self.wall(), usegmt=True),
            "X-GitHub-Api-Version-Selected": "2022-11-28",
            "X-GitHub-Request-Id": f"0A1B:{len(self.requests):04X}",
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(int(self.reset_at)),
            "X-RateLimit-Used": str(self.limit - self.remaining),
            "X-RateLimit-Resource": "graphql" if record.path == "/graphql" else "core",
            **(extra or {}),
        }
        return status, headers, "" if body is None else json.dumps(body)

    def _roll_window(self) -> None:
        if self.wall() >= self.reset_at:
            self.remaining, self.reset_at = self.limit, self.wall() + 3600

    def _primary_body(self) -> dict[str, str]:
        return {
            "message": "API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID 0A1B:2C3D.",
            "documentation_url": f"{DOCS}/overview/rate-limits-for-the-rest-api",
        }

    def _fault(self, call: str, *, after: bool) -> Fault | None:
        for fault in self.faults:
            if fault.call == call and fault.times > 0 and fault.after == after:
                fault.times -= 1
                return fault
        return None

    def _fault_reply(self, fault: Fault, record: Recorded) -> tuple[int, dict[str, str], str]:
        record.status = fault.kind
        if fault.kind == "reset":
            raise requests.exceptions.ConnectionError(
                urllib3.exceptions.ProtocolError(
                    "Connection aborted.", ConnectionResetError(104, "Connection reset by peer")
                )
            )
        if fault.kind == "timeout":
            raise requests.exceptions.ReadTimeout(
                f"HTTPSConnectionPool(host='{urlsplit(self.api_url).hostname}', port=443): Read timed out. (read timeout=30)"
            )
        if fault.kind == "primary":
            self.remaining, self.reset_at = 0, self.wall() + fault.reset_in
            return self._reply(403, self._primary_body(), record, counted=False)
        if fault.kind == "secondary":
            body = {
                "message": SECONDARY,
                "documentation_url": f"{DOCS}/overview/rate-limits-for-the-rest-api",
            }
            return self._reply(403, body, record, {"Retry-After": "60"})
        if fault.kind == "429":
            body = {
                "message": SECONDARY,
                "documentation_url": f"{DOCS}/overview/rate-limits-for-the-rest-api",
            }
            return self._reply(429, body, record)
        status = int(fault.kind)
        page = "<html><body><h1>Unicorn!</h1> This page is taking too long to load.</body></html>"
        record.status = status
        headers = {"Content-Type": "text/html", "Date": email.utils.formatdate(self.wall(), usegmt=True)}
        if status == 500:
            return status, {"Content-Type": "application/json"}, json.dumps({"message": "Server Error"})
        if status == 403:  # a permission the token does not have
            body = {
                "message": "Resource not accessible by integration",
                "documentation_url": DOCS,
                "status": "403",
            }
            return status, {"Content-Type": "application/json"}, json.dumps(body)
        return status, headers, page

    def _check_headers(self, path: str, headers: dict[str, str]) -> None:
        """GitHub's documented request headers, demanded (GitHub itself would fall back to its
        default version and media type; the fake refuses, so that no request goes without them)."""
        if path == "/graphql":
            return  # GraphQL has no REST versions
        version = headers.get("X-GitHub-Api-Version")
        if version not in API_VERSIONS:
            raise Reply(400, f"Unsupported 'X-GitHub-Api-Version' header: {version!r}")
        if headers.get("Accept") not in ACCEPTED:
            raise Reply(415, f"Unsupported 'Accept' header: {headers.get('Accept')!r}")

    def _authenticate(self, path: str, headers: dict[str, str]) -> None:
        scheme, _, credential = headers.get("Authorization", "").partition(" ")
        if path.startswith("/app/") or path.endswith("/installation"):
            if self.app is None or scheme.lower() != "bearer":
                raise Reply(401, "A JSON web token could not be decoded")
            try:
                claims = jwt.decode(credential, self.app[1], algorithms=["RS256"])
            except jwt.PyJWTError as err:
                raise Reply(401, f"A JSON web token could not be decoded: {err}") from err
            if str(claims.get("iss")) != str(self.app[0]):
                raise Reply(401, "'Issuer' claim ('iss') must be an Integer")
            return
        if scheme.lower() not in ("token", "bearer"):
            raise Reply(401, "Requires authentication")
        if credential in self.tokens:
            return
        expiry = self.installation_tokens.get(credential)
        if expiry is None or expiry < self.wall():
            raise Reply(401, "Bad credentials")
        found = re.match(r"/repos/([^/]+/[^/]+)", path)
        scope = self.token_scopes.get(credential)
        if found and scope is not None and found.group(1) not in scope:
            raise Reply(404, "Not Found")  # GitHub hides what a token may not see

    # -------------------------------------------------------------- routing

    def _route(
        self, method: str, path: str
    ) -> tuple[Callable[..., tuple[int, Any, dict[str, str]]], dict[str, str], str] | None:
        repo = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"
        table: list[tuple[str, str, Callable[..., tuple[int, Any, dict[str, str]]], str]] = [
            ("GET", rf"{repo}/pulls", self._list_pulls, "get_pr"),
            ("POST", rf"{repo}/pulls", self._create_pull, "create_pr"),
            ("GET", rf"{repo}/pulls/(?P<n>\d+)", self._get_pull, "get_pr"),
            ("PATCH", rf"{repo}/pulls/(?P<n>\d+)", self._update_pull, "update_pr"),
            ("PUT", rf"{repo}/pulls/(?P<n>\d+)/merge", self._merge_pull, "merge"),
            ("POST", rf"{repo}/issues/(?P<n>\d+)/labels", self._add_labels, "label"),
            ("POST", rf"{repo}/issues/(?P<n>\d+)/comments", self._comment, "comment"),
            ("POST", rf"{repo}/statuses/(?P<sha>\w+)", self._create_status, "create_status"),
            ("GET", rf"{repo}/commits/(?P<ref>[^/]+)/statuses", self._list_statuses, "get_statuses"),
            ("GET", rf"{repo}/commits/(?P<ref>[^/]+)/status", self._combined, "get_statuses"),
            ("GET", rf"{repo}/commits/(?P<ref>[^/]+)/check-runs", self._list_check_runs, "get_check_runs"),
            ("GET", rf"{repo}/installation", self._installation, "app"),
            ("POST", r"/app/installations/(?P<id>\d+)/access_tokens", self._access_token, "app"),
            ("POST", r"/graphql", self._graphql, "graphql"),
            ("GET", rf"{repo}/actions/variables/(?P<name>[^/]+)", self._get_variable, "variable"),
            ("PATCH", rf"{repo}/actions/variables/(?P<name>[^/]+)", self._set_variable, "variable"),
            ("POST", rf"{repo}/actions/variables", self._create_variable, "variable"),
            ("POST", rf"{repo}/dispatches", self._dispatch_event, "dispatch"),
        ]
        for verb, regex, handler, call in table:
            match = re.fullmatch(regex, path)
            if verb == method and match:
                return handler, match.groupdict(), call
        return None

    def _repo(self, params: dict[str, str]) -> FakeRepo:
        repo = self.repos.get(f"{params['owner']}/{params['repo']}")
        if repo is None:
            raise Reply(404, "Not Found")
        return repo

    # -------------------------------------------------------------- pulls

    def _list_pulls(self, params: dict[str, str], query: dict[str, str], body: Any, headers: Any) -> Any:
        repo = self._repo(params)
        state = query.get("state", "open")
        head = query.get("head", "")
        found = []
        for (name, number), pr in sorted(self.pulls.items(), key=lambda item: -item[0][1]):
            self._refresh_pull(repo, pr)
            if name != repo.full_name or (state != "all" and pr["state"] != state):
                continue
            if ":" in head and head != f"{repo.owner}:{pr['head']}":
                continue  # a head filter without "<owner>:" is ignored, as on GitHub
            if query.get("base") and query["base"] != pr["base"]:
                continue
            found.append(self._pull_json(repo.full_name, number, listing=True))
        return self._page(found, query, f"/repos/{repo.full_name}/pulls")

    def _create_pull(self, params: dict[str, str], query: Any, body: dict[str, Any], headers: Any) -> Any:
        repo = self._repo(params)
        head, base = body.get("head", ""), body.get("base", "")
        head = head.split(":", 1)[1] if ":" in head else head
        if not body.get("title"):
            raise Reply(
                422,
                "Validation Failed",
                errors=[{"resource": "PullRequest", "field": "title", "code": "missing_field"}],
            )
        if repo.ref(head) is None:
            raise Reply(
                422,
                "Validation Failed",
                errors=[{"resource": "PullRequest", "field": "head", "code": "invalid"}],
            )
        if repo.ref(base) is None:
            raise Reply(
                422,
                "Validation Failed",
                errors=[{"resource": "PullRequest", "field": "base", "code": "invalid"}],
            )
        for (name, _), pr in self.pulls.items():
            if name == repo.full_name and pr["state"] == "open" and (pr["head"], pr["base"]) == (head, base):
                message = f"A pull request already exists for {repo.owner}:{head}."
                raise Reply(
                    422,
                    "Validation Failed",
                    errors=[{"resource": "PullRequest", "code": "custom", "message": message}],
                )
        if repo.git("merge-base", "--is-ancestor", head, base, check=False).returncode == 0:
            message = f"No commits between {base} and {head}"
            raise Reply(
                422,
                "Validation Failed",
                errors=[{"resource": "PullRequest", "code": "custom", "message": message}],
            )
        number = 1 + max((n for (name, n) in self.pulls if name == repo.full_name), default=0)
        self.pulls[(repo.full_name, number)] = {
            "id": self._new_id(),
            "number": number,
            "title": body["title"],
            "body": body.get("body"),
            "head": head,
            "base": base,
            "head_sha": repo.ref(head),
            "state": "open",
            "draft": bool(body.get("draft", False)),
            "labels": [],
            "created_at": self._iso(),
            "updated_at": self._iso(),
            "closed_at": None,
            "merged_at": None,
            "merge_commit_sha": None,
            "merged_by": None,
            "auto_merge": None,
            "comments": 0,
            "mergeable_key": None,
            "mergeable_seen": 0,
            "user": "promoter-bot",
        }
        return (
            201,
            self._pull_json(repo.full_name, number),
            {"Location": f"{self.api_url}/repos/{repo.full_name}/pulls/{number}"},
        )

    def _get_pull(self, params: dict[str, str], query: Any, body: Any, headers: Any) -> Any:
        repo = self._repo(params)
        pr = self._pull(repo, params["n"])
        self._refresh_pull(repo, pr)
        key = (pr["head_sha"], repo.ref(pr["base"]))
        if pr["state"] == "open" and pr["mergeable_key"] != key:
            pr["mergeable_seen"] += 1  # GitHub computes mergeability in the background
            if pr["mergeable_seen"] > self.mergeable_delay:
                pr["mergeable_key"], pr["mergeable_seen"] = key, 0
        return 200, self._pull_json(repo.full_name, pr["number"]), {}

    def _update_pull(self, params: dict[str, str], query: Any, body: dict[str, Any], headers: Any) -> Any:
        repo = self._repo(params)
        pr = self._pull(repo, params["n"])
        for key in ("title", "body", "base"):
            if key in body:
                pr[key] = body[key]
        if body.get("state") in ("open", "closed"):
            pr["state"] = body["state"]
            pr["closed_at"] = self._iso() if body["state"] == "closed" else None
        pr["updated_at"] = self._iso()
        return 200, self._pull_json(repo.full_name, pr["number"]), {}

    def _merge_pull(self, params: dict[str, str], query: Any, body: dict[str, Any], headers: Any) -> Any:
        repo = self._repo(params)
        pr = self._pull(repo, params["n"])
        self._refresh_pull(repo, pr)
        if pr["state"] != "open":
            raise Reply(405, "Pull Request is not mergeable")
        if body.get("sha") and body["sha"] != pr["head_sha"]:
            raise Reply(409, "Head branch was modified. Review and try the merge again.")
        if body.get("merge_method", "merge") not in ("merge", "squash", "rebase"):
            raise Reply(422, "Invalid merge_method")
        blocker = self._blocker(repo, pr)
        if blocker:
            raise Reply(405, blocker)
        sha = self._merge(repo, pr, body.get("commit_title"), "promoter-bot")
        return 200, {"sha": sha, "merged": True, "message": "Pull Request successfully merged"}, {}

    def _add_labels(self, params: dict[str, str], query: Any, body: Any, headers: Any) -> Any:
        repo = self._repo(params)
        pr = self._pull(repo, params["n"])
        names = body.get("labels", []) if isinstance(body, dict) else body
        known = self.labels.setdefault(repo.full_name, {})
        for name in names:
            if name not in known:
                known[name] = label(self.api_url, repo.full_name, name, self._new_id())
            if name not in pr["labels"]:
                pr["labels"].append(name)
        return 200, [known[name] for name in pr["labels"]], {}

    def _comment(self, params: dict[str, str], query: Any, body: dict[str, Any], headers: Any) -> Any:
        repo = self._repo(params)
        pr = self._pull(repo, params["n"])
        pr["comments"] += 1
        pr.setdefault("comment_bodies", []).append(body.get("body", ""))
        number = pr["number"]
        return (
            201,
            {
                "id": self._new_id(),
                "url": f"{self.api_url}/repos/{repo.full_name}/issues/comments/{self._next_id}",
                "html_url": f"{self.web_url}/{repo.full_name}/pull/{number}#issuecomment-{self._next_id}",
                "issue_url": f"{self.api_url}/repos/{repo.full_name}/issues/{number}",
                "body": body.get("body", ""),
                "user": user(self.api_url, self.web_url, "promoter-bot", 41898282),
                "created_at": self._iso(),
                "updated_at": self._iso(),
                "author_association": "NONE",
            },
            {},
        )

    # -------------------------------------------------------------- statuses

    def _create_status(self, params: dict[str, str], query: Any, body: dict[str, Any], headers: Any) -> Any:
        repo = self._repo(params)
        if body.get("state") not in ("error", "failure", "pending", "success"):
            raise Reply(
                422, "Validation Failed", errors=[{"resource": "Status", "field": "state", "code": "custom"}]
            )
        if len(body.get("description") or "") > 140:
            raise Reply(
                422,
                "Validation Failed",
                errors=[{"resource": "Status", "field": "description", "code": "custom"}],
            )
        if not repo.has_commit(params["sha"]):
            raise Reply(422, f"No commit found for SHA: {params['sha']}")
        return 201, self._add_status(repo.full_name, params["sha"], body, "promoter-bot"), {}

    # -------------------------------------------------------------- Actions variables

    def _get_variable(self, params: dict[str, str], query: Any, body: Any, headers: Any) -> Any:
        repo = self._repo(params)
        value = self.variables.get(repo.full_name, {}).get(params["name"].upper())
        if value is None:
            raise Reply(404, "Not Found")
        stamp = self._iso()
        return (
            200,
            {"name": params["name"].upper(), "value": value, "created_at": stamp, "updated_at": stamp},
            {},
        )

    def _set_variable(self, params: dict[str, str], query: Any, body: dict[str, Any], headers: Any) -> Any:
        known = self.variables.get(self._repo(params).full_name, {})
        if params["name"].upper() not in known:
            raise Reply(404, "Not Found")
        known[params["name"].upper()] = str(body.get("value", ""))
        return 204, None, {}

    def _create_variable(self, params: dict[str, str], query: Any, body: dict[str, Any], headers: Any) -> Any:
        known = self.variables.setdefault(self._repo(params).full_name, {})
        name = str(body.get("name", "")).upper()
        if not name or name in known:
            raise Reply(409 if name else 422, "Already exists" if name else "Validation Failed")
        known[name] = str(body.get("value", ""))
        return 201, {}, {}

    def _dispatch_event(self, params: dict[str, str], query: Any, body: dict[str, Any], headers: Any) -> Any:
        repo = self._repo(params)
        if not isinstance(body, dict) or not body.get("event_type"):
            raise Reply(422, "Invalid request.", errors=[{"field": "event_type", "code": "missing_field"}])
        self.dispatches.append((repo.full_name, body))
        return 204, None, {}

    def _add_status(self, full_name: str, sha: str, body: dict[str, Any], by: str) -> dict[str, Any]:
        status = status_object(
            self.api_url, self.web_url, full_name, sha, self._new_id(), body, self._iso(), by
        )
        self.statuses.setdefault((full_name, sha), []).append(status)
        return status

    def _resolve(self, repo: FakeRepo, ref: str) -> str:
        sha = repo.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False).stdout.strip()
        if not sha:
            raise Reply(422, f"No commit found for SHA: {ref}")
        return sha

    def _list_statuses(self, params: dict[str, str], query: dict[str, str], body: Any, headers: Any) -> Any:
        repo = self._repo(params)
        sha = self._resolve(repo, params["ref"])
        newest_first = list(reversed(self.statuses.get((repo.full_name, sha), [])))
        return self._page(newest_first, query, f"/repos/{repo.full_name}/commits/{params['ref']}/statuses")

    def _combined(self, params: dict[str, str], query: dict[str, str], body: Any, headers: Any) -> Any:
        repo = self._repo(params)
        sha = self._resolve(repo, params["ref"])
        latest = list(reversed(self.latest_statuses(repo.full_name, sha).values()))
        per_page, page = _paging(query)
        chunk = latest[(page - 1) * per_page : page * per_page]
        body = combined_status(self.api_url, repository(self.api_url, self.web_url, repo), sha, latest, chunk)
        return 200, body, {}

    def _list_check_runs(self, params: dict[str, str], query: dict[str, str], body: Any, headers: Any) -> Any:
        """Newest first; ``filter=latest`` (GitHub's default) keeps the newest run of a name in
        each check suite, ``all`` every run."""
        repo = self._repo(params)
        sha = self._resolve(repo, params["ref"])
        runs = list(reversed(self.check_runs.get((repo.full_name, sha), [])))
        if query.get("filter", "latest") == "latest":
            newest: dict[tuple[str, int], dict[str, Any]] = {}
            for r in runs:
                newest.setdefault((r["name"], r["suite"]), r)
            runs = list(newest.values())
        web = [self._check_run_json(repo, r) for r in runs]
        status, chunk, extra = self._page(
            web, query, f"/repos/{repo.full_name}/commits/{params['ref']}/check-runs"
        )
        return status, {"total_count": len(web), "check_runs": chunk}, extra

    def _check_run_json(self, repo: FakeRepo, run: dict[str, Any]) -> dict[str, Any]:
        app = github_app(
            self.api_url, self.web_url, run["app"], 15368 if run["app"] == "github-actions" else 4711
        )
        pulls = [
            check_run_pull(self.api_url, repo.id, repo.full_name, pr, repo.ref(pr["base"]) or "")
            for (name, _), pr in sorted(self.pulls.items())
            if name == repo.full_name and pr["state"] == "open" and pr["head_sha"] == run["head_sha"]
        ]
        return check_run(self.api_url, self.web_url, repo.full_name, run, app, pulls)

    # -------------------------------------------------------------- GitHub App

    def _installation(self, params: dict[str, str], query: Any, body: Any, headers: Any) -> Any:
        repo = self._repo(params)
        owner = user(self.api_url, self.web_url, repo.owner, 9919, "Organization")
        installation_id = 4242
        return (
            200,
            {
                "id": installation_id,
                "account": owner,
                "repository_selection": "selected",
                "access_tokens_url": f"{self.api_url}/app/installations/{installation_id}/access_tokens",
                "repositories_url": f"{self.api_url}/installation/repositories",
                "html_url": f"{self.web_url}/organizations/{repo.owner}/settings/installations/{installation_id}",
                "app_id": self.app[0] if self.app else 0,
                "app_slug": "promoter",
                "target_id": 9919,
                "target_type": "Organization",
                "permissions": {
                    "contents": "write",
                    "pull_requests": "write",
                    "statuses": "write",
                    "metadata": "read",
                },
                "events": [],
                "created_at": "2024-01-01T00:00:00Z",
                "updated_at": "2024-01-01T00:00:00Z",
                "single_file_name": None,
                "has_multiple_single_files": False,
                "single_file_paths": [],
                "suspended_by": None,
                "suspended_at": None,
            },
            {},
        )

    def _access_token(self, params: dict[str, str], query: Any, body: Any, headers: Any) -> Any:
        token = (
            "ghs_"
            + hashlib.sha256(f"{self.wall()}-{len(self.installation_tokens)}".encode()).hexdigest()[:36]
        )
        names = (body or {}).get("repositories")
        owner = "org"  # the one installation: on the organization that owns every repo here
        if names is not None:
            missing = [n for n in names if f"{owner}/{n}" not in self.repos]
            if missing or not names:
                raise Reply(
                    422,
                    "There is at least one repository that does not exist or is not accessible to the parent installation.",
                )
            self.token_scopes[token] = {f"{owner}/{n}" for n in names}
        expires = self.wall() + 3600
        self.installation_tokens[token] = expires
        return (
            201,
            {
                "token": token,
                "expires_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expires)),
                "permissions": {
                    "contents": "write",
                    "pull_requests": "write",
                    "statuses": "write",
                    "metadata": "read",
                },
                "repository_selection": "selected",
            },
            {},
        )

    # -------------------------------------------------------------- GraphQL: auto-merge only

    def _graphql(self, params: Any, query: Any, body: dict[str, Any], headers: Any) -> Any:
        text = body.get("query", "")
        if "enablePullRequestAutoMerge" not in text:
            return 200, {"errors": [{"message": "this fake knows only enablePullRequestAutoMerge"}]}, {}
        given = body.get("variables", {}).get("input", {})
        for (name, _), pr in self.pulls.items():
            if pr_node_id(pr["id"]) != given.get("pullRequestId"):
                continue
            repo = self.repos[name]
            self._refresh_pull(repo, pr)
            if given.get("expectedHeadOid") and given["expectedHeadOid"] != pr["head_sha"]:
                return 200, _graphql_error("Head sha didn't match expected head sha"), {}
            if self._blocker(repo, pr) is None:
                return 200, _graphql_error("Pull request Pull request is in clean status"), {}
            pr["auto_merge"] = {
                "enabled_by": user(self.api_url, self.web_url, "promoter-bot", 41898282),
                "merge_method": given.get("mergeMethod", "MERGE").lower(),
                "commit_title": None,
                "commit_message": None,
            }
            actor = {"avatarUrl": "", "login": "promoter-bot", "resourcePath": "/promoter-bot", "url": ""}
            return (
                200,
                {"data": {"enablePullRequestAutoMerge": {"actor": actor, "clientMutationId": None}}},
                {},
            )
        return (
            200,
            {"data": None, "errors": [{"type": "NOT_FOUND", "message": "Could not resolve to a node"}]},
            {},
        )

    def _auto_merge(self) -> None:
        for (name, _), pr in list(self.pulls.items()):
            repo = self.repos[name]
            if pr["state"] == "open" and pr["auto_merge"] and self._blocker(repo, pr) is None:
                self._merge(repo, pr, None, "promoter-bot")

    # -------------------------------------------------------------- state helpers

    def _pull(self, repo: FakeRepo, number: str) -> dict[str, Any]:
        pr = self.pulls.get((repo.full_name, int(number)))
        if pr is None:
            raise Reply(404, "Not Found")
        return pr

    def _refresh_pull(self, repo: FakeRepo, pr: dict[str, Any]) -> None:
        """An open PR follows its head branch; deleting the branch closes it, as on GitHub."""
        if pr["state"] != "open":
            return
        head = repo.ref(pr["head"])
        if head is None:
            pr.update(state="closed", closed_at=self._iso())
        elif head != pr["head_sha"] and pr.setdefault("lagged", 0) < self.head_lag:
            pr["lagged"] += 1  # GitHub moves a PR's head a moment after the push
        elif head != pr["head_sha"]:
            pr.update(head_sha=head, updated_at=self._iso(), auto_merge=None, lagged=0)

    def _conflicts(self, repo: FakeRepo, pr: dict[str, Any]) -> bool:
        return not repo.merges_cleanly(repo.ref(pr["base"]) or "", pr["head_sha"])

    def _blocker(self, repo: FakeRepo, pr: dict[str, Any]) -> str | None:
        """Why GitHub would refuse to merge now (a 405 message), or None."""
        if pr["draft"]:
            return "Pull Request is still a draft"
        if self._conflicts(repo, pr):
            return "Pull Request is not mergeable"
        rule = repo.protection.get(pr["base"], {})
        latest = self.latest_statuses(repo.full_name, pr["head_sha"])
        for context in rule.get("contexts", []):
            if latest.get(context, {}).get("state") != "success":
                return f'Required status check "{context}" is expected.'
        if rule.get("reviews"):
            return f"At least {rule['reviews']} approving review is required by reviewers with write access."
        return None

    def _merge(self, repo: FakeRepo, pr: dict[str, Any], title: str | None, by: str) -> str:
        base = repo.ref(pr["base"])
        tree = repo.git(
            "merge-tree", "--write-tree", "--no-messages", base or "", pr["head_sha"]
        ).stdout.split()[0]
        message = (
            f"Merge pull request #{pr['number']} from {repo.owner}/{pr['head']}\n\n{title or pr['title']}"
        )
        env_identity = ["-c", "user.name=GitHub", "-c", "user.email=noreply@github.com"]
        sha = subprocess.run(
            [
                "git",
                *env_identity,
                "-C",
                str(repo.path),
                "commit-tree",
                tree,
                "-p",
                base or "",
                "-p",
                pr["head_sha"],
                "-m",
                message,
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        repo.git("update-ref", f"refs/heads/{pr['base']}", sha, base or "")
        now = self._iso()
        pr.update(
            state="closed", closed_at=now, merged_at=now, merge_commit_sha=sha, merged_by=by, updated_at=now
        )
        return sha

    def _pull_json(self, full_name: str, number: int, *, listing: bool = False) -> dict[str, Any]:
        repo = self.repos[full_name]
        pr = self.pulls[(full_name, number)]
        mergeable: bool | None = None
        state = "unknown"
        if pr["state"] == "open" and pr["mergeable_key"] == (pr["head_sha"], repo.ref(pr["base"])):
            mergeable = not self._conflicts(repo, pr)
            blocker = self._blocker(repo, pr)
            state = "dirty" if not mergeable else ("blocked" if blocker else "clean")
            if pr["draft"]:
                state = "draft"
        labels = [self.labels[full_name][name] for name in pr["labels"]]
        return pull_request(
            self.api_url,
            self.web_url,
            repository(self.api_url, self.web_url, repo),
            pr,
            base_sha=repo.ref(pr["base"]) or "",
            labels=labels,
            mergeable=mergeable,
            mergeable_state=state,
            node_id=pr_node_id(pr["id"]),
            listing=listing,
        )

    def _page(self, items: list[Any], query: dict[str, str], path: str) -> tuple[int, Any, dict[str, str]]:
        per_page, page = _paging(query)
        last = max(1, -(-len(items) // per_page))
        links = []
        base = f"{self.api_url}{path}"
        others = "".join(f"&{k}={v}" for k, v in sorted(query.items()) if k not in ("page", "per_page"))
        if page < last:
            links.append(f'<{base}?per_page={per_page}&page={page + 1}{others}>; rel="next"')
            links.append(f'<{base}?per_page={per_page}&page={last}{others}>; rel="last"')
        if page > 1:
            links.append(f'<{base}?per_page={per_page}&page=1{others}>; rel="first"')
            links.append(f'<{base}?per_page={per_page}&page={page - 1}{others}>; rel="prev"')
        extra = {"Link": ", ".join(links)} if links else {}
        return 200, items[(page - 1) * per_page : page * per_page], extra

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _iso(self) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.wall()))


def pr_node_id(pr_id: int) -> str:
    return "PR_kwDO" + base64.b64encode(f"pr:{pr_id}".encode()).decode().rstrip("=")


def _graphql_error(message: str) -> dict[str, Any]:
    return {
        "data": {"enablePullRequestAutoMerge": None},
        "errors": [
            {
                "type": "UNPROCESSABLE",
                "path": ["enablePullRequestAutoMerge"],
                "locations": [{"line": 1, "column": 72}],
                "message": message,
            }
        ],
    }


def _paging(query: dict[str, str]) -> tuple[int, int]:
    per_page = min(int(query.get("per_page", 30)), 100)
    return per_page, max(int(query.get("page", 1)), 1)


def _body(request: Any) -> Any:
    raw = request.body
    if not raw:
        return {}
    return json.loads(raw.decode() if isinstance(raw, bytes) else raw)


# ------------------------------------------------------------------ git over smart HTTP


class GitServer:
    """``git http-backend`` behind a loopback HTTP server: ``/<owner>/<repo>.git`` -> a repo.

    With ``token`` set, every request must carry ``Authorization: Basic`` with
    ``x-access-token:<token>``, as GitHub accepts it; a token ``read_only`` says is read-only
    fetches, and is refused the receive-pack (HTTP 403), as GitHub refuses a push without
    Contents write. Faults (call ``push``) hit the ``git-receive-pack`` POST; ``after`` carries
    the push out, then drops the answer.
    """

    def __init__(
        self,
        repos: dict[str, Path],
        token: str | Callable[[str], bool] | None = None,
        read_only: Callable[[str], bool] | None = None,
    ) -> None:
        self.repos = repos
        self.token = token
        self.read_only = read_only
        self.faults: list[Fault] = []
        self.log: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server._serve(self)

            def do_POST(self) -> None:
                server._serve(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def fail(self, kind: str, times: int = 1, *, after: bool = False, ref: str | None = None) -> Fault:
        fault = Fault("push", kind, times, after, ref=ref)
        self.faults.append(fault)
        return fault

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        url = urlsplit(handler.path)
        body = _read_body(handler)
        entry = {
            "method": handler.command,
            "path": url.path,
            "query": url.query,
            "authorization": handler.headers.get("Authorization"),
        }
        self.log.append(entry)
        repo, rest = self._find(url.path)
        if repo is None:
            return _send(handler, 404, b"Repository not found.\n")
        if self.token and not self._authorized(handler.headers.get("Authorization") or ""):
            entry["status"] = 401
            return _send(
                handler, 401, b"Authentication failed\n", {"WWW-Authenticate": 'Basic realm="GitHub"'}
            )
        push = handler.command == "POST" and url.path.endswith("/git-receive-pack")
        if (push or "service=git-receive-pack" in url.query) and self._read_only(handler):
            entry["status"] = 403
            return _send(handler, 403, b"Permission to the repository denied to x-access-token.\n")
        fault = next(
            (f for f in self.faults if push and f.times > 0 and (f.ref is None or f.ref.encode() in body)),
            None,
        )
        if fault:
            fault.times -= 1
            entry["status"] = fault.kind
            if not fault.after:
                return _fail(handler, fault.kind)
        status, headers, output = _backend(repo, rest, url.query, handler, body)
        if fault:  # the push happened; its answer is lost
            return _fail(handler, fault.kind)
        entry["status"] = status
        _send(handler, status, output, headers)

    def _read_only(self, handler: BaseHTTPRequestHandler) -> bool:
        value = (handler.headers.get("Authorization") or "").partition(" ")[2]
        secret = base64.b64decode(value or "").decode(errors="replace").partition(":")[2]
        return bool(self.read_only and self.read_only(secret))

    def _authorized(self, header: str) -> bool:
        if isinstance(self.token, str):
            return header == _basic(self.token)
        scheme, _, value = header.partition(" ")
        user, _, secret = base64.b64decode(value or "").decode(errors="replace").partition(":")
        return scheme == "Basic" and user == "x-access-token" and bool(self.token and self.token(secret))

    def _find(self, path: str) -> tuple[Path | None, str]:
        for prefix, repo in self.repos.items():
            if path.startswith(prefix + "/"):
                return repo, path[len(prefix) :]
        return None, ""


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a dropped connection is what a fault is for


def _basic(token: str) -> str:
    return "Basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int(handler.rfile.readline().strip() or b"0", 16)
            if size == 0:
                handler.rfile.readline()
                return b"".join(chunks)
            chunks.append(handler.rfile.read(size))
            handler.rfile.readline()
    return handler.rfile.read(int(handler.headers.get("Content-Length") or 0))


def _backend(
    repo: Path, rest: str, query: str, handler: BaseHTTPRequestHandler, body: bytes
) -> tuple[int, dict[str, str], bytes]:
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "GIT_PROJECT_ROOT": str(repo.parent),
        "GIT_HTTP_EXPORT_ALL": "1",
        "PATH_INFO": f"/{repo.name}{rest}",
        "QUERY_STRING": query,
        "REQUEST_METHOD": handler.command,
        "CONTENT_TYPE": handler.headers.get("Content-Type", ""),
        "CONTENT_LENGTH": str(len(body)),
        "REMOTE_USER": "x-access-token",  # lets http-backend accept pushes
        "REMOTE_ADDR": "127.0.0.1",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(repo.parent),
    }
    for header, variable in (("Content-Encoding", "HTTP_CONTENT_ENCODING"), ("Git-Protocol", "GIT_PROTOCOL")):
        if handler.headers.get(header):
            env[variable] = handler.headers[header]
    proc = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, check=False)
    head, _, output = proc.stdout.partition(b"\r\n\r\n")
    if not _:
        head, _, output = proc.stdout.partition(b"\n\n")
    status, headers = 200, {}
    for line in head.decode("latin-1").splitlines():
        name, _, value = line.partition(":")
        if name.lower() == "status":
            status = int(value.strip().split()[0])
        elif name:
            headers[name] = value.strip()
    return status, headers, output


def _send(
    handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str] | None = None
) -> None:
    handler.send_response(status)
    for name, value in (headers or {}).items():
        if name.lower() != "content-length":
            handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _fail(handler: BaseHTTPRequestHandler, kind: str) -> None:
    if kind in ("reset", "timeout"):
        # an answer starts (so that curl does not quietly send the request again), then the
        # connection drops, or stalls until git gives up (GIT_HTTP_LOW_SPEED_TIME)
        handler.send_response(200)
        handler.send_header("Content-Type", "application/x-git-receive-pack-result")
        handler.send_header("Content-Length", "4096")
        handler.end_headers()
        handler.wfile.flush()
        if kind == "timeout":
            time.sleep(4)  # git gives up after about two seconds in these tests
        handler.close_connection = True
        handler.connection.shutdown(socket.SHUT_RDWR)
        return
    status = {"secondary": 403, "primary": 403, "429": 429}.get(kind) or int(kind)
    _send(handler, status, f"{status} error\n".encode())


# ------------------------------------------------------------------ a whole world for a test

TOKEN = "ghp_faketoken0123456789abcdefghijklmnop"


def pipeline(
    repo: str = "{url: https://github.com/org/platform}", qa: str = "auto", prod: str = "auto"
) -> str:
    return build_pipeline(
        stage("dev", gates="[{soak: 30s}]"), stage("qa", merge=qa), stage("prod", merge=prod), platform=repo
    )


@dataclass
class World:
    """A control plane and a platform repo on a fake GitHub, with git over loopback HTTP."""

    clock: FakeClock
    fake: FakeGitHub
    git: GitServer
    control_plane: Path
    platform: Path
    mock: responses.RequestsMock
    api_url: str

    @property
    def platform_prs(self) -> list[dict[str, Any]]:
        return self.fake.prs("org/platform")

    def statuses(self, sha: str) -> dict[str, str]:
        return {c: s["state"] for c, s in self.fake.latest_statuses("org/control-plane", sha).items()}

    def close(self) -> None:
        self.mock.stop()
        self.mock.reset()
        self.git.stop()


def make_world(
    factory: Any,
    monkeypatch: Any,
    *,
    qa: str = "auto",
    prod: str = "auto",
    ghes: bool = False,
    git_token: str | Callable[[str], bool] | None = None,
    token: str | None = TOKEN,
    git_http: bool = False,
) -> World:
    """Repos from ``factory`` on the fake GitHub (``responses``), git on a loopback server, and
    the CLI's clock made fake. ``ghes``: a GitHub Enterprise Server at the loopback address,
    with ``forge: github``; otherwise github.com URLs that git rewrites to the bare repo (or, with
    ``git_http``, to the loopback server, slower but where pushes can fail)."""
    clock = FakeClock(start=0.0)
    git = GitServer({"/org/platform.git": factory.platform}, token=git_token)
    if ghes:
        repo, api_url, web_url = (
            f"{{url: {git.url}/org/platform, forge: github}}",
            f"{git.url}/api/v3",
            git.url,
        )
    else:
        repo, api_url, web_url = (
            "{url: https://github.com/org/platform}",
            "https://api.github.com",
            "https://github.com",
        )
    files = {"promoter.yaml": pipeline(repo, qa, prod), "workloads/app.yaml": WORKLOAD}
    path = factory.create(main=files, platform_branches=("dev", "qa", "prod"))
    fake = FakeGitHub(clock, api_url=api_url, web_url=web_url, tokens=(token,) if token else ())
    fake.add_repo("org/platform", factory.platform)
    fake.add_repo("org/control-plane", path)
    mock = responses.RequestsMock(assert_all_requests_are_fired=False)
    fake.install(mock)
    mock.start()
    monkeypatch.setattr("promoter.clock.RealClock", lambda: clock)
    for name in (
        "GITHUB_API_URL",
        "PROMOTER_GITHUB_APP_ID",
        "PROMOTER_GITHUB_APP_PRIVATE_KEY",
        "PROMOTER_GITHUB_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
    if token:
        monkeypatch.setenv("PROMOTER_GITHUB_TOKEN", token)
    monkeypatch.setenv("GIT_HTTP_LOW_SPEED_LIMIT", "1000")  # a stalled answer times out in about 2 s
    monkeypatch.setenv("GIT_HTTP_LOW_SPEED_TIME", "1")
    if not ghes:  # git's own URL rewriting: to the loopback server, or straight to the repo
        target = f"{git.url}/org/platform.git" if git_http else str(factory.platform)
        monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
        monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.{target}.insteadOf")
        monkeypatch.setenv("GIT_CONFIG_VALUE_0", "https://github.com/org/platform.git")
    return World(clock, fake, git, path, factory.platform, mock, api_url)
