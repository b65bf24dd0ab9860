"""A page kept a moment for every tab that asks for it. Each open tab of a page refreshes it
every 5 seconds: at 10,000 clusters a page costs 20 to 50 ms of a hub's CPU to read and render,
so a hundred tabs on the overview would keep a core half busy drawing the same page. A hub
process keeps each page it rendered (by path and query) for ``TTL`` seconds, and drops them all
as soon as it stores a change of state (a report that is not a heartbeat, a commit, holds).

What a kept page can miss is bounded: a heartbeat's last-seen time, staleness as time passes,
and what another hub process stored (``--workers``, or several hubs on one PostgreSQL) show at
most ``TTL`` seconds late. The JSON API and the CLI are never served from it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from starlette.requests import Request

from promoter.hub import pages
from promoter.hub.db import Database
from promoter.hub.reads import read_page_and_repos

#: Seconds a rendered page is served again (the pages refresh every 5 s).
TTL = 2.0
#: Pages kept at most (the query string is the reader's: each distinct one is a page).
MOST = 256


@dataclass(frozen=True)
class _Kept:
    html: str
    now: float  # the hub's time it was rendered at
    made: float  # this process's monotonic clock then
    generation: int


class PageCache:
    """Rendered pages by path and query, each served for ``ttl`` seconds (of ``clock``, and of
    the hub's time: a hub clock moved on by more, as a test's is, renders anew) until
    ``changed``, which ``listeners`` (the group writer's) call at each change stored."""

    def __init__(
        self,
        db: Database,
        listeners: list[Any] | None = None,
        ttl: float = TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.db, self.ttl, self.clock = db, ttl, clock
        self._kept: dict[Hashable, _Kept] = {}
        self._generation = 0
        self._lock = threading.Lock()
        if listeners is not None:
            listeners.append(self.changed)

    def page(
        self, request: Request, name: str, params: Mapping[str, Any], now: float, stale_after: float
    ) -> str:
        """Page ``name`` (the read ``params`` of ``request``): as kept, while fresh, else rendered."""
        make = partial(render_page, self.db, name, params, request.query_params, now, stale_after)
        return self.kept(f"{request.url.path}?{request.url.query}", now, make)

    def kept(self, key: Hashable, now: float, make: Callable[[], str]) -> str:
        """The page of ``key``: the one kept, while fresh, else ``make()``'s (kept, unless a
        change was stored while it was made)."""
        with self._lock:
            kept, generation = self._kept.get(key), self._generation
        if kept and kept.generation == generation and self._fresh(kept, now):
            return kept.html
        html = make()
        with self._lock:
            if generation == self._generation:
                if len(self._kept) >= MOST:
                    self._kept.clear()
                self._kept[key] = _Kept(html, now, self.clock(), generation)
        return html

    def _fresh(self, kept: _Kept, now: float) -> bool:
        return self.clock() - kept.made < self.ttl and abs(now - kept.now) < self.ttl

    def after(self, work: Callable[..., Any]) -> Callable[..., Any]:
        """``work``, then ``changed``: for a change stored other than by the group writer (a
        commit, holds)."""

        def then_changed(*args: Any) -> Any:
            try:
                return work(*args)
            finally:
                self.changed()

        return then_changed

    def changed(self, *_: Any) -> None:
        """A change was stored: every kept page is dropped."""
        with self._lock:
            self._generation += 1
            self._kept.clear()


def render_page(
    db: Database,
    name: str,
    params: Mapping[str, Any],
    query: Mapping[str, str],
    now: float,
    stale_after: float,
) -> str:
    """Page ``name``: its read (``reads.read_page``) rendered, with the platform repos' links and the
    filters of its ``query`` said."""
    data, repos = read_page_and_repos(db, name, params, now, stale_after)
    filters = {k: v for k, v in query.items() if v}
    return pages.render(name, data, now, repos, filters, stale_after)
