"""The hub's database: one small layer over SQLite (the embedded default, a file in WAL mode)
and PostgreSQL (several hub processes sharing one server), with the same SQL and migrations.

SQL is written once with ``?`` placeholders; PostgreSQL's driver gets ``%s``. Each thread has
its own connection (the HTTP server runs blocking work in a thread pool), and ``transaction``
commits or rolls back as one: a report is acknowledged only after its commit returned.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

from promoter.errors import UsageError
from promoter.hub.schema import MIGRATIONS

DEFAULT_DATABASE = "promoter-hub.sqlite3"
DATABASE_ENV = "PROMOTER_HUB_DATABASE"
Dialect = Literal["sqlite", "postgresql"]
Row = tuple[Any, ...]


class Cursor(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...
    def executemany(self, sql: str, params: Sequence[Sequence[Any]], /, *args: Any, **kw: Any) -> Any: ...
    def nextset(self) -> bool | None: ...
    def fetchall(self) -> list[Any]: ...
    def fetchone(self) -> Any: ...


class Tx:
    """One open transaction: ``rows``, ``one``, ``run`` and their batch forms ``many`` and
    ``run_many`` take ``?`` placeholders."""

    def __init__(self, cursor: Cursor, dialect: Dialect) -> None:
        self.cursor = cursor
        self.dialect = dialect

    def _sql(self, sql: str) -> str:
        return _pg_sql(sql) if self.dialect == "postgresql" else sql

    def run(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.cursor.execute(self._sql(sql), tuple(params))

    def run_many(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        """``run`` once per set of ``params``: on PostgreSQL in one round trip (psycopg
        pipelines ``executemany``), on SQLite in one call."""
        if params:
            self.cursor.executemany(self._sql(sql), params)

    def many(self, sql: str, params: Sequence[Sequence[Any]]) -> list[Row | None]:
        """``one`` once per set of ``params``, in order: on PostgreSQL all sent at once and
        answered in one round trip; on SQLite (no round trips to save) one after the other."""
        if not params:
            return []
        if self.dialect == "sqlite":
            out: list[Row | None] = []
            for p in params:
                self.cursor.execute(sql, p)
                row = self.cursor.fetchone()
                out.append(tuple(row) if row is not None else None)
            return out
        self.cursor.executemany(self._sql(sql), params, returning=True)
        rows: list[Row | None] = []
        while True:
            row = self.cursor.fetchone()
            rows.append(tuple(row) if row is not None else None)
            if not self.cursor.nextset():
                return rows

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        self.cursor.execute(self._sql(sql), tuple(params))
        return [tuple(r) for r in self.cursor.fetchall()]

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        self.cursor.execute(self._sql(sql), tuple(params))
        row = self.cursor.fetchone()
        return tuple(row) if row is not None else None


#: Pages of write-ahead log after which the group writer's commit copies them into the database
#: (SQLite's default is 1,000). A checkpoint writes each page once however many commits changed
#: it, and a batch of reports changes five or so pages each (a cluster's row, its reconciler's,
#: index pages): at 1,000 the writer checkpointed every few batches, writing most pages twice. At
#: 10,000 (40 MB of log at 4 KiB pages) the writes of a hot page share a checkpoint; durability
#: is the same (each commit is synced to the log).
WRITER_CHECKPOINT_PAGES = 10_000


class Database:
    """A hub database named by ``url``: a SQLite path (or ``sqlite:///path``), or ``postgresql://``."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.dialect: Dialect = "postgresql" if url.startswith(("postgresql://", "postgres://")) else "sqlite"
        self.path = "" if self.dialect == "postgresql" else _sqlite_path(url)
        self._local = threading.local()
        self._all: list[Any] = []
        self._lock = threading.Lock()
        # Connections inside a transaction (how many), and those ``close`` left to their own
        # thread: closing a connection another thread is using crashes SQLite's driver.
        self._busy: dict[Any, int] = {}
        self._orphans: set[Any] = set()

    @classmethod
    def from_option(cls, url: str | None) -> Database:
        """The database of a ``--database`` option, else ``PROMOTER_HUB_DATABASE``, else the default file."""
        return cls(url or os.environ.get(DATABASE_ENV) or DEFAULT_DATABASE)

    def describe(self) -> str:
        """Where the data is, without a password."""
        if self.dialect == "sqlite":
            return f"SQLite {self.path}"
        parts = urlsplit(self.url)
        return (
            f"PostgreSQL {parts.hostname or 'localhost'}{f':{parts.port}' if parts.port else ''}{parts.path}"
        )

    def _connection(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def _connect(self) -> Any:
        if self.dialect == "postgresql":
            import psycopg  # optional: the hub extra (155 ms, not loaded for SQLite); SQLite needs nothing more

            try:
                return psycopg.connect(self.url, autocommit=False, connect_timeout=10)
            except psycopg.OperationalError as err:
                raise UsageError(f"cannot connect to {self.describe()}: {_first_line(err)}") from err
        try:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")  # an acknowledged report survives a power cut too
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as err:
            raise UsageError(f"cannot open {self.describe()}: {err}") from err
        return conn

    @contextmanager
    def transaction(self, write: bool = True, pipeline: bool = False) -> Iterator[Tx]:
        """A transaction, committed when the block ends, rolled back when it raises. On SQLite a
        writing one takes the write lock at once; a reading one (``write=False``) never waits
        for writers (WAL). With ``pipeline``, PostgreSQL's statements are sent without waiting
        for their answers until one is read (``rows``, ``one``, ``many``) or the transaction
        commits: one round trip for all the statements in between."""
        conn = self._connection()
        with self._using(conn):
            yield from self._transaction(conn, write, pipeline)

    def _transaction(self, conn: Any, write: bool, pipeline: bool) -> Iterator[Tx]:
        if pipeline and self.dialect == "postgresql":
            with conn.pipeline():
                try:
                    with conn.cursor() as cursor:
                        yield Tx(cursor, "postgresql")
                    conn.commit()
                except BaseException:
                    conn.rollback()
                    raise
            return
        if self.dialect == "sqlite":
            cursor = conn.cursor()
            cursor.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield Tx(cursor, "sqlite")
            except BaseException:
                cursor.execute("ROLLBACK")
                raise
            cursor.execute("COMMIT")
            return
        try:
            with conn.cursor() as cursor:
                yield Tx(cursor, "postgresql")
        except BaseException:
            conn.rollback()
            raise
        conn.commit()

    @contextmanager
    def _using(self, conn: Any) -> Iterator[None]:
        with self._lock:
            self._busy[conn] = self._busy.get(conn, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                left = self._busy.pop(conn) - 1
                if left:
                    self._busy[conn] = left
                orphan = not left and conn in self._orphans
                if orphan:
                    self._orphans.discard(conn)
            if orphan:
                conn.close()

    def for_writes(self) -> None:
        """Set this thread's connection up for the group writer: on PostgreSQL, without JIT
        compilation (the planner takes a batch's statements for a hundred rows, enough to
        compile them, at tens of milliseconds, where they run in one); on SQLite, with a longer
        write-ahead log between checkpoints (``WRITER_CHECKPOINT_PAGES``)."""
        if self.dialect == "postgresql":
            with self.transaction() as tx:
                tx.run("SET jit = off")
        else:
            self._connection().execute(f"PRAGMA wal_autocheckpoint={WRITER_CHECKPOINT_PAGES}")

    def migrate(self, migrations: Sequence[tuple[int, str, Sequence[str]]] = MIGRATIONS) -> list[int]:
        """Bring the schema up to date; the versions applied now (none when already current).
        Each version the database lacks runs, in the order listed, whether or not a higher one
        ran before it: lines of work that add versions side by side (6 and 7) merge in any order."""
        applied: list[int] = []
        with self.transaction() as tx:
            if self.dialect == "postgresql":  # several hub processes may start at once
                tx.run("SELECT pg_advisory_xact_lock(7244501)")
            tx.run(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"
            )
            done = {r[0] for r in tx.rows("SELECT version FROM schema_migrations")}
            for version, name, statements in migrations:
                if version in done:
                    continue
                for statement in statements:
                    tx.run(_dialect_sql(statement, self.dialect))
                tx.run(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (version, name, _now()),
                )
                applied.append(version)
        return applied

    def close(self) -> None:
        """Close every connection; one inside a transaction (another thread's) is closed by its
        thread when the transaction ends. A later transaction opens a new connection."""
        with self._lock:
            for conn in self._all:
                if conn in self._busy:
                    self._orphans.add(conn)
                else:
                    conn.close()
            self._all.clear()
        self._local = threading.local()


@functools.lru_cache(maxsize=512)
def _pg_sql(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (each statement's text translated once)."""
    return sql.replace("?", "%s")


def _dialect_sql(statement: str, dialect: Dialect) -> str:
    serial = "BIGSERIAL PRIMARY KEY" if dialect == "postgresql" else "INTEGER PRIMARY KEY AUTOINCREMENT"
    return statement.replace("{serial}", serial)


def sqlite_file(url: str) -> Path | None:
    """The file a SQLite ``--database`` names (nothing is created), None for PostgreSQL."""
    if url.startswith(("postgresql://", "postgres://")):
        return None
    path = url[len("sqlite:///") - 1 :] if url.startswith("sqlite:///") else url
    return Path(path).expanduser()


def existing(url: str | None) -> Database:
    """The database of a ``--database`` option for a command that only reads: a SQLite file
    that does not exist is a one-line UsageError, never a new empty database."""
    chosen = url or os.environ.get(DATABASE_ENV) or DEFAULT_DATABASE
    path = sqlite_file(chosen)
    if path is not None and "://" not in str(path) and not path.is_file():
        raise UsageError(
            f"--database {chosen}: no hub database there (promoter hub serve or migrate creates one)"
        )
    return Database(chosen)


def _sqlite_path(url: str) -> str:
    path = url[len("sqlite:///") - 1 :] if url.startswith("sqlite:///") else url
    if "://" in path:
        raise UsageError(f"--database {url!r}: use a file path, sqlite:///path or postgresql://...")
    Path(path).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
    return str(Path(path).expanduser())


def _first_line(err: Exception) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0]


def _now() -> float:
    return time.time()


def database_errors() -> tuple[type[Exception], ...]:
    """The exceptions that mean the database failed (not the request): answer 503, retry."""
    errors: list[type[Exception]] = [sqlite3.Error]
    try:
        import psycopg  # optional: present with the hub extra (loaded already when the database is PostgreSQL)

        errors.append(psycopg.Error)
    except ImportError:
        pass
    return tuple(errors)
