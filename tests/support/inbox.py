"""A webhook receiver on loopback HTTP: each POST's path, headers and body, as it arrived.

``status`` is what it answers (200 unless a test makes it a receiver that is down, 503): the
requests it answered 2xx are in ``received``, the others in ``refused``."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Inbox(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        self.refused: list[tuple[str, dict[str, str], bytes]] = []
        self.status = 200

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        assert isinstance(self.server, Inbox)
        status = self.server.status
        kept = self.server.received if 200 <= status < 300 else self.server.refused
        kept.append((self.path, dict(self.headers), body))
        self.send_response(status)
        if 300 <= status < 400:
            self.send_header("Location", "/elsewhere")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass
