"""Group commit: the reports that arrive together are written in one transaction, and each
request is answered once that transaction committed. One commit (one fsync) then serves many
reports, which is what lets one SQLite file take thousands of reports a second.

A batch that fails as a whole is written again one report per transaction, so that one bad
report cannot take others down with it; a report whose own transaction fails gets its error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass

from promoter.errors import one_line
from promoter.hub.db import Database
from promoter.hub.keys import Cluster
from promoter.hub.metrics import RECEIVED, Counters
from promoter.hub.payloads import Report
from promoter.hub.store import Stored, store_many, store_report

log = logging.getLogger("promoter.hub")
MAX_BATCH = 500
#: Called after a commit with the environments whose clusters' reports changed something (a
#: verdict may have changed there): the seam for waking a promotion (issue 31's wake.py).
Listener = Callable[[frozenset[str]], None]
#: One writer per hub process on PostgreSQL too: a batch costs a few round trips whatever its
#: size (store_many), and while one commits the next gathers every report that arrives, where
#: several writers would each take a few. More hub processes write concurrently.
POSTGRES_WRITERS = 1
Outcome = Stored | BaseException


@dataclass(frozen=True, slots=True)
class _Item:
    cluster: Cluster
    report: Report
    digest: str
    now: float
    #: A thread's future (``submit``), or an event loop's (``wait``).
    done: Future[Stored] | asyncio.Future[Stored]


class GroupWriter:
    """Writes reports for many threads and event loops; ``store`` blocks until the report is
    committed, ``wait`` awaits it."""

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
        # SQLite has one writer at a time; PostgreSQL takes concurrent transactions (of hub
        # processes, and of writers when asked for).
        self.writers = writers or (1 if db.dialect == "sqlite" else POSTGRES_WRITERS)
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def store(self, cluster: Cluster, report: Report, digest: str, now: float) -> Stored:
        return self.submit(cluster, report, digest, now).result()

    def submit(self, cluster: Cluster, report: Report, digest: str, now: float) -> Future[Stored]:
        """Queue a report; the future is done once its transaction committed."""
        done: Future[Stored] = Future()
        self._put(_Item(cluster, report, digest, now, done))
        return done

    async def wait(self, cluster: Cluster, report: Report, digest: str, now: float) -> Stored:
        """Queue a report and await its commit in the running event loop, without a thread of
        its own: the reports of a batch are answered with one call into the loop."""
        done: asyncio.Future[Stored] = asyncio.get_running_loop().create_future()
        self._put(_Item(cluster, report, digest, now, done))
        return await done

    def _put(self, item: _Item) -> None:
        if len(self._threads) < self.writers:
            self._start()
        self._queue.put(item)

    def _start(self) -> None:
        with self._lock:
            while len(self._threads) < self.writers:
                thread = threading.Thread(
                    target=self._loop, name=f"hub-writer-{len(self._threads)}", daemon=True
                )
                thread.start()
                self._threads.append(thread)

    def _loop(self) -> None:
        try:
            self.db.for_writes()
        except Exception as err:  # the database is down: its batches fail and say so
            log.error("the group writer could not set up its connection: %s", one_line(str(err)))
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
            with self.db.transaction(pipeline=True) as tx:
                results = store_many(tx, [(i.cluster, i.report, i.digest, i.now) for i in batch])
                self._count(zip(batch, results, strict=True))
                self.counters.flush(tx)
        except Exception:
            outcomes = [self._write_one(item) for item in batch]
            self._settle(list(zip(batch, outcomes, strict=True)))
            self._changed([i for i, o in zip(batch, outcomes, strict=True) if _changes(o)])
            return
        self._settle(list(zip(batch, results, strict=True)))
        self._changed([i for i, s in zip(batch, results, strict=True) if _changes(s)])

    def _settle(self, outcomes: list[tuple[_Item, Outcome]]) -> None:
        """Answer each waiter: a thread's future at once, an event loop's all in one call."""
        loops: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Stored], Outcome]]] = {}
        for item, outcome in outcomes:
            if isinstance(item.done, Future):
                _resolve(item.done, outcome)
            else:
                loops.setdefault(item.done.get_loop(), []).append((item.done, outcome))
        for loop, settled in loops.items():
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for these any more
                loop.call_soon_threadsafe(_settle_in_loop, settled)

    def _changed(self, items: list[_Item]) -> None:
        """Tell the listeners which environments changed (after the commit; never fails a write)."""
        environments = frozenset(i.cluster.environment for i in items)
        for listener in self.listeners if environments else ():
            try:
                listener(environments)
            except Exception:
                log.exception("a listener of changed environments failed")

    def _count(self, stored: Iterable[tuple[_Item, Stored]]) -> None:
        tally = Counter(
            (item.report.source, "duplicate" if s.duplicate else "unchanged" if s.unchanged else "stored")
            for item, s in stored
        )
        for (source, outcome), n in tally.items():
            self.counters.add(RECEIVED, {"source": source, "outcome": outcome}, n)

    def _write_one(self, item: _Item) -> Outcome:
        try:
            stored = store_report(self.db, item.cluster, item.report, item.digest, item.now)
        except Exception as err:
            return err
        self._count([(item, stored)])  # written with the next batch
        return stored


def _changes(outcome: Outcome) -> bool:
    return isinstance(outcome, Stored) and not (outcome.duplicate or outcome.unchanged)


def _settle_in_loop(settled: list[tuple[asyncio.Future[Stored], Outcome]]) -> None:
    for done, outcome in settled:
        if not done.done():  # else cancelled: the client went away
            _resolve(done, outcome)


def _resolve(done: Future[Stored] | asyncio.Future[Stored], outcome: Outcome) -> None:
    if isinstance(outcome, BaseException):
        done.set_exception(outcome)
    else:
        done.set_result(outcome)
