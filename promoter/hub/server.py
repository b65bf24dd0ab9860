"""``promoter hub serve``: migrate, then serve the API and pages with uvicorn.

Several processes may serve one PostgreSQL database (each is stateless; migrations take an
advisory lock). SQLite is for one process on one machine.
"""

from __future__ import annotations

import logging

from promoter.errors import UsageError
from promoter.hub.app import build_app
from promoter.hub.db import Database
from promoter.hub.ingest import Limits


def parse_listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--listen {text!r}: use HOST:PORT, e.g. 127.0.0.1:8080")
    return host.strip("[]") or "0.0.0.0", int(port)


def serve(db: Database, listen: str, limits: Limits) -> None:
    import uvicorn  # optional: the hub extra; the rest of the CLI runs without it

    host, port = parse_listen(listen)
    applied = db.migrate()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    log = logging.getLogger("promoter.hub")
    if applied:
        log.info("migrated %s to schema version %d", db.describe(), applied[-1])
    log.info("serving %s on http://%s:%d", db.describe(), host, port)
    uvicorn.run(build_app(db, limits), host=host, port=port, log_level="warning", access_log=False)
