"""One delivery, from bytes to a committed row: who sent it (the key decides), what it says,
whether it is fresh, and storing it. Blocking when it reads the database; the HTTP layer runs
it in the event loop when the sender's keys are cached (``KeyCache``), else in a worker thread.

Authentication comes before the body is parsed: an unsigned body is never read as JSON.
"""

from __future__ import annotations

import hmac
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from promoter.hub import keys
from promoter.hub.commitbody import commit_from_json as commit_from_json
from promoter.hub.commits import record_commit
from promoter.hub.db import Database, database_errors
from promoter.hub.holds import holds_from_json, record_holds
from promoter.hub.payloads import IngestError, Report, argocd_notification, decode, flux_event, native_report
from promoter.hub.sealing import Sealer
from promoter.hub.store import Stored, check_fresh, check_identity, report_digest, stored_as
from promoter.hub.store import store_report as _store

PARSERS = {"flux": flux_event, "argocd": argocd_notification, "native": native_report}
DEFAULT_MAX_AGE = 3600.0


@dataclass(frozen=True)
class Limits:
    max_body: int = 1024 * 1024
    max_age: float = DEFAULT_MAX_AGE


def check_headers(headers: Mapping[str, str], limits: Limits) -> None:
    """Refuse a body before it is read when its headers say it is not JSON or too long."""
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise IngestError(415, f"Content-Type must be application/json, got {kind or 'none'!r}")
    declared = headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limits.max_body:
        raise IngestError(413, f"the body is {declared} bytes, over the limit of {limits.max_body}")


def bearer(headers: Mapping[str, str]) -> str:
    value = headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise IngestError(401, "missing 'Authorization: Bearer <key>'")
    return token.strip()


class KeyMiss(Exception):
    """The sender's keys are not in the cache: look them up in the database (off the event loop)."""


class KeyCache:
    """Senders' keys, so that a report needs no database read before its write. An entry is
    trusted for ``ttl`` seconds after it was read, and for ``ttl`` seconds after the start of
    the last ``check`` that found ``sender_keys`` unchanged (no key made or revoked since the
    check before): a key revoked (or a cluster registered) takes effect within ``ttl``. A
    check that finds a change (the first one too) reads every cluster's keys afresh in one
    query, in place of all it held, so that a hub hearing from thousands of clusters reads no
    key per report, not even at a cluster's first report. Senders found one by one (readers,
    and clusters when there are more than ``size`` keys) are kept too; unknown names are not
    (an unknown name costs a lookup each time, and no memory)."""

    def __init__(
        self,
        ttl: float = 5.0,
        size: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
        sealer: Sealer | None = None,
        check_every: float = 1.0,
    ) -> None:
        self.ttl, self.size, self.clock, self.check_every = ttl, size, clock, check_every
        self.sealer = sealer  # opens the cluster keys the database keeps sealed
        #: Bumped by each check that finds a change: an entry read before it is not kept.
        self.generation = 0
        self._entries: dict[tuple[str, str], tuple[float, int, keys.Cluster, list[str]]] = {}
        self._fingerprint: Any = None
        self._verified = -math.inf  # when the last check that found nothing changed began
        self._checked = -math.inf  # when the last check began
        self._checking = False

    def get(self, kind: str, name: str) -> tuple[keys.Cluster, list[str]] | None:
        entry = self._entries.get((kind, name))
        if entry is None:
            return None
        read_at, generation, cluster, secrets = entry
        if generation != self.generation:
            return None
        trusted_until = max(read_at, self._verified) + self.ttl
        if trusted_until < self.clock():
            return None
        return cluster, secrets

    def put(
        self, kind: str, name: str, cluster: keys.Cluster, secrets: list[str], generation: int | None = None
    ) -> None:
        """Keep a sender's keys, read from the database while ``generation`` (the cache's, read
        before the database was) was current: not kept if a check has forgotten all since."""
        if generation is not None and generation != self.generation:
            return
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[(kind, name)] = (self.clock(), self.generation, cluster, secrets)

    def due(self) -> bool:
        """Whether a ``check`` is due (at most one runs at a time); the caller then runs it."""
        if self._checking or self.clock() - self._checked < self.check_every:
            return False
        self._checking = True
        return True

    def check(self, db: Database) -> None:
        """Read ``sender_keys``' fingerprint (the newest key's id, how many are revoked: keys
        are never deleted nor revoked twice, so a key revoked moves it, and so does a key made,
        but for one committed after a later one on PostgreSQL, which the signature check's
        second look finds: ``_signed``); forget every entry when it moved. Two index reads,
        whatever the number of keys. Blocking: run off the event loop."""
        started = self._checked = self.clock()
        try:
            with db.transaction(write=False) as tx:
                fingerprint = tx.one(FINGERPRINT)
                if fingerprint == self._fingerprint:
                    self._verified = started
                    return
                # Read after the fingerprint: as new as it, or newer (a change after it moves
                # the next check's).
                count = int(fingerprint[0] or 0) if fingerprint else 0  # ids from 1, never deleted
                found = keys.clusters_with_secrets(tx, self.sealer) if 2 * count <= self.size else None
        except database_errors():
            return  # entries lapse after ``ttl``; requests say the database is unavailable
        finally:
            self._checking = False
        generation = self.generation + 1
        entries: dict[tuple[str, str], tuple[float, int, keys.Cluster, list[str]]] = {}
        if found is not None:
            by_name, by_digest = found
            for name, (cluster, secrets) in by_name.items():
                entries[("flux", name)] = (started, generation, cluster, secrets)
            for key_digest, cluster in by_digest.items():
                entries[("bearer", key_digest)] = (started, generation, cluster, [])
        self._entries = entries
        self.generation = generation
        self._fingerprint = fingerprint
        self._verified = started


FINGERPRINT = (
    "SELECT (SELECT MAX(id) FROM sender_keys),"
    " (SELECT COUNT(*) FROM sender_keys WHERE revoked_at IS NOT NULL)"  # sender_keys_revoked
)


def authenticate(
    db: Database,
    source: str,
    path_cluster: str | None,
    headers: Mapping[str, str],
    body: bytes,
    cache: KeyCache | None = None,
    offline: bool = False,
) -> keys.Cluster:
    """The cluster that sent ``body``: named by the path and proven by the HMAC (Flux), or named
    by its Bearer key (Argo CD, native; a path that names another cluster is refused). With
    ``offline``, only the cache is read (KeyMiss when it does not know the sender)."""
    if source == "flux":
        assert path_cluster is not None
        return _signed(db, path_cluster, headers.get("x-signature", ""), body, cache, offline)
    found = _bearer_cluster(db, keys.digest(bearer(headers)), cache, offline)
    if found is None:
        raise IngestError(401, "the Bearer key is unknown or revoked")
    if path_cluster is not None and not hmac.compare_digest(path_cluster, found.name):
        raise IngestError(
            403, f"the path names cluster {path_cluster!r} but the key is cluster {found.name!r}"
        )
    return found


def _bearer_cluster(
    db: Database, token_digest: str, cache: KeyCache | None, offline: bool
) -> keys.Cluster | None:
    """The cluster whose key has ``token_digest``: from the cache, else from the database (and
    then cached); None when no active key has it."""
    known = cache.get("bearer", token_digest) if cache else None
    if known is not None:
        return known[0]
    if offline:
        raise KeyMiss(token_digest)
    generation = cache.generation if cache else 0
    with db.transaction(write=False) as tx:
        found = keys.cluster_of_key_digest(tx, token_digest)
    if found is not None and cache:
        cache.put("bearer", token_digest, found, [], generation)
    return found


def _signed(
    db: Database, name: str, signature: str, body: bytes, cache: KeyCache | None, offline: bool
) -> keys.Cluster:
    known = cache.get("flux", name) if cache else None
    if known is not None and signature and keys.signature_matches(known[1], body, signature):
        return known[0]
    # Not known, or not signed with a key the cache holds, which may be a key made since the
    # cache read this cluster's: the database decides (off the event loop).
    if offline:
        raise KeyMiss(name)
    found, secrets = _cluster_with_secrets(db, name, cache)
    return _check_signature(found, secrets, signature, body)


def _cluster_with_secrets(db: Database, name: str, cache: KeyCache | None) -> tuple[keys.Cluster, list[str]]:
    """Cluster ``name`` and its keys, read from the database (and then cached)."""
    generation = cache.generation if cache else 0
    with db.transaction(write=False) as tx:
        found, secrets = keys.cluster_with_secrets(tx, name, cache.sealer if cache else None)
    if found is None:
        raise IngestError(404, f"unknown cluster {name!r}: register it with promoter hub keys add")
    if cache:
        cache.put("flux", name, found, secrets, generation)
    return found, secrets


def _check_signature(found: keys.Cluster, secrets: list[str], signature: str, body: bytes) -> keys.Cluster:
    """``found``, when ``signature`` is the HMAC of ``body`` with one of its ``secrets``."""
    if not signature:
        raise IngestError(401, "missing X-Signature (use Flux's generic-hmac provider)")
    if not keys.signature_matches(secrets, body, signature):
        raise IngestError(401, f"X-Signature does not match the body with cluster {found.name}'s key")
    return found


def prepare(
    db: Database,
    source: str,
    path_cluster: str | None,
    headers: Mapping[str, str],
    body: bytes,
    limits: Limits = Limits(),
    cache: KeyCache | None = None,
    offline: bool = False,
) -> tuple[keys.Cluster, Report, str]:
    """Authenticate and parse one delivery: its cluster, report and digest; IngestError when
    refused (KeyMiss with ``offline`` when the cache does not know the sender)."""
    if len(body) > limits.max_body:
        raise IngestError(413, f"the body is {len(body)} bytes, over the limit of {limits.max_body}")
    cluster = authenticate(db, source, path_cluster, headers, body, cache, offline)
    report = PARSERS[source](decode(body))
    check_identity(cluster, report)
    return cluster, report, report_digest(cluster.name, source, body)


def ingest(
    db: Database,
    source: str,
    path_cluster: str | None,
    headers: Mapping[str, str],
    body: bytes,
    now: float,
    limits: Limits = Limits(),
    store: Callable[[keys.Cluster, Report, str, float], Stored] | None = None,
    cache: KeyCache | None = None,
) -> tuple[keys.Cluster, Stored]:
    """Authenticate, parse, check and store one delivery (with ``store``, e.g. a GroupWriter's,
    else in a transaction of its own); IngestError when refused."""
    cluster, report, digest = prepare(db, source, path_cluster, headers, body, limits, cache)
    earlier = late_retry(db, report, digest, now, limits)
    if earlier is not None:
        return cluster, earlier
    if store is None:
        return cluster, _store(db, cluster, report, digest, now)
    return cluster, store(cluster, report, digest, now)


def stale(report: Report, now: float, limits: Limits) -> bool:
    """Whether ``report`` is outside the accepted window (then ``late_retry`` decides)."""
    try:
        check_fresh(report, now, limits.max_age)
    except IngestError:
        return True
    return False


def late_retry(db: Database, report: Report, digest: str, now: float, limits: Limits) -> Stored | None:
    """None when the report is fresh; the stored delivery when a stale one is a late retry of
    it (idempotent); else the 409 (or 422 for a time in the future)."""
    try:
        check_fresh(report, now, limits.max_age)
    except IngestError:
        earlier = stored_as(db, digest)
        if earlier is None:
            raise
        return earlier
    return None


def record(db: Database, headers: Mapping[str, str], body: bytes, now: float) -> bool:
    """``POST /v1/commits``: a promoter key records a merged platform commit."""
    _promoter(db, headers)
    return record_commit(db, commit_from_json(decode(body)), now)


def record_holds_of(db: Database, headers: Mapping[str, str], body: bytes, now: float) -> int:
    """``POST /v1/holds``: a promoter key sends an environment's holds in force (replacing the
    ones it sent before); how many the environment has now."""
    _promoter(db, headers)
    environment, found = holds_from_json(decode(body))
    return record_holds(db, environment, found, now)


def _promoter(db: Database, headers: Mapping[str, str]) -> None:
    with db.transaction(write=False) as tx:
        if keys.sender_of(tx, bearer(headers), "promoter") is None:
            raise IngestError(
                401, "the Bearer key is not an active promoter key (promoter hub keys add-promoter)"
            )
