"""What a page shows of a long read, on both engines: an environment's first clusters and its
first failing ones, each environment's first failing ones on the overview, the longest failing on
/failing, each with how many there are in all and a link to them; ``?all=1`` lists them all; the
JSON still answers in full. And the page's reads agree with the full reads wherever they show the
same thing, "since when the head runs everywhere" included (read without every cluster's times)."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
import requests

from promoter.hub import keys, shown
from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from promoter.hub.payloads import Report
from promoter.hub.reads import read, read_page
from promoter.hub.store import store_report
from tests.support.hub_support import LiveHub

M0, M = "0" * 40, "1" * 40
T = 1_000_000.0


def _report(db: Database, cluster: str, reconciler: str, state: str, revision: str, at: float) -> None:
    with db.transaction() as tx:
        found = keys.cluster(tx, cluster)
    assert found is not None
    report = Report("native", reconciler, "apply", state, revision, "dev", state, f"{state} at {at}", None)  # type: ignore[arg-type]
    store_report(db, found, report, f"{cluster}-{reconciler}-{revision}-{state}-{at}", at)


def _commits(db: Database, base: float = T) -> None:
    for sha, parent, at in ((M0, None, base - 500), (M, M0, base)):
        record_commit(db, CommitRecord("dev", sha, "dev", parent, f"main-{sha[0]}", None, (), ("dev",)), at)


def _fleet(db: Database, base: float = T) -> None:
    """Seven clusters of dev: c1, c3, c5 failing (c5 longest, then c3, then c1), the rest running M."""
    _commits(db, base)
    for i in range(1, 8):
        keys.add_cluster_key(db, f"c{i}", "dev", "small" if i % 2 else "large")
    for i in range(1, 8):
        failing = i in (1, 3, 5)
        _report(db, f"c{i}", "platform", "failure" if failing else "success", M, base + 100 - 10 * i)


def _rows(html: str, table: str) -> list[str]:
    body = html.split(f'<table class="{table}">', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr data-cluster="([^"]+)"', body)


def _failing_named(html: str, section: str) -> list[str]:
    part = html.split(section, 1)[1].split('<ul class="failing">', 1)[-1]  # past a failure's commands
    return re.findall(r'<li data-cluster="([^"]+)"', part.split("</ul>", 1)[0])


@pytest.fixture
def bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shown, "ROWS", 2)
    monkeypatch.setattr(shown, "FAILING", 2)


def _get(live: LiveHub, path: str) -> str:
    answer = requests.get(live.url + path, timeout=10)
    assert answer.status_code == 200, path
    return answer.text


def test_an_environments_page_lists_its_first_clusters_and_says_how_many(
    live_hub: LiveHub, bounds: None
) -> None:
    _fleet(live_hub.db, time.time() - 200)
    html = _get(live_hub, "/environments/dev")
    assert _rows(html, "clusters") == ["c2", "c4"]  # by type, then name: large first
    assert "The first 2 of 7 clusters, by type and name" in html and 'href="?all=1">all 7</a>' in html
    assert 'href="/failing?environment=dev">failing</a>' in html
    # The two failing longest, in the table's order; the third is counted and linked.
    assert _failing_named(html, "</h1>") == ["c3", "c5"]
    assert (
        "And 1 more:" in html and 'href="/failing?environment=dev">every failing cluster of dev</a>' in html
    )
    everyone = _get(live_hub, "/environments/dev?all=1")
    assert _rows(everyone, "clusters") == ["c2", "c4", "c6", "c1", "c3", "c5", "c7"]
    assert "The first" not in everyone
    answer = requests.get(f"{live_hub.url}/v1/environments/dev", timeout=10).json()
    assert len(answer["clusters"]) == 7 and "clustersTotal" not in answer  # the JSON in full


def test_the_overview_and_failing_pages_name_the_longest_failing_and_count_the_rest(
    live_hub: LiveHub, bounds: None
) -> None:
    _fleet(live_hub.db, time.time() - 200)
    overview = _get(live_hub, "/")
    assert "3 clusters failing" in overview
    assert _failing_named(overview, 'data-environment="dev"') == ["c5", "c3"]
    assert "And 1 more:" in overview
    failing = _get(live_hub, "/failing")
    assert "3 clusters with a failing reconciler now" in failing
    assert _rows(failing, "failing-clusters") == ["c5", "c3"]
    assert "The 2 failing longest of 3" in failing and 'href="?all=1">1 more, show all</a>' in failing
    assert _rows(_get(live_hub, "/failing?all=1"), "failing-clusters") == ["c5", "c3", "c1"]
    scoped = _get(live_hub, "/failing?environment=dev")
    assert 'href="?all=1&amp;environment=dev">1 more, show all</a>' in scoped
    assert len(requests.get(f"{live_hub.url}/v1/failing", timeout=10).json()) == 3


def _without_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if k not in ("timeToPercent", "runningSince")}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def _agree(db: Database, now: float, stale_after: float) -> None:
    """The page's reads, unbounded, show what the full reads do."""
    page = read_page(db, "environments", {}, now, stale_after)
    full = read(db, "environments", {}, now, stale_after)
    assert [e.pop("failingTotal") for e in page] == [len(e["failing"]) for e in full]
    assert [e["head"]["runningSince"] for e in page] == [e["head"]["runningSince"] for e in full]
    assert _without_times(page) == _without_times(full)
    one = read_page(db, "environment", {"name": "dev", "all": "1"}, now, stale_after)
    whole = read(db, "environment", {"name": "dev"}, now, stale_after)
    failing = [c for c in whole["clusters"] if c["failingReconciler"]]
    assert (one.pop("failing"), one.pop("failingTotal")) == (failing, len(failing))
    assert one.pop("clustersTotal") == len(whole["clusters"])
    assert _without_times(one) == _without_times(whole)
    listed = read_page(db, "failing", {"all": "1"}, now, stale_after)
    assert list(listed) == read(db, "failing", {}, now, stale_after) and listed.total == len(listed)


def test_the_pages_reads_agree_with_the_full_reads_while_rolling_out(hub_db: Database) -> None:
    _fleet(hub_db)
    _agree(hub_db, T + 200, 86400)


def test_since_when_the_head_runs_everywhere_is_read_without_every_clusters_times(hub_db: Database) -> None:
    _commits(hub_db)
    for name, cluster_type in (("a1", "small"), ("a2", "small"), ("b1", "large"), ("x1", "small")):
        keys.add_cluster_key(hub_db, name, "dev", cluster_type)
    for name, at in (("a1", T + 10), ("a2", T + 20), ("b1", T + 30.04), ("x1", T + 40)):
        _report(hub_db, name, "platform", "success", M, at)
    for name in ("a1", "a2", "b1"):  # heard since; x1, the last to succeed, falls silent: stale
        _report(hub_db, name, "platform", "success", M, T + 1000)
    now, stale_after = T + 1100, 600
    page = read_page(hub_db, "environments", {}, now, stale_after)
    assert page[0]["head"]["runningSince"] == T + 30.0  # b1's, as the times to 100% say
    assert "timeToPercent" not in page[0]["rollout"]["clusterTypes"]["small"]
    _agree(hub_db, now, stale_after)
    # A success kept without its receipt (from before the hub recorded receipts): every time read.
    with hub_db.transaction() as tx:
        tx.run("UPDATE deployments SET first_success_received = NULL WHERE cluster = 'a1'")
    assert (
        "timeToPercent"
        in read_page(hub_db, "environments", {}, now, stale_after)[0]["rollout"]["clusterTypes"]["small"]
    )
    _agree(hub_db, now, stale_after)
