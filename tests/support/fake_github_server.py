"""The fake GitHub over real HTTP on 127.0.0.1, for promoter processes the tests start.

``FakeGitHub`` answers ``responses`` callbacks inside the test process. A promoter that runs as
a real subprocess (to be killed with SIGKILL, or to have its every output scanned) cannot be
reached that way, so ``FakeGitHubServer`` puts the same fake behind a loopback HTTP server: each
request becomes the request object the fake's callback already takes, and the fake's answer (or
its fault) goes back on the socket. There is one fake, with one set of rules; this is only its
transport. Git goes to ``tests.support.fake_github.GitServer`` as before.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import requests

from promoter.clock import FakeClock
from tests.support.fake_github import FakeGitHub


@dataclass
class _Request:
    """What ``FakeGitHub._handle`` reads of a request (the shape of ``requests``' own)."""

    method: str
    url: str
    headers: dict[str, str]
    body: bytes


class FakeGitHubServer:
    """``FakeGitHub`` at ``http://127.0.0.1:<port>/api/v3`` (a GitHub Enterprise Server's API)."""

    def __init__(self, clock: FakeClock | None = None, *, tokens: tuple[str, ...] = ()) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as GitHub and PyGithub's session use

            def do_GET(self) -> None:
                server._serve(self)

            do_POST = do_PATCH = do_PUT = do_DELETE = do_GET

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.fake = FakeGitHub(
            clock or FakeClock(start=0.0), api_url=f"{self.url}/api/v3", web_url=self.url, tokens=tokens
        )
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def api_url(self) -> str:
        return self.fake.api_url

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        request = _Request(
            handler.command,
            self.url + handler.path,
            {name: value for name, value in handler.headers.items()},
            handler.rfile.read(length) if length else b"",
        )
        try:
            status, headers, text = self.fake._handle(request)
        except requests.RequestException:
            # the fake's "reset" and "timeout" faults: the connection drops without an answer
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return
        body = text.encode()
        handler.send_response(status)
        for name, value in headers.items():
            if name.lower() != "content-length":
                handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if handler.command != "HEAD" and status != 304:
            handler.wfile.write(body)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away (a killed promoter) is what these tests are about
