"""``promoter hub serve``: migrate, then serve the API and pages with uvicorn.

Several processes may serve one PostgreSQL database (each is stateless; migrations take an
advisory lock). SQLite is for one process on one machine.
"""

from __future__ import annotations

import gc
import ipaddress
import logging
import os
import re
import socket
import threading
import time
from typing import Any

import uvicorn

from promoter.clock import parse_duration
from promoter.errors import PromoterError, UsageError, one_line
from promoter.hub.app import build_app
from promoter.hub.db import DATABASE_ENV, Database, database_errors
from promoter.hub.ingest import Limits
from promoter.hub.keys import check_sealer
from promoter.hub.sealing import NEW_SECRET_ENV, SECRET_ENV, Sealer
from promoter.hub.store import prune

PRUNE_EVERY = 3600.0
log = logging.getLogger("promoter.hub")


class ServeError(PromoterError):
    """The hub cannot serve (its port is taken): exit 1, one line."""

    exit_code = 1


def parse_retention(text: str) -> float:
    """Seconds of ``--retain``: a number of days (``90d``) or a duration (``36h``)."""
    days = re.fullmatch(r"(\d+(?:\.\d+)?)d", text.strip())
    try:
        seconds = float(days[1]) * 86400 if days else parse_duration(text)
    except ValueError as err:
        raise UsageError(
            f"--retain {text!r}: use a number of days such as 90d, or a duration such as 36h"
        ) from err
    if seconds <= 0:
        raise UsageError(f"--retain {text!r}: must be more than zero")
    return seconds


class Pruner:
    """Deletes history older than ``retain`` seconds, now and every ``every`` seconds, in a daemon
    thread; a database that is down is a logged line, and the next round tries again."""

    def __init__(self, db: Database, retain: float, every: float = PRUNE_EVERY) -> None:
        self.db, self.retain, self.every = db, retain, every
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="hub-pruner", daemon=True)

    def start(self) -> Pruner:
        self.thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(10)

    def run_once(self, now: float) -> int:
        deleted = prune(self.db, now - self.retain)
        if deleted:
            log.info("pruned %d report(s) older than %.0f day(s)", deleted, self.retain / 86400)
        return deleted

    def _loop(self) -> None:
        while True:  # a first round at once, then one each ``every`` until stopped
            try:
                self.run_once(time.time())
            except database_errors() as err:
                log.error(
                    "pruning failed: %s",
                    one_line(str(err).strip().splitlines()[0] if str(err).strip() else repr(err)),
                )
            if self._stop.wait(self.every):
                return


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) listens on this machine alone."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def check_port(host: str, port: int) -> None:
    """Refuse at once, in one line, a port another process holds (uvicorn would log and exit 3)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as err:
            raise ServeError(f"cannot listen on {host}:{port}: {err.strerror or err}") from err


_MAX_BODY_ENV = "PROMOTER_HUB_MAX_BODY"
_MAX_AGE_ENV = "PROMOTER_HUB_MAX_AGE"
_READ_KEY_ENV = "PROMOTER_HUB_REQUIRE_READ_KEY"


def parse_listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--listen {text!r}: use HOST:PORT, e.g. 127.0.0.1:8080")
    return host.strip("[]") or "0.0.0.0", int(port)


#: The cyclic garbage collector's thresholds in a hub process. Python's default (a young
#: collection every 700 net allocations) runs one every few reports, each walking the young
#: objects of a few hundred requests in flight, to find no garbage: reports, rows and requests
#: form no cycles and are freed by reference counting. Collections 70 times rarer cost a few MB.
GC_THRESHOLDS = (50_000, 20, 20)


#: How ``serve`` runs uvicorn. The hub reads no client address or scheme (``X-Forwarded-*``
#: would change nothing it answers; uvicorn's middleware for them read every request's headers
#: again) and names no server software in its answers.
UVICORN_OPTIONS: dict[str, Any] = {
    "log_level": "warning",
    "access_log": False,
    "proxy_headers": False,
    "server_header": False,
}


def tune_gc() -> None:
    """Set this process's collector for serving (``GC_THRESHOLDS``)."""
    gc.set_threshold(*GC_THRESHOLDS)


def create_app() -> Any:
    """The app of one worker process, configured by the environment ``serve`` set for it."""
    tune_gc()
    limits = Limits(
        max_body=int(os.environ.get(_MAX_BODY_ENV) or Limits().max_body),
        max_age=float(os.environ.get(_MAX_AGE_ENV) or Limits().max_age),
    )
    return build_app(
        Database.from_option(None),
        limits,
        require_read_key=bool(os.environ.get(_READ_KEY_ENV)),
        sealer=Sealer.from_env(),
    )


def _warn_clear_keys(db: Database, clear: int, sealer: Sealer | None) -> None:
    """Say how many cluster keys the database keeps unsealed, and how to seal them."""
    if clear:
        log.warning(
            "%d cluster key(s) kept in the clear in %s: set %s and run promoter hub keys reseal (docs/hub.md)",
            clear,
            db.describe(),
            SECRET_ENV if sealer is None else NEW_SECRET_ENV,
        )


def _warn_open_reads(host: str, port: int, require_read_key: bool) -> None:
    """Say that reads are open to anyone who can reach a non-loopback address without read keys."""
    if not require_read_key and not is_loopback(host):
        log.warning(
            "reads are open: anyone who can reach %s:%d sees every cluster, commit and failure message;"
            " serve with --require-read-key (keys: promoter hub keys add-reader) or restrict them at a proxy",
            host,
            port,
        )


def serve(
    db: Database,
    listen: str,
    limits: Limits,
    workers: int = 1,
    retain: float | None = None,
    require_read_key: bool = False,
) -> None:
    host, port = parse_listen(listen)
    check_port(host, port)
    applied = db.migrate()
    sealer = Sealer.from_env()
    clear = check_sealer(db, sealer)  # refuses a secret that does not open the sealed keys
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    _warn_clear_keys(db, clear, sealer)
    if retain:
        Pruner(db, retain).start()
    _warn_open_reads(host, port, require_read_key)
    if applied:
        log.info("migrated %s to schema version %d", db.describe(), applied[-1])
    log.info("serving %s on http://%s:%d with %d worker(s)", db.describe(), host, port, workers)
    options = {"host": host, "port": port, **UVICORN_OPTIONS}
    if workers <= 1:
        tune_gc()
        uvicorn.run(build_app(db, limits, require_read_key=require_read_key, sealer=sealer), **options)
        return
    # Worker processes build their own app (and database connections) from the environment.
    os.environ.update(
        {
            DATABASE_ENV: db.url,
            _MAX_BODY_ENV: str(limits.max_body),
            _MAX_AGE_ENV: str(limits.max_age),
            _READ_KEY_ENV: "1" if require_read_key else "",
        }
    )
    uvicorn.run("promoter.hub.server:create_app", factory=True, workers=workers, **options)
