"""Reads restricted: a hub served with --require-read-key answers its API and pages only to a
reader's (or a promoter's) key, as a Bearer token or a browser's Basic password; ingest and
/healthz are unchanged; and serve warns when it listens beyond loopback with reads open."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import time

import requests
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.hub import keys
from promoter.hub.db import Database
from promoter.hub.server import is_loopback
from tests.support.hub_support import LiveHub, flux_event, free_port, post_flux, register


def test_reads_need_a_reader_or_promoter_key(hub_db: Database) -> None:
    reader = keys.add_reader_key(hub_db, "grafana")[1]
    promoter = keys.add_promoter_key(hub_db, "ci")[1]
    cluster = register(hub_db, "edge-1")
    with LiveHub(hub_db, require_read_key=True) as live:
        assert post_flux(live.url, "edge-1", cluster, flux_event(f"dev@sha1:{'1' * 40}")).status_code == 201
        assert requests.get(f"{live.url}/healthz", timeout=10).status_code == 200
        bare = requests.get(f"{live.url}/v1/clusters", timeout=10)
        assert bare.status_code == 401 and "reads need a key" in bare.json()["error"]
        page = requests.get(f"{live.url}/", timeout=10)
        assert page.status_code == 401 and page.headers["WWW-Authenticate"].startswith("Basic")
        assert "edge-1" not in page.text
        for key in (reader, promoter):
            answer = requests.get(
                f"{live.url}/v1/clusters", headers={"Authorization": f"Bearer {key}"}, timeout=10
            )
            assert answer.status_code == 200 and answer.json()[0]["name"] == "edge-1"
        basic = base64.b64encode(f"me:{reader}".encode()).decode()
        browser = requests.get(
            f"{live.url}/clusters/edge-1", headers={"Authorization": f"Basic {basic}"}, timeout=10
        )
        assert browser.status_code == 200 and "Cluster edge-1" in browser.text
        wrong = requests.get(
            f"{live.url}/v1/clusters", headers={"Authorization": f"Bearer {cluster}"}, timeout=10
        )
        assert wrong.status_code == 401 and "unknown or revoked" in wrong.json()["error"]
        by_cli = CliRunner().invoke(
            cli, ["hub", "clusters", "--url", live.url, "-o", "json"], env={"PROMOTER_HUB_READ_KEY": reader}
        )
        assert by_cli.exit_code == 0 and '"edge-1"' in by_cli.output
        refused = CliRunner().invoke(
            cli, ["hub", "clusters", "--url", live.url], env={"PROMOTER_HUB_READ_KEY": ""}
        )
        assert refused.exit_code == 2 and "401" in refused.output
    keys.revoke(hub_db, "grafana")
    with LiveHub(hub_db, require_read_key=True) as live:
        gone = requests.get(
            f"{live.url}/v1/clusters", headers={"Authorization": f"Bearer {reader}"}, timeout=10
        )
        assert gone.status_code == 401


def test_serve_warns_when_reads_are_open_beyond_loopback(tmp_path) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3")
    port = free_port()
    command = [sys.executable, "-m", "promoter", "hub", "serve", "--database", str(tmp_path / "hub.sqlite3")]
    server = subprocess.Popen(
        [*command, "--listen", f"0.0.0.0:{port}"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and server.stderr is not None:
            line = server.stderr.readline()
            lines.append(line)
            if "serving" in line or not line:
                break
    finally:
        server.terminate()
        server.wait(20)
    text = "".join(lines)
    assert "reads are open" in text and "--require-read-key" in text, text
