"""A hub read asked of the hub's HTTP API (``--url``) or of its database (``--database``): the
same names and parameters either way, and the same answers; a read the hub refuses (a name it
does not know, a bad parameter, a reader's key missing) is the user's to fix, anything else the
hub's."""

from __future__ import annotations

import time
from typing import Any, NoReturn

from promoter.errors import ForgeError, UsageError
from promoter.gates.http import HttpProblem
from promoter.gates.hubapi import TOKEN_ENV, HubClient, secret_from_env
from promoter.hub.db import existing
from promoter.hub.payloads import IngestError
from promoter.hub.reads import read
from promoter.hub.rollout import NotFound

#: A reader's key, for a hub served with --require-read-key (else a promoter key is tried).
READ_KEY_ENV = "PROMOTER_HUB_READ_KEY"

#: Each read's path in the hub's API.
PATHS = {
    "rollout": "/v1/rollout",
    "environments": "/v1/environments",
    "environment": "/v1/environments/{name}",
    "clusters": "/v1/clusters",
    "cluster": "/v1/clusters/{name}",
    "history": "/v1/history",
    "discrepancies": "/v1/discrepancies",
    "drift": "/v1/drift",
    "stale": "/v1/stale",
    "failing": "/v1/failing",
    "delivery": "/v1/delivery",
    "holds": "/v1/holds",
}


def fetch(
    name: str, params: dict[str, Any], url: str | None, database: str | None, stale_after: float
) -> Any:
    """The read ``name`` with ``params`` (empty ones dropped), from the API at ``url`` or else the
    database; a cluster silent ``stale_after`` seconds is stale."""
    params = {k: v for k, v in params.items() if v not in (None, "", ())}
    try:
        return (
            _from_api(url, name, params, stale_after)
            if url
            else _from_database(database, name, params, stale_after)
        )
    except (NotFound, IngestError, HttpProblem) as err:
        _refused(err)


def _from_api(url: str, name: str, params: dict[str, Any], stale_after: float) -> Any:
    path = PATHS[name].format(name=params.pop("name", ""))
    key = secret_from_env(READ_KEY_ENV) or secret_from_env(TOKEN_ENV)
    return HubClient(url, key).get(path, {**params, "staleAfter": f"{int(stale_after)}s"})


def _from_database(database: str | None, name: str, params: dict[str, Any], stale_after: float) -> Any:
    db = existing(database)
    db.migrate()
    return read(db, name, params, time.time(), stale_after)


def _refused(err: NotFound | IngestError | HttpProblem) -> NoReturn:
    """A refused read as the user's error (exit 2); a hub that failed as the forge's (exit 4)."""
    if isinstance(err, NotFound):
        raise UsageError(str(err)) from err
    if isinstance(err, IngestError):
        raise UsageError(err.message) from err
    if err.status is not None and 400 <= err.status < 500:
        raise UsageError(str(err)) from err
    raise ForgeError(str(err)) from err
