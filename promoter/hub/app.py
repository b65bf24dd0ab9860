"""The hub's HTTP API and pages, as a Starlette application (the ``hub`` extra).

Ingest answers 2xx only after the report's transaction committed (201 new, 200 a retry of a
delivery already stored); a refusal is a 4xx JSON ``{"error": ...}`` and one log line, never a
stack trace. Blocking database work runs in Starlette's thread pool; a report's write, in the
group writer's threads (writer.py), awaited without a thread of its own.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from promoter.clock import parse_duration
from promoter.errors import one_line
from promoter.hub import ingest, keys, pages
from promoter.hub.db import Database, database_errors
from promoter.hub.ingest import KeyCache, KeyMiss, Limits, late_retry, prepare, record, record_holds_of, stale
from promoter.hub.keys import Cluster
from promoter.hub.metrics import REFUSED, Counters, exposition
from promoter.hub.pagecache import PageCache
from promoter.hub.payloads import IngestError
from promoter.hub.reads import DEFAULT_WINDOW, parse_window, read, total_header
from promoter.hub.rollout import NotFound
from promoter.hub.sealing import Sealer
from promoter.hub.writer import GroupWriter

log = logging.getLogger("promoter.hub")
DEFAULT_STALE_AFTER = 1800.0


class Hub:
    """The application's state: its database, limits and clock."""

    def __init__(
        self,
        db: Database,
        limits: Limits,
        clock: Callable[[], float] = time.time,
        require_read_key: bool = False,
        sealer: Sealer | None = None,
    ) -> None:
        self.db, self.limits, self.clock = db, limits, clock
        self.require_read_key = require_read_key
        self.counters = Counters()
        self.writer = GroupWriter(db, counters=self.counters)
        self.pages = PageCache(db, self.writer.listeners)
        self.keys = KeyCache(sealer=sealer)
        self._tasks: set[asyncio.Future[None]] = set()

    async def body(self, headers: Mapping[str, str], receive: Receive) -> bytes:
        """The body, read from its ASGI messages; refused before it is read when its headers say
        it is too long or not JSON, and as soon as it grows past the limit."""
        ingest.check_headers(headers, self.limits)
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limits.max_body:
                raise IngestError(413, f"the body is over the limit of {self.limits.max_body} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def ingest(self, request: Request) -> Response:
        """An ingest route through Starlette (``FastIngest`` takes the POSTs before it)."""
        source = request.url.path.split("/")[3] if request.url.path.startswith("/v1/ingest/") else "native"
        status, body = await self.deliver(
            source, request.path_params.get("cluster"), request.headers, request.receive
        )
        return Response(body, status, media_type="application/json")

    async def deliver(
        self, source: str, cluster: str | None, headers: Mapping[str, str], receive: Receive
    ) -> tuple[int, bytes]:
        """Authenticate and parse in the event loop when the sender's keys are cached (CPU only:
        HMAC and JSON), else in a worker thread; then await the group writer's commit. The
        status and JSON body of the answer."""
        try:
            body = await self.body(headers, receive)
            args = (self.db, source, cluster, headers, body, self.limits, self.keys)
            try:
                # On SQLite the sender's key is one indexed read of a local file (tens of
                # microseconds, never waiting for a writer in WAL mode): cheaper in the event
                # loop than a thread hop. PostgreSQL's is a network round trip: off the loop.
                who, report, digest = prepare(*args, offline=self.db.dialect != "sqlite")
            except KeyMiss:
                who, report, digest = await run_in_threadpool(prepare, *args)
            if self.keys.due():
                self._background(run_in_threadpool(self.keys.check, self.db))
            now = self.clock()
            if stale(report, now, self.limits):  # a late retry of a stored delivery stays idempotent
                earlier = await run_in_threadpool(late_retry, self.db, report, digest, now, self.limits)
                stored = earlier if earlier is not None else await self.writer.wait(who, report, digest, now)
            else:
                stored = await self.writer.wait(who, report, digest, now)
        except IngestError as err:
            self.refused(err, f"{source} report for {cluster or 'a Bearer key'}", source)
            return err.status, _json({"error": err.message})
        except database_errors() as err:
            self.unavailable(err)
            return 503, _UNAVAILABLE
        # 201 only when history grew; a retry or a report that changed nothing is 200.
        if stored.unchanged:
            return 200, _json(
                {"id": stored.id, "cluster": who.name, "duplicate": stored.duplicate, "unchanged": True}
            )
        return 200 if stored.duplicate else 201, _json(
            {"id": stored.id, "cluster": who.name, "duplicate": stored.duplicate}
        )

    def _background(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in this event loop, holding on to it until it is done."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def commits(self, request: Request) -> Response:
        new = await self._promoter_write(request, record, "a commit record", "commits")
        return new if isinstance(new, Response) else JSONResponse({"recorded": new}, 201 if new else 200)

    async def holds(self, request: Request) -> Response:
        count = await self._promoter_write(request, record_holds_of, "holds", "holds")
        return count if isinstance(count, Response) else JSONResponse({"holds": count})

    async def _promoter_write(
        self, request: Request, work: Callable[..., Any], what: str, source: str
    ) -> Any:
        """``work(db, headers, body, now)`` in a worker thread: what it returns, else the
        refusal or the 503 to answer."""
        try:
            body = await self.body(request.headers, request.receive)
            return await run_in_threadpool(
                self.pages.after(work), self.db, request.headers, body, self.clock()
            )
        except IngestError as err:
            return self.refuse(err, what, source)
        except database_errors() as err:
            return self.unavailable(err)

    def refuse(self, err: IngestError, what: str, source: str) -> Response:
        self.refused(err, what, source)
        return JSONResponse({"error": err.message}, err.status)

    def refused(self, err: IngestError, what: str, source: str) -> None:
        """Count and log a refusal (one line)."""
        self.counters.add(REFUSED, {"source": source, "status": str(err.status)})
        log.warning("refused %s: HTTP %d: %s", one_line(what), err.status, one_line(err.message))

    def unavailable(self, err: Exception) -> Response:
        log.error("database unavailable: %s", str(err).strip().splitlines()[0] if str(err).strip() else err)
        return JSONResponse({"error": "the database is unavailable; retry"}, 503)

    async def reader(self, request: Request) -> str | None:
        """Who may read, when reads need a key: a reader's or a promoter's key, as a Bearer
        token or as the password of HTTP Basic (what a browser sends); IngestError(401) else."""
        if not self.require_read_key:
            return None
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        key = value.strip()
        if scheme.lower() == "basic":
            try:
                key = base64.b64decode(key, validate=True).decode().partition(":")[2]
            except (ValueError, UnicodeDecodeError):
                key = ""
        elif scheme.lower() != "bearer":
            key = ""
        if not key:
            raise IngestError(
                401, "reads need a key: Authorization: Bearer <reader key> (promoter hub keys add-reader)"
            )
        key_digest = keys.digest(key)
        known = self.keys.get("reader", key_digest)
        if known is not None:
            return known[0].name
        generation = self.keys.generation
        owner = await run_in_threadpool(self._reader_of, key_digest)
        if owner is None:
            raise IngestError(401, "the read key is unknown or revoked")
        self.keys.put("reader", key_digest, Cluster(owner, "", ""), [], generation)
        return owner

    def _reader_of(self, key_digest: str) -> str | None:
        with self.db.transaction(write=False) as tx:
            return keys.reader_of(tx, key_digest)

    async def read(self, request: Request, name: str) -> Response:
        """A JSON read, or its page when the path is a page's."""
        try:
            await self.reader(request)
            stale_after = _duration(request.query_params.get("staleAfter"), DEFAULT_STALE_AFTER)
            data = await run_in_threadpool(self._read, name, request, stale_after)
        except IngestError as err:
            return JSONResponse({"error": err.message}, err.status)
        except NotFound as err:
            return JSONResponse({"error": str(err)}, 404)
        except database_errors() as err:
            return self.unavailable(err)
        return JSONResponse(data, headers=total_header(data))

    def _read(self, name: str, request: Request, stale_after: float, page: bool = False) -> Any:
        """Read ``name`` for a JSON answer, or (``page``) its page, rendered or kept (``pagecache``)."""
        params: dict[str, Any] = {**request.query_params, **request.path_params}
        params["clusterType"] = request.query_params.getlist("clusterType")
        if page:
            return self.pages.page(request, name, params, self.clock(), stale_after)
        return read(self.db, name, params, self.clock(), stale_after)

    async def page(self, request: Request, name: str) -> Response:
        try:
            await self.reader(request)
        except IngestError as err:
            challenge = {"WWW-Authenticate": 'Basic realm="promoter hub", charset="UTF-8"'}
            return HTMLResponse(pages.not_found(err.message), 401, headers=challenge)
        except database_errors() as err:
            self.unavailable(err)
            return HTMLResponse(pages.not_found("the database is unavailable; reload in a moment"), 503)
        try:
            stale_after = _duration(request.query_params.get("staleAfter"), DEFAULT_STALE_AFTER)
            html = await run_in_threadpool(self._read, name, request, stale_after, True)
        except IngestError as err:
            return HTMLResponse(pages.not_found(err.message, "Bad request"), err.status)
        except NotFound as err:
            return HTMLResponse(pages.not_found(str(err)), 404)
        except database_errors() as err:
            self.unavailable(err)
            return HTMLResponse(pages.not_found("the database is unavailable; reload in a moment"), 503)
        return HTMLResponse(html)

    async def metrics(self, request: Request) -> Response:
        """``/metrics`` in Prometheus' text format (``?window=7d`` for the DORA window)."""
        try:
            await self.reader(request)
            stale_after = _duration(request.query_params.get("staleAfter"), DEFAULT_STALE_AFTER)
            window = (
                parse_window(request.query_params.get("window") or "")
                if request.query_params.get("window")
                else DEFAULT_WINDOW
            )
            text = await run_in_threadpool(
                exposition, self.db, self.clock(), stale_after, window, self.counters
            )
        except IngestError as err:
            return PlainTextResponse(err.message + "\n", err.status)
        except database_errors() as err:
            return self.unavailable(err)
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")

    async def healthz(self, request: Request) -> Response:
        try:
            await run_in_threadpool(self._ping)
        except database_errors() as err:
            return self.unavailable(err)
        return JSONResponse({"ok": True, "database": self.db.dialect})

    def _ping(self) -> None:
        with self.db.transaction(write=False) as tx:
            tx.one("SELECT 1")


def _duration(text: str | None, default: float) -> float:
    if not text:
        return default
    try:
        return parse_duration(text)
    except ValueError as err:
        raise IngestError(400, f"staleAfter: {err}") from err


def build_app(
    db: Database,
    limits: Limits | None = None,
    clock: Callable[[], float] = time.time,
    require_read_key: bool = False,
    sealer: Sealer | None = None,
) -> FastIngest:
    hub = Hub(db, limits or Limits(), clock, require_read_key, sealer)

    def reader(name: str, page: bool = False) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            return await (hub.page(request, name) if page else hub.read(request, name))

        return endpoint

    routes = [
        Route("/healthz", hub.healthz),
        Route("/v1/ingest/flux/{cluster}", hub.ingest, methods=["POST"]),
        Route("/v1/ingest/argocd/{cluster}", hub.ingest, methods=["POST"]),
        Route("/v1/reports", hub.ingest, methods=["POST"]),
        Route("/v1/commits", hub.commits, methods=["POST"]),
        Route("/v1/holds", hub.holds, methods=["POST"]),
        Route("/v1/holds", reader("holds")),
        Route("/v1/rollout", reader("rollout")),
        Route("/v1/environments", reader("environments")),
        Route("/v1/environments/{name}", reader("environment")),
        Route("/v1/clusters", reader("clusters")),
        Route("/v1/clusters/{name}", reader("cluster")),
        Route("/v1/history", reader("history")),
        Route("/v1/discrepancies", reader("discrepancies")),
        Route("/v1/drift", reader("drift")),
        Route("/v1/stale", reader("stale")),
        Route("/v1/failing", reader("failing")),
        Route("/v1/delivery", reader("delivery")),
        Route("/metrics", hub.metrics),
        Route("/", reader("environments", page=True)),
        Route("/environments/{name}", reader("environment", page=True)),
        Route("/clusters/{name}", reader("cluster", page=True)),
        Route("/rollout", reader("rollout", page=True)),
        *(
            Route(f"/{name}", reader(name, page=True))
            for name in ("history", "discrepancies", "drift", "stale", "failing", "delivery")
        ),
    ]
    return FastIngest(hub, Starlette(routes=routes))


class FastIngest:
    """The ASGI app: reports (the bulk of the traffic, thousands a second) go straight to
    ``Hub.deliver``, without the router, request and response objects; everything else to
    Starlette."""

    def __init__(self, hub: Hub, app: Starlette) -> None:
        self.hub, self.app = hub, app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = _ingest_route(scope)
        if route is None:
            await self.app(scope, receive, send)
            return
        status, body = await self.hub.deliver(route[0], route[1], _headers(scope["headers"]), receive)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))],
            }
        )
        await send({"type": "http.response.body", "body": body})


#: The request headers ingest reads (a report is authenticated and read with these alone).
_INGEST_HEADERS = {
    name.encode(): name for name in ("content-type", "content-length", "x-signature", "authorization")
}


def _headers(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """The headers ingest reads, by lowercase name (of a repeated one, the last)."""
    found = {}
    for name, value in raw:
        key = _INGEST_HEADERS.get(name) or _INGEST_HEADERS.get(name.lower())
        if key is not None:
            found[key] = value.decode("latin-1")
    return found


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _json(payload: dict[str, Any]) -> bytes:
    """A JSON answer's body, as Starlette's JSONResponse renders it."""
    return _ENCODER.encode(payload).encode()


_UNAVAILABLE = _json({"error": "the database is unavailable; retry"})


def _ingest_route(scope: Scope) -> tuple[str, str | None] | None:
    """(source, cluster of the path) of a POST to an ingest endpoint, else None."""
    if scope["type"] != "http" or scope["method"] != "POST":
        return None
    path = scope["path"]
    if path == "/v1/reports":
        return "native", None
    parts = path.split("/")
    if len(parts) == 5 and parts[1:3] == ["v1", "ingest"] and parts[3] in ("flux", "argocd") and parts[4]:
        return parts[3], parts[4]
    return None
