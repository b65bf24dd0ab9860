"""Group commit: the reports that arrive together are written in one transaction, and each
request is answered once that transaction committed. One commit (one fsync) then serves many
reports, which is what lets one SQLite file take thousands of reports a second.

A batch that fails as a whole is written again one report per transaction, so that one bad
report cannot take others down with it; a report whose own transaction fails gets its error.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

from promoter.hub.db import Database
from promoter.hub.keys import Cluster
from promoter.hub.metrics import RECEIVED, Counters
from promoter.hub.payloads import Report
from promoter.hub.store import Stored, store_in, store_report

log = logging.getLogger("promoter.hub")
MAX_BATCH = 500
#: Called after a commit with the environments whose clusters' reports changed something (a
#: verdict may have changed there): the seam for waking a promotion (issue 31's wake.py).
Listener = Callable[[frozenset[str]], None]
POSTGRES_WRITERS = 4


@dataclass(frozen=True)
class _Item:
    cluster: Cluster
    report: Report
    digest: str
    now: float
    done: Future[Stored]


class GroupWriter:
    """Writes reports for many threads; ``store`` blocks until the report is committed."""

    def __init__(
        self,
        db: Database,
        max_batch: int = MAX_BATCH,
        writers: int | None = None,
        counters: Counters | None = None,
    ) -> None:
        self.db = db
        self.counters = counters or Counters()  # written in each batch's transaction
        self.listeners: list[Listener] = []
        self.max_batch = max_batch
        # SQLite has one writer at a time; PostgreSQL takes concurrent transactions.
        self.writers = writers or (1 if db.dialect == "sqlite" else POSTGRES_WRITERS)
        self._queue: queue.Queue[_Item] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def store(self, cluster: Cluster, report: Report, digest: str, now: float) -> Stored:
        return self.submit(cluster, report, digest, now).result()

    def submit(self, cluster: Cluster, report: Report, digest: str, now: float) -> Future[Stored]:
        """Queue a report; the future is done once its transaction committed (an event loop
        awaits it without holding a thread)."""
        item = _Item(cluster, report, digest, now, Future())
        self._start()
        self._queue.put(item)
        return item.done

    def _start(self) -> None:
        with self._lock:
            while len(self._threads) < self.writers:
                thread = threading.Thread(
                    target=self._loop, name=f"hub-writer-{len(self._threads)}", daemon=True
                )
                thread.start()
                self._threads.append(thread)

    def _loop(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < self.max_batch:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            self._write(batch)

    def _write(self, batch: list[_Item]) -> None:
        # One order of row locks for every batch: concurrent writers cannot deadlock.
        batch.sort(key=lambda i: (i.cluster.name, i.report.reconciler))
        try:
            with self.db.transaction() as tx:
                results = [store_in(tx, i.cluster, i.report, i.digest, i.now) for i in batch]
                for item, stored in zip(batch, results, strict=True):
                    self._count(item, stored)
                self.counters.flush(tx)
        except Exception:
            for item in batch:
                self._write_one(item)
            return
        for item, stored in zip(batch, results, strict=True):
            item.done.set_result(stored)
        self._changed([i for i, s in zip(batch, results, strict=True) if not (s.duplicate or s.unchanged)])

    def _changed(self, items: list[_Item]) -> None:
        """Tell the listeners which environments changed (after the commit; never fails a write)."""
        environments = frozenset(i.cluster.environment for i in items)
        for listener in self.listeners if environments else ():
            try:
                listener(environments)
            except Exception:
                log.exception("a listener of changed environments failed")

    def _count(self, item: _Item, stored: Stored) -> None:
        outcome = "duplicate" if stored.duplicate else "unchanged" if stored.unchanged else "stored"
        self.counters.add(RECEIVED, {"source": item.report.source, "outcome": outcome})

    def _write_one(self, item: _Item) -> None:
        try:
            stored = store_report(self.db, item.cluster, item.report, item.digest, item.now)
        except Exception as err:
            item.done.set_exception(err)
            return
        self._count(item, stored)  # written with the next batch
        item.done.set_result(stored)
        if not (stored.duplicate or stored.unchanged):
            self._changed([item])
