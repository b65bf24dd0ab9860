"""A Helm repository and an OCI registry on 127.0.0.1, in one tiny http.server: ``index.yaml``
under ``/charts/``, and the distribution spec's ``/v2/`` endpoints (manifests by tag, tag
lists), with one repository behind the registry token flow (401 + ``WWW-Authenticate:
Bearer realm=...``), as Docker Hub and GHCR answer anonymous pulls."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

INDEX = b"""apiVersion: v1
entries:
  podinfo:
    - {name: podinfo, version: 6.5.0, urls: [podinfo-6.5.0.tgz]}
    - {name: podinfo, version: 6.4.1, urls: [podinfo-6.4.1.tgz]}
generated: "2026-01-01T00:00:00Z"
"""
TAGS = {"team/app": ["1.0", "latest"], "charts/podinfo": ["6.5.0"], "private/app": ["2.0"]}
PRIVATE = "private/app"
TOKEN = "anonymous-pull-token"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _answer(self, *, body: bool) -> None:
        self.server.paths.append(self.path)
        status, data, headers = self._route()
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _route(self) -> tuple[int, bytes, dict[str, str]]:
        path = self.path.split("?", 1)[0]
        if path == "/charts/index.yaml":
            return 200, INDEX, {"Content-Type": "application/x-yaml"}
        if path == "/token":
            return 200, json.dumps({"token": TOKEN}).encode(), {"Content-Type": "application/json"}
        if path.startswith("/v2/"):
            return self._registry(path[4:])
        return 404, b"not found", {}

    def _registry(self, rest: str) -> tuple[int, bytes, dict[str, str]]:
        name, kind, ref = _split(rest)
        if name == PRIVATE and self.headers.get("Authorization") != f"Bearer {TOKEN}":
            realm = f"http://127.0.0.1:{self.server.server_address[1]}/token"
            challenge = f'Bearer realm="{realm}",service="registry",scope="repository:{name}:pull"'
            return 401, b'{"errors": [{"code": "UNAUTHORIZED"}]}', {"WWW-Authenticate": challenge}
        if name not in TAGS:
            return 404, b'{"errors": [{"code": "NAME_UNKNOWN"}]}', {}
        if kind == "tags":
            return 200, json.dumps({"name": name, "tags": TAGS[name]}).encode(), {}
        if kind == "manifests" and ref in TAGS[name]:
            manifest = b'{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json"}'
            return 200, manifest, {"Content-Type": "application/vnd.oci.image.manifest.v1+json"}
        return 404, b'{"errors": [{"code": "MANIFEST_UNKNOWN"}]}', {}


def _split(rest: str) -> tuple[str, str, str]:
    """``team/app/manifests/1.0`` -> (``team/app``, ``manifests``, ``1.0``)."""
    for kind in ("/manifests/", "/tags/"):
        if kind in rest:
            name, _, ref = rest.partition(kind)
            return name, kind.strip("/"), ref
    return rest, "", ""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    paths: list[str]


@contextmanager
def source_server() -> Iterator[_Server]:
    """The server, listening on 127.0.0.1 (its port in ``server_address``), ``paths`` the
    requests it answered."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.paths = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def bare_repo(root: Path) -> Path:
    """``root/app.git``: a bare repo whose ``main`` holds one manifest, a git source to ask."""
    work, repo = root / "work", root / "app.git"
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    (work / "k.yaml").write_text("kind: x\n")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(repo)], check=True)
    return repo
