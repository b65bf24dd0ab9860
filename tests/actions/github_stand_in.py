"""A loopback stand-in for the parts of GitHub's REST API the workflows call themselves: a
repository's Actions variables (what arms the heartbeat) and ``repository_dispatch`` (what the
platform repo's workflow and the hub send). Real HTTP on 127.0.0.1, GitHub's shapes and status
codes, a Bearer token required, so ``curl`` in a workflow step and the promoter's own GitHub
layer both reach it as they would reach GitHub (``GITHUB_API_URL``)."""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STAMP = "2026-11-26T20:00:00Z"
VARIABLE = re.compile(r"/repos/([^/]+/[^/]+)/actions/variables(?:/([^/]+))?")
DISPATCH = re.compile(r"/repos/([^/]+/[^/]+)/dispatches")
STATUSES = re.compile(r"/repos/([^/]+/[^/]+)/commits/([0-9a-f]{40})/statuses")


@dataclass
class GitHubStandIn:
    variables: dict[str, dict[str, str]] = field(default_factory=dict)  # repo -> name -> value
    dispatches: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (repo, body)
    requests: list[str] = field(default_factory=list)  # "VERB path"
    statuses: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)  # newest first
    url: str = ""

    def start(self) -> GitHubStandIn:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                stand_in._serve(self)

            do_POST = do_PATCH = do_GET

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/api/v3"
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def post_status(self, repo: str, sha: str, context: str, state: str, at: float) -> None:
        """A commit status, as a cluster's reconciler posts it (``at``: seconds since the epoch)."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))
        mine = self.statuses.setdefault((repo, sha), [])
        mine.insert(0, {"id": len(mine) + 1, "state": state, "context": context, "description": "",
                        "target_url": None, "created_at": stamp, "updated_at": stamp})  # fmt: skip

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        body = json.loads(h.rfile.read(length) or b"null") if length else None
        path = h.path.split("?", 1)[0].removeprefix("/api/v3")
        self.requests.append(f"{h.command} {path}")
        if not h.headers.get("Authorization", "").removeprefix("Bearer ").removeprefix("token ").strip():
            return _answer(
                h,
                401,
                {"message": "Requires authentication", "documentation_url": "https://docs.github.com/rest"},
            )
        status, answer = self._route(h.command, path, body)
        _answer(h, status, answer)

    def _route(self, verb: str, path: str, body: Any) -> tuple[int, Any]:
        if (m := STATUSES.fullmatch(path)) and verb == "GET":
            return 200, self.statuses.get((m.group(1), m.group(2)), [])[:1]  # per_page=1: the newest
        if (m := DISPATCH.fullmatch(path)) and verb == "POST":
            if not isinstance(body, dict) or not body.get("event_type"):
                return 422, {"message": 'Invalid request.\n\n"event_type" wasn\'t supplied.'}
            self.dispatches.append((m.group(1), body))
            return 204, None
        m = VARIABLE.fullmatch(path)
        if m is None:
            return 404, {"message": "Not Found"}
        mine = self.variables.setdefault(m.group(1), {})
        name = m.group(2)
        if verb == "GET" and name:
            if name not in mine:
                return 404, {"message": "Not Found"}
            return 200, {"name": name, "value": mine[name], "created_at": STAMP, "updated_at": STAMP}
        if verb == "PATCH" and name:
            if name not in mine:
                return 404, {"message": "Not Found"}
            mine[name] = str(body["value"])
            return 204, None
        if verb == "POST" and not name:
            if body["name"] in mine:
                return 409, {"message": "Already exists - Variable already exists"}
            mine[body["name"]] = str(body["value"])
            return 201, {}
        return 404, {"message": "Not Found"}


def _answer(h: BaseHTTPRequestHandler, status: int, answer: Any) -> None:
    data = b"" if answer is None else json.dumps(answer).encode()
    h.send_response(status)
    h.send_header("Content-Type", "application/json; charset=utf-8")
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)
