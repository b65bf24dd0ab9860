"""The pages' HTML, read as a parser reads it, on both engines: one header row per table and
every row as wide as it, no raw Python value in a cell, counts that agree with the rollout, the
per-cluster state with "failing since" and the failing reconciler's message, the head's
"since", commits linked to the platform repo when its URL is a web page, and which controller
reports for each cluster."""

from __future__ import annotations

import re
import time
from html.parser import HTMLParser
from typing import Any

import requests

from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from tests.support.hub_support import (
    LiveHub,
    argocd_app,
    argocd_template_body,
    flux_stream_event,
    post_argocd_body,
    post_flux_body,
    register,
    rfc3339,
)

M0, M = "0" * 40, "1" * 40
REPO = "https://github.com/example/platform-gitops"
PAGES = ("/", "/environments/dev", "/clusters/edge-2", "/history", "/discrepancies", "/drift", "/stale")


class Tables(HTMLParser):
    """Each table's rows, each row's cells as (tag, text, attributes, links)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, Any]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append({"class": dict(attrs).get("class"), "rows": []})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th") and self.tables:
            self._cell = []
            self.tables[-1]["rows"][-1].append(
                {"tag": tag, "attrs": dict(attrs), "links": [], "text": self._cell}
            )
        elif tag == "a" and self._cell is not None:
            self.tables[-1]["rows"][-1][-1]["links"].append(dict(attrs).get("href"))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _tables(html: str) -> list[dict[str, Any]]:
    parser = Tables()
    parser.feed(html)
    for table in parser.tables:
        for row in table["rows"]:
            for cell in row:
                cell["text"] = " ".join("".join(cell["text"]).split())
    return parser.tables


def _world(live: LiveHub) -> None:
    now = time.time()
    for sha, parent, at in ((M0, None, now - 900), (M, M0, now - 600)):
        record_commit(
            live.db,
            CommitRecord(
                "dev", sha, "dev", parent, sha[0] * 40, None, (("small", "hello"),), ("dev", "prod"), REPO
            ),
            at,
        )
    record_commit(live.db, CommitRecord("prod", M0, "prod", None, "0" * 40), now - 900)
    for name, revision, severity in (("edge-1", M, "info"), ("edge-2", M, "error"), ("edge-3", M0, "info")):
        key = register(live.db, name)
        reason = "ReconciliationSucceeded" if severity == "info" else "HealthCheckFailed"
        message = (
            "Reconciliation finished in 1s, next run in 10m0s"
            if severity == "info"
            else ("Deployment/apps/web: timeout & <no progress>")
        )
        body, header = flux_stream_event(
            "Kustomization",
            "platform",
            reason,
            message,
            rfc3339(now - 100),
            severity=severity,
            revision=f"dev@sha1:{revision}",
        )
        assert post_flux_body(live.url, name, key, body, header).status_code == 201
    key = register(live.db, "argo-1")
    body = argocd_template_body(argocd_app(M, reconciled_at=rfc3339(now - 50)))
    assert post_argocd_body(live.url, "argo-1", key, body).status_code == 201
    register(live.db, "prod-1", environment="prod")  # never reports: stale


def _page(live: LiveHub, path: str) -> str:
    answer = requests.get(live.url + path, timeout=10)
    assert answer.status_code == 200, path
    return answer.text


def test_every_table_has_one_header_and_aligned_rows_and_no_raw_values(live_hub: LiveHub) -> None:
    _world(live_hub)
    for path in PAGES:
        for table in _tables(_page(live_hub, path)):
            # A table named like a state would be painted in that state's colour.
            assert table["class"] not in ("success", "failed", "failure", "pending", "stale"), path
            header, *rows = table["rows"]
            assert all(c["tag"] == "th" for c in header), (path, table["class"])
            width = len(header)
            for row in rows:
                assert all(c["tag"] == "td" for c in row), (path, table["class"], row)
                span = sum(int(c["attrs"].get("colspan") or 1) for c in row)
                assert span == width, (path, table["class"], [c["text"] for c in row])
                for cell in row:
                    assert cell["text"] not in ("False", "True", "None", "{}", "[]"), (path, cell)


def test_environment_page_agrees_with_the_rollout_and_says_why_a_cluster_fails(live_hub: LiveHub) -> None:
    _world(live_hub)
    html = _page(live_hub, "/environments/dev")
    tables = {t["class"]: t["rows"] for t in _tables(html)}
    rollout = {r[0]["text"]: [c["text"] for c in r[1:8]] for r in tables["rollout"][1:]}
    assert rollout["small"] == [
        "failed",
        "4",
        "2",
        "1",
        "1",
        "0",
        "50.0%",
    ]  # edge-1, argo-1 | edge-2 | edge-3
    assert [c["text"] for c in tables["targets"][1]] == ["small", "hello", "2 of 4"]
    header = [c["text"] for c in tables["clusters"][0]]
    rows = {r[0]["text"]: {header[i]: c for i, c in enumerate(r)} for r in tables["clusters"][1:]}
    assert {n: r["state at head"]["text"] for n, r in rows.items()} == {
        "argo-1": "healthy",
        "edge-1": "healthy",
        "edge-2": "failed",
        "edge-3": "behind",  # pending, and still at M0: nothing of the head runs there yet
    }
    assert rows["argo-1"]["via"]["text"] == "Argo CD" and rows["edge-1"]["via"]["text"] == "Flux"
    failing = rows["edge-2"]["failing"]["text"]
    assert failing == "Kustomization/flux-system/platform: Deployment/apps/web: timeout & <no progress>"
    since = rows["edge-2"]["failing since"]["text"]
    assert re.fullmatch(r"(just now|\d+ s ago) \(\d\d:\d\d:\d\d UTC\)", since)  # the hub's receipt, with zone
    assert rows["edge-1"]["failing since"]["text"] == "-"
    assert rows["edge-1"]["platform commit"]["links"] == [f"{REPO}/commit/{M}"]
    # A rollout with a failed cluster says so, and not "rolling out".
    text = " ".join(html.split())
    assert "Failed: 1 of 4 clusters failed" in text and "2 run it" in text and "Rolling out" not in text


def test_the_head_says_since_when_it_runs_everywhere(live_hub: LiveHub) -> None:
    now = time.time()
    record_commit(
        live_hub.db, CommitRecord("dev", M, "dev", None, "m" * 40, None, (), ("dev",), REPO), now - 300
    )
    key = register(live_hub.db, "edge-1")
    body, header = flux_stream_event(
        "Kustomization",
        "platform",
        "ReconciliationSucceeded",
        "Reconciliation finished in 1s, next run in 10m0s",
        rfc3339(now - 120),
        revision=f"dev@sha1:{M}",
    )
    assert post_flux_body(live_hub.url, "edge-1", key, body, header).status_code == 201
    html = _page(live_hub, "/")
    assert "Running on all 1 cluster since" in html and "Rolling out" not in html
    assert f'href="{REPO}/commit/{M}"' in html


def test_no_link_when_the_platform_repo_is_not_a_web_page(live_hub: LiveHub) -> None:
    record_commit(live_hub.db, CommitRecord("dev", M, "dev", None, None, None, (), ("dev",)), time.time())
    html = _page(live_hub, "/")
    assert "/commit/" not in html and M[:12] in html


def test_html_is_escaped(hub_db: Database) -> None:
    from promoter.hub.pages import render

    page = render(
        "history",
        [
            {
                "receivedAt": 1.0,
                "cluster": "<b>x</b>",
                "environment": "dev",
                "source": "flux",
                "reconciler": "K/<i>",
                "state": "failure",
                "revision": "",
                "reason": "r",
                "message": "<script>alert(1)</script>",
            }
        ],
        2.0,
    )
    assert "<script>alert" not in page and "&lt;script&gt;" in page and "<b>x</b>" not in page
    assert page.count("<script>") == 1  # the page's own refresh script, and nothing a cluster sent


def test_the_platform_repos_web_page_is_read_from_its_git_url() -> None:
    from promoter.gates.hubapi import repo_web_url

    assert repo_web_url("https://x-access-token:ghs_secret@github.com/org/platform.git") == (
        "https://github.com/org/platform"
    )
    assert (
        repo_web_url("git@github.example.com:org/platform.git") == "https://github.example.com/org/platform"
    )
    assert repo_web_url("ssh://git@gitlab.com/group/sub/platform") == "https://gitlab.com/group/sub/platform"
    assert repo_web_url("/srv/git/platform") == "" and repo_web_url("file:///srv/git/platform") == ""
