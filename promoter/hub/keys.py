"""Senders and their keys: each cluster (and each promoter that records commits) has its own.

A key is shown once, when it is made. The hub keeps its SHA-256 digest (to find the sender of
a Bearer token) and the key itself (a Flux ``generic-hmac`` signature can only be checked with
it), in ``sender_keys``, which no read endpoint or page selects from.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass
from typing import Literal

from promoter.errors import UsageError
from promoter.hub.db import Database, Tx
from promoter.hub.sealing import SECRET_ENV, Sealer, is_sealed, opened, stored_form

Role = Literal["cluster", "promoter", "reader"]
#: The roles whose keys may read (``hub serve --require-read-key``): a reader, and a promoter
#: (the ``hub`` gate reads the rollout with the key it records commits with).
READ_ROLES = ("reader", "promoter")
KEY_PREFIX = "phk_"
#: Cluster, environment and cluster type names: DNS names, as Kubernetes and the control plane use.
NAME_PATTERN = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")


@dataclass(frozen=True)
class Cluster:
    name: str
    environment: str
    cluster_type: str


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def check_name(value: str, what: str) -> str:
    if not NAME_PATTERN.fullmatch(value) or len(value) > 253:
        raise UsageError(
            f"{what} {value!r}: use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
        )
    return value


def add_cluster_key(
    db: Database,
    name: str,
    environment: str,
    cluster_type: str,
    sealer: Sealer | None = None,
    now: float | None = None,
) -> tuple[int, str]:
    """Register cluster ``name`` (or check it is registered as said) and make it a new key. A
    revoked cluster registered again starts a new registration (``cluster_registrations``): the
    DORA figures count it from its first report of this one (dora.py)."""
    for value, what in ((name, "cluster"), (environment, "--environment"), (cluster_type, "--cluster-type")):
        check_name(value, what)
    key = new_key()
    at = time.time() if now is None else now
    with db.transaction() as tx:
        row = tx.one("SELECT environment, cluster_type, revoked_at FROM clusters WHERE name = ?", (name,))
        if row is None:
            tx.run(
                "INSERT INTO clusters (name, environment, cluster_type, created_at) VALUES (?, ?, ?, ?)",
                (name, environment, cluster_type, at),
            )
        elif (row[0], row[1]) != (environment, cluster_type):
            raise UsageError(
                f"cluster {name} is registered in environment {row[0]} as cluster type {row[1]}; "
                "register the new one under another name"
            )
        elif row[2] is not None:
            tx.run("UPDATE clusters SET revoked_at = NULL, first_report = NULL WHERE name = ?", (name,))
        if row is None or row[2] is not None:
            tx.run(
                "INSERT INTO cluster_registrations (cluster, environment, cluster_type, registered_at)"
                " VALUES (?, ?, ?, ?)",
                (name, environment, cluster_type, at),
            )
        key_id = _insert_key(tx, name, "cluster", key, sealer, at)
    return key_id, key


def add_promoter_key(db: Database, name: str) -> tuple[int, str]:
    """A key for a promoter run that records merged platform commits (``POST /v1/commits``)."""
    return _add_named_key(db, name, "promoter")


def add_reader_key(db: Database, name: str) -> tuple[int, str]:
    """A key that may read the API and pages of a hub serving with ``--require-read-key``."""
    return _add_named_key(db, name, "reader")


def _add_named_key(db: Database, name: str, kind: Role) -> tuple[int, str]:
    check_name(name, "name")
    key = new_key()
    with db.transaction() as tx:
        key_id = _insert_key(tx, name, kind, key)
    return key_id, key


def reader_of(tx: Tx, key_digest: str) -> str | None:
    """The owner of an active key that may read, by its SHA-256, or None."""
    marks = ", ".join("?" for _ in READ_ROLES)
    row = tx.one(
        f"SELECT owner FROM sender_keys WHERE digest = ? AND role IN ({marks}) AND revoked_at IS NULL",
        (key_digest, *READ_ROLES),
    )
    return str(row[0]) if row else None


def _insert_key(
    tx: Tx, owner: str, role: Role, key: str, sealer: Sealer | None = None, now: float | None = None
) -> int:
    # Only a cluster's key is kept (a Flux signature is checked with it), sealed when the hub has
    # a secret; a Bearer-only key (promoter, reader) is found by its digest and kept no more.
    key_digest = digest(key)
    kept = stored_form(key, key_digest, sealer) if role == "cluster" else ""
    row = tx.one(
        "INSERT INTO sender_keys (owner, role, digest, secret, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id",
        (owner, role, key_digest, kept, time.time() if now is None else now),
    )
    assert row is not None
    return int(row[0])


def list_keys(db: Database) -> list[dict[str, object]]:
    """Every key's id, owner, role, times and the cluster it speaks for; never the key."""
    with db.transaction() as tx:
        rows = tx.rows(
            "SELECT k.id, k.owner, k.role, k.created_at, k.revoked_at, c.environment, c.cluster_type"
            " FROM sender_keys k LEFT JOIN clusters c ON c.name = k.owner AND k.role = 'cluster'"
            " ORDER BY k.owner, k.id"
        )
    names = ("id", "owner", "role", "createdAt", "revokedAt", "environment", "clusterType")
    return [dict(zip(names, r, strict=True)) for r in rows]


def revoke(db: Database, owner: str, key_id: int | None = None, now: float | None = None) -> int:
    """Revoke ``owner``'s keys (or the one ``key_id``); a cluster with no key left is no longer
    counted by reads and gates, and its registration ends (the DORA figures of before stay as
    they were). The number of keys revoked."""
    now = time.time() if now is None else now
    with db.transaction() as tx:
        where = "owner = ? AND revoked_at IS NULL"
        params: list[object] = [owner]
        if key_id is not None:
            where, params = where + " AND id = ?", [owner, key_id]
        count = len(tx.rows(f"SELECT id FROM sender_keys WHERE {where}", params))
        if not count:
            raise UsageError(f"{owner}: no such key" + (f" with id {key_id}" if key_id else "s to revoke"))
        tx.run(f"UPDATE sender_keys SET revoked_at = ? WHERE {where}", [now, *params])
        left = tx.one("SELECT COUNT(*) FROM sender_keys WHERE owner = ? AND revoked_at IS NULL", (owner,))
        if left and left[0] == 0:
            _end_registration(tx, owner, now)
    return count


def _end_registration(tx: Tx, cluster: str, now: float) -> None:
    """Cluster ``cluster`` is revoked at ``now``: its open registration ends, keeping its first report."""
    tx.run(
        "UPDATE cluster_registrations SET revoked_at = ?, first_report = COALESCE(first_report,"
        " (SELECT c.first_report FROM clusters c WHERE c.name = ?)) WHERE cluster = ? AND revoked_at IS NULL",
        (now, cluster, cluster),
    )
    tx.run("UPDATE clusters SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL", (now, cluster))


def sender_of(tx: Tx, key: str, role: Role) -> str | None:
    """The owner of an active ``role`` key (a Bearer token), or None."""
    row = tx.one(
        "SELECT owner FROM sender_keys WHERE digest = ? AND role = ? AND revoked_at IS NULL",
        (digest(key), role),
    )
    return str(row[0]) if row else None


def signature_matches(secrets: list[str], body: bytes, signature: str) -> bool:
    """Whether ``signature`` (``sha256=<hex>``, Flux's X-Signature) is an HMAC of ``body`` with
    one of ``secrets``."""
    algorithm, _, given = signature.strip().partition("=")
    if algorithm not in ("sha224", "sha256", "sha384", "sha512") or not given:
        return False
    given = given.lower()
    for secret in secrets:
        keyed = _keyed(secret, algorithm)
        keyed.update(body)
        if hmac.compare_digest(keyed.hexdigest(), given):
            return True
    return False


_KEYED: dict[tuple[str, str], hmac.HMAC] = {}


def _keyed(secret: str, algorithm: str) -> hmac.HMAC:
    """A fresh HMAC of ``secret``: a copy of one made once per key (making one looks the
    digest up in OpenSSL's providers and hashes the padded key, each time)."""
    base = _KEYED.get((secret, algorithm))
    if base is None:
        if len(_KEYED) >= 100_000:
            _KEYED.clear()
        base = _KEYED[(secret, algorithm)] = hmac.new(secret.encode(), digestmod=algorithm)
    return base.copy()


def cluster_with_secrets(tx: Tx, name: str, sealer: Sealer | None = None) -> tuple[Cluster | None, list[str]]:
    """A registered, unrevoked cluster and its active keys (opened), in one query; a key that
    cannot be opened (sealed with another secret) is left out."""
    rows = tx.rows(
        "SELECT c.name, c.environment, c.cluster_type, k.secret, k.digest FROM clusters c LEFT JOIN sender_keys k"
        " ON k.owner = c.name AND k.role = 'cluster' AND k.revoked_at IS NULL"
        " WHERE c.name = ? AND c.revoked_at IS NULL",
        (name,),
    )
    if not rows:
        return None, []
    found = [opened(str(r[3]), str(r[4]), sealer) for r in rows if r[3]]
    return Cluster(*rows[0][:3]), [k for k in found if k]


def clusters_with_secrets(
    tx: Tx, sealer: Sealer | None = None
) -> tuple[dict[str, tuple[Cluster, list[str]]], dict[str, Cluster]]:
    """What ``cluster_with_secrets`` answers of every registered, unrevoked cluster (by name),
    and ``cluster_of_key_digest`` of every active cluster key (by its digest). Two plain scans,
    joined here: a join's plan depends on the tables' statistics, which a database loaded in
    bulk may not have yet (PostgreSQL then nests loops over both tables)."""
    by_name: dict[str, tuple[Cluster, list[str]]] = {
        str(name): (Cluster(str(name), str(environment), str(cluster_type)), [])
        for name, environment, cluster_type in tx.rows(
            "SELECT name, environment, cluster_type FROM clusters WHERE revoked_at IS NULL"
        )
    }
    by_digest: dict[str, Cluster] = {}
    for owner, stored, key_digest in tx.rows(
        "SELECT owner, secret, digest FROM sender_keys WHERE role = 'cluster' AND revoked_at IS NULL ORDER BY id"
    ):
        entry = by_name.get(str(owner))
        if entry is None:  # registered since the clusters were read
            continue
        by_digest[str(key_digest)] = entry[0]
        key = opened(str(stored), str(key_digest), sealer) if stored else None
        if key:
            entry[1].append(key)
    return by_name, by_digest


def reseal(db: Database, old: Sealer | None, new: Sealer) -> tuple[int, int]:
    """Seal every cluster key with ``new``, opening it with ``old`` (or reading it as kept in
    the clear), in one transaction: all or nothing. (resealed, kept in the clear before); a key
    ``old`` does not open is a UsageError and nothing changes."""
    resealed = clear = 0
    with db.transaction() as tx:
        rows = tx.rows("SELECT id, digest, secret FROM sender_keys WHERE role = 'cluster' AND secret <> ''")
        for key_id, key_digest, stored in rows:
            key = opened(str(stored), str(key_digest), old)
            if key is None:
                raise UsageError(
                    f"key {key_id} is sealed with another secret than {SECRET_ENV}: give the current one"
                )
            clear += not is_sealed(str(stored))
            tx.run("UPDATE sender_keys SET secret = ? WHERE id = ?", (new.seal(key, str(key_digest)), key_id))
            resealed += 1
    return resealed, clear


def check_sealer(db: Database, sealer: Sealer | None) -> int:
    """That ``sealer`` opens the sealed keys (a UsageError naming the variable if not); the
    number of cluster keys kept in the clear."""
    with db.transaction(write=False) as tx:
        rows = tx.rows("SELECT digest, secret FROM sender_keys WHERE role = 'cluster' AND secret <> ''")
    sealed = [(str(d), str(s)) for d, s in rows if is_sealed(str(s))]
    if sealed and sealer is None:
        raise UsageError(f"the hub's keys are sealed: give the secret in {SECRET_ENV} (or {SECRET_ENV}_FILE)")
    if sealed and opened(sealed[0][1], sealed[0][0], sealer) is None:
        raise UsageError(
            f"{SECRET_ENV} does not open the hub's sealed keys: give the secret they were sealed with"
        )
    return len(rows) - len(sealed)


def cluster_of_key(tx: Tx, key: str) -> Cluster | None:
    """The registered, unrevoked cluster whose active key ``key`` is (a Bearer token)."""
    return cluster_of_key_digest(tx, digest(key))


def cluster_of_key_digest(tx: Tx, key_digest: str) -> Cluster | None:
    """The registered, unrevoked cluster whose active key has SHA-256 ``key_digest``."""
    row = tx.one(
        "SELECT c.name, c.environment, c.cluster_type FROM sender_keys k JOIN clusters c ON c.name = k.owner"
        " WHERE k.digest = ? AND k.role = 'cluster' AND k.revoked_at IS NULL AND c.revoked_at IS NULL",
        (key_digest,),
    )
    return Cluster(*row) if row else None


def cluster(tx: Tx, name: str) -> Cluster | None:
    """A registered cluster that is not revoked."""
    row = tx.one(
        "SELECT name, environment, cluster_type FROM clusters WHERE name = ? AND revoked_at IS NULL", (name,)
    )
    return Cluster(*row) if row else None
