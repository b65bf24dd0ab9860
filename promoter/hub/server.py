"""``promoter hub serve``: migrate, then serve the API and pages with uvicorn.

Several processes may serve one PostgreSQL database (each is stateless; migrations take an
advisory lock). SQLite is for one process on one machine.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from promoter.errors import UsageError
from promoter.hub.app import build_app
from promoter.hub.db import DATABASE_ENV, Database
from promoter.hub.ingest import Limits

_MAX_BODY_ENV = "PROMOTER_HUB_MAX_BODY"
_MAX_AGE_ENV = "PROMOTER_HUB_MAX_AGE"


def parse_listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--listen {text!r}: use HOST:PORT, e.g. 127.0.0.1:8080")
    return host.strip("[]") or "0.0.0.0", int(port)


def create_app() -> Any:
    """The app of one worker process, configured by the environment ``serve`` set for it."""
    limits = Limits(
        max_body=int(os.environ.get(_MAX_BODY_ENV) or Limits().max_body),
        max_age=float(os.environ.get(_MAX_AGE_ENV) or Limits().max_age),
    )
    return build_app(Database.from_option(None), limits)


def serve(db: Database, listen: str, limits: Limits, workers: int = 1) -> None:
    import uvicorn  # optional: the hub extra; the rest of the CLI runs without it

    host, port = parse_listen(listen)
    applied = db.migrate()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    log = logging.getLogger("promoter.hub")
    if applied:
        log.info("migrated %s to schema version %d", db.describe(), applied[-1])
    log.info("serving %s on http://%s:%d with %d worker(s)", db.describe(), host, port, workers)
    options: dict[str, Any] = {"host": host, "port": port, "log_level": "warning", "access_log": False}
    if workers <= 1:
        uvicorn.run(build_app(db, limits), **options)
        return
    # Worker processes build their own app (and database connections) from the environment.
    os.environ.update(
        {DATABASE_ENV: db.url, _MAX_BODY_ENV: str(limits.max_body), _MAX_AGE_ENV: str(limits.max_age)}
    )
    uvicorn.run("promoter.hub.server:create_app", factory=True, workers=workers, **options)
