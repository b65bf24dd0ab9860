"""One statement for many rows: on PostgreSQL, the rows travel as one JSON parameter; on
SQLite, where a statement costs no round trip, ``executemany`` (the hub's batch writes,
store.py)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from typing import Any

from promoter.hub.db import Tx

TEXT, FLOAT = "text", "float8"


def rows_query(types: tuple[str, ...], names: tuple[str, ...] = ()) -> str:
    """PostgreSQL: the rows of one JSON parameter (an array of arrays, ``json_param``), as a query
    of ``types``-typed columns (named ``names``). One text parameter costs the hub less than
    one array per column (psycopg adapts each element of an array in Python; a JSON text is
    one ``json.dumps``) and keeps one statement text, prepared once, for any number of rows."""
    columns = ", ".join(f"(e->>{i})::{t}" + (f" AS {names[i]}" if names else "") for i, t in enumerate(types))
    return f"SELECT {columns} FROM json_array_elements(?::json) AS e"


def json_param(rows: Iterable[Sequence[Any]]) -> tuple[str]:
    return (json.dumps(list(rows), separators=(",", ":")),)


@functools.cache
def pg_insert(sql: str, types: tuple[str, ...]) -> str:
    """PostgreSQL's form of an ``INSERT ... VALUES (?, ...)`` of one row: the rows of ``rows_query``."""
    values = " VALUES (" + ", ".join("?" for _ in types) + ")"
    assert values in sql
    return sql.replace(values, " " + rows_query(types))


def insert_many(tx: Tx, sql: str, types: tuple[str, ...], rows: Sequence[Sequence[Any]]) -> None:
    """Run the one-row ``INSERT`` ``sql`` for each of ``rows``, in order."""
    if not rows:
        return
    if tx.dialect == "postgresql":
        tx.run(pg_insert(sql, types), json_param(rows))
    else:
        tx.run_many(sql, rows)
