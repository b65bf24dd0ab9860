"""A rendered page kept a moment for the tabs that ask again: served while fresh, rendered anew
after ``TTL`` seconds or when the hub's time moved on, dropped at once when a change of state is
stored (through the group writer, or a commit or holds), never kept when a change was stored while
it was rendered; and over HTTP, on both engines, a report that changes a cluster's state shows on
the next page load."""

from __future__ import annotations

import time

import requests

from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from promoter.hub.pagecache import TTL, PageCache
from tests.support.hub_support import LiveHub, flux_stream_event, post_flux_body, register, rfc3339

M = "1" * 40


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _renders(cache: PageCache, key: str, now: float, made: list[str]) -> str:
    def make() -> str:
        made.append(key)
        return f"{key} #{len(made)}"

    return cache.kept(key, now, make)


def test_a_page_is_kept_while_fresh_and_dropped_at_a_change(hub_db: Database) -> None:
    clock, made = Clock(), []
    listeners: list[object] = []
    cache = PageCache(hub_db, listeners, clock=clock)  # type: ignore[arg-type]
    assert listeners == [cache.changed]  # the group writer tells it of each change
    assert _renders(cache, "/", 1000.0, made) == "/ #1"
    clock.now += TTL / 2
    assert _renders(cache, "/", 1000.0 + TTL / 2, made) == "/ #1"  # kept
    assert _renders(cache, "/failing", 1000.0, made) == "/failing #2"  # another page
    assert _renders(cache, "/", 1000.0 + 2 * TTL, made) == "/ #3"  # the hub's time moved on
    clock.now += 2 * TTL
    assert _renders(cache, "/failing", 1000.0, made) == "/failing #4"  # too old
    cache.changed({"dev"})
    assert _renders(cache, "/", 1000.0 + 2 * TTL, made) == "/ #5"  # dropped at the change
    stored = cache.after(lambda a, b: a + b)
    assert stored(2, 3) == 5 and _renders(cache, "/", 1000.0 + 2 * TTL, made) == "/ #6"


def test_a_page_rendered_while_a_change_was_stored_is_not_kept(hub_db: Database) -> None:
    cache, made = PageCache(hub_db), []

    def make() -> str:
        made.append("/")
        cache.changed()  # stored while this page read the database
        return "old"

    assert cache.kept("/", 1.0, make) == "old" and cache.kept("/", 1.0, make) == "old"
    assert len(made) == 2


def _post(live: LiveHub, key: str, severity: str, at: float) -> None:
    reason = "ReconciliationSucceeded" if severity == "info" else "HealthCheckFailed"
    body, header = flux_stream_event(
        "Kustomization",
        "platform",
        reason,
        "deploy",
        rfc3339(at),
        severity=severity,
        revision=f"dev@sha1:{M}",
    )
    assert post_flux_body(live.url, "edge-1", key, body, header).status_code == 201


def test_a_change_of_state_shows_on_the_next_page_load(live_hub: LiveHub) -> None:
    now = time.time()
    record_commit(live_hub.db, CommitRecord("dev", M, "dev", None, "m" * 40, None, (), ("dev",)), now - 300)
    key = register(live_hub.db, "edge-1")
    _post(live_hub, key, "info", now - 120)
    assert "Running on all 1 cluster since" in requests.get(live_hub.url + "/", timeout=10).text
    _post(live_hub, key, "error", now - 60)
    html = requests.get(live_hub.url + "/", timeout=10).text
    assert "1 cluster failing" in html and "Running on" not in html
