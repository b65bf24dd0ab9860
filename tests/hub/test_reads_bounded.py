"""/drift, /stale and /discrepancies as their pages show them, on both engines: the first
``shown.ROWS`` rows in the full read's order, how many there are in all and a link to them all
(``?all=1``, keeping the page's filter and, through ``pages.keep_query``, how it is read); with
``?all=1`` every row, the same as the JSON's, which still answers in full."""

from __future__ import annotations

import re
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
NOW = T + 200


def _report(db: Database, cluster: str, state: str, revision: str, at: float) -> None:
    with db.transaction() as tx:
        found = keys.cluster(tx, cluster)
    assert found is not None
    report = Report("native", "platform", "apply", state, revision, "dev", state, f"{state} at {at}", None)  # type: ignore[arg-type]
    store_report(db, found, report, f"{cluster}-{revision}-{state}-{at}", at)


def _fleet(db: Database) -> None:
    """dev, at M: c1 and c2 at M0 (behind), c3 never reported, c1 and c5 silent an hour (stale
    at the default 30 minutes), c4, c6, c7 failing at M (c4 longest); q1 of qa, which has no
    platform commit (off its head, and never reported)."""
    for sha, parent, at in ((M0, None, T - 5000), (M, M0, T - 4000)):
        record_commit(db, CommitRecord("dev", sha, "dev", parent, f"main-{sha[0]}", None, (), ("dev",)), at)
    for i in range(1, 8):
        keys.add_cluster_key(db, f"c{i}", "dev", "small" if i % 2 else "large")
    keys.add_cluster_key(db, "q1", "qa", "small")
    for name, state, revision, at in (
        ("c1", "success", M0, T - 3600),
        ("c2", "success", M0, T),
        ("c5", "success", M, T - 3600),
        ("c4", "failure", M, T + 10),
        ("c6", "failure", M, T + 20),
        ("c7", "failure", M, T + 30),
    ):
        _report(db, name, state, revision, at)


@pytest.fixture
def bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shown, "ROWS", 2)


def _names(rows: list[dict[str, Any]]) -> list[str]:
    return [str(r["name"]) for r in rows]


def test_the_fleet_has_more_of_each_than_a_page_shows(hub_db: Database) -> None:
    _fleet(hub_db)
    assert _names(read(hub_db, "drift", {}, NOW, 1800)) == ["c2", "c1", "c3", "q1"]  # large first
    assert _names(read(hub_db, "stale", {}, NOW, 1800)) == ["c1", "c3", "c5", "q1"]
    assert _names(read(hub_db, "failing", {}, NOW, 1800)) == ["c4", "c6", "c7"]


@pytest.mark.parametrize("name", ["drift", "stale"])
@pytest.mark.parametrize("params", [{}, {"environment": "dev"}, {"env": "qa"}, {"environment": "none"}])
def test_a_lists_page_shows_its_first_rows_of_the_full_read_and_counts_them_all(
    hub_db: Database, bounds: None, name: str, params: dict[str, str]
) -> None:
    _fleet(hub_db)
    full = read(hub_db, name, params, NOW, 1800)
    page = read_page(hub_db, name, params, NOW, 1800)
    assert list(page) == full[:2] and page.total == len(full)
    assert page.environment == (params.get("environment") or params.get("env"))
    everyone = read_page(hub_db, name, {**params, "all": "1"}, NOW, 1800)
    assert list(everyone) == full and everyone.total == len(full)
    # read the same way: ?staleAfter=2h leaves only the clusters that never reported stale
    later = read_page(hub_db, name, {**params, "all": "1"}, NOW, 7200)
    assert list(later) == read(hub_db, name, params, NOW, 7200)


def test_the_discrepancies_page_shows_the_first_of_each_kind_and_counts_each(
    hub_db: Database, bounds: None
) -> None:
    _fleet(hub_db)
    full = read(hub_db, "discrepancies", {}, NOW, 1800)
    page = read_page(hub_db, "discrepancies", {}, NOW, 1800)
    for kind in ("promotion", "drift", "failing"):
        every = [i for i in full if i["kind"] == kind]
        assert [i for i in page if i["kind"] == kind] == every[:2] and page.counts[kind] == len(every)
    assert page.counts == {"promotion": 0, "drift": 4, "failing": 3} and page.total == len(full)
    everyone = read_page(hub_db, "discrepancies", {"all": "1"}, NOW, 1800)
    assert list(everyone) == full and everyone.counts == page.counts


def _rows(html: str, table: str) -> list[str]:
    body = html.split(f'<table class="{table}">', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr data-cluster="([^"]+)"', body)


def _get(live: LiveHub, path: str) -> str:
    answer = requests.get(live.url + path, timeout=10)
    assert answer.status_code == 200, path
    return answer.text


@pytest.fixture
def live(hub_db: Database) -> Any:
    _fleet(hub_db)
    with LiveHub(hub_db, clock=lambda: NOW) as hub:
        yield hub


def test_the_drift_and_stale_pages_say_how_many_more_and_link_to_all(live: LiveHub, bounds: None) -> None:
    drift = _get(live, "/drift")
    assert _rows(drift, "drift") == ["c2", "c1"]
    assert "4 clusters not at their environment's head" in drift
    assert 'The first 2 of 4:\n<a href="?all=1">2 more, show all</a>' in drift
    assert _rows(_get(live, "/drift?all=1"), "drift") == ["c2", "c1", "c3", "q1"]
    assert "more, show all" not in _get(live, "/drift?all=1")
    stale = _get(live, "/stale?env=dev")
    assert _rows(stale, "stale-clusters") == ["c1", "c3"] and "3 stale clusters" in stale
    assert 'href="?all=1&amp;environment=dev">1 more, show all</a>' in stale
    assert _rows(_get(live, "/stale?all=1&environment=dev"), "stale-clusters") == ["c1", "c3", "c5"]
    # The link keeps how the page is read (pages.keep_query), beside its filter.
    kept = _get(live, "/stale?environment=dev&staleAfter=20m&refresh=0")
    assert 'href="?all=1&amp;environment=dev&amp;staleAfter=20m&amp;refresh=0">1 more, show all</a>' in kept
    # The JSON answers in full, as it did: a list of every one.
    assert [c["name"] for c in requests.get(f"{live.url}/v1/drift", timeout=10).json()] == [
        "c2",
        "c1",
        "c3",
        "q1",
    ]
    assert len(requests.get(f"{live.url}/v1/stale?environment=dev", timeout=10).json()) == 3


def test_the_discrepancies_page_counts_each_kind_and_links_to_all(live: LiveHub, bounds: None) -> None:
    page = _get(live, "/discrepancies?staleAfter=1h")
    assert "0 between environments, 4 cluster(s) off their head, 3 failing." in page
    assert _rows(page, "failing-clusters") == ["c4", "c6"] and _rows(page, "drift") == ["c2", "c1"]
    assert 'The 2 failing longest of 3:\n<a href="?all=1&amp;staleAfter=1h">1 more, show all</a>' in page
    assert 'The first 2 of 4 clusters off their head:\n<a href="?all=1&amp;staleAfter=1h">2 more' in page
    everyone = _get(live, "/discrepancies?all=1")
    assert _rows(everyone, "failing-clusters") == ["c4", "c6", "c7"]
    assert _rows(everyone, "drift") == ["c2", "c1", "c3", "q1"] and "show all" not in everyone
    kinds = [i["kind"] for i in requests.get(f"{live.url}/v1/discrepancies", timeout=10).json()]
    assert kinds == ["drift"] * 4 + ["failing"] * 3


def test_the_json_lists_answer_in_full_or_their_first_limit_with_the_count_beside(live: LiveHub) -> None:
    def get(path: str) -> requests.Response:
        answer = requests.get(live.url + path, timeout=10)
        assert answer.status_code == 200, (path, answer.text)
        return answer

    full = get("/v1/drift")
    assert "X-Total-Count" not in full.headers and len(full.json()) == 4  # as before: every one
    first = get("/v1/drift?limit=2")
    assert first.json() == full.json()[:2] and first.headers["X-Total-Count"] == "4"
    assert get("/v1/stale?env=dev&limit=1").json() == get("/v1/stale?env=dev").json()[:1]
    assert get("/v1/stale?env=dev&limit=1").headers["X-Total-Count"] == "3"
    assert get("/v1/stale?limit=1000").json() == get("/v1/stale").json()
    kinds = [i["kind"] for i in get("/v1/discrepancies?limit=1").json()]
    assert kinds == ["drift", "failing"] and get("/v1/discrepancies?limit=1").headers["X-Total-Count"] == "7"
    refused = requests.get(live.url + "/v1/drift?limit=0", timeout=10)
    assert refused.status_code == 400
    assert refused.json() == {"error": "limit: must be a whole number from 1 to 1000, got '0'"}
