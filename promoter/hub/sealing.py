"""Cluster keys at rest: the hub must keep each cluster's key itself (a Flux ``generic-hmac``
signature can only be checked with it), so it keeps it sealed with a server secret that is not
in the database (``PROMOTER_HUB_SECRET``, or the file ``PROMOTER_HUB_SECRET_FILE`` names), as
Grafana's ``secret_key`` protects its data sources' passwords: a dump or a backup of the
database holds no usable key.

A sealed key is ``sealed1:<base64url(nonce | AES-256-GCM ciphertext and tag)>``, with the key's
SHA-256 as associated data, so a sealed value moved to another row does not open. The AES key
comes from the secret through PBKDF2-HMAC-SHA256 (the secret may be a passphrase). The cipher is
the ``cryptography`` package's, the one PyGithub's JWT signing already brings.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import secrets

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from promoter.errors import UsageError
from promoter.gates.hubapi import secret_from_env

SECRET_ENV = "PROMOTER_HUB_SECRET"
NEW_SECRET_ENV = "PROMOTER_HUB_NEW_SECRET"
PREFIX = "sealed1:"
_NONCE, _ROUNDS = 12, 200_000  # GCM's standard nonce; PBKDF2 rounds for a passphrase


class SealError(Exception):
    """A sealed key that this secret does not open (another secret, or a tampered value)."""


class Sealer:
    """Seals and opens keys with one server secret."""

    def __init__(self, secret: str) -> None:
        if len(secret) < 16:
            raise UsageError(
                f"{SECRET_ENV} is too short: use 16 characters or more (e.g. openssl rand -hex 32)"
            )
        self._aead = AESGCM(_derived_key(secret))

    @classmethod
    def from_env(cls, name: str = SECRET_ENV) -> Sealer | None:
        """The sealer of the secret in ``name`` (or the file ``<name>_FILE`` names), or None."""
        secret = secret_from_env(name)
        return cls(secret) if secret else None

    def seal(self, key: str, key_digest: str) -> str:
        nonce = secrets.token_bytes(_NONCE)
        cipher = self._aead.encrypt(nonce, key.encode(), key_digest.encode())
        return PREFIX + base64.urlsafe_b64encode(nonce + cipher).decode()

    def open(self, sealed: str, key_digest: str) -> str:
        try:
            raw = base64.urlsafe_b64decode(sealed.removeprefix(PREFIX).encode())
        except ValueError as err:
            raise SealError("not a sealed key") from err
        try:
            return self._aead.decrypt(raw[:_NONCE], raw[_NONCE:], key_digest.encode()).decode()
        except (InvalidTag, ValueError) as err:
            raise SealError("the secret does not open this key") from err


@functools.lru_cache(maxsize=4)
def _derived_key(secret: str) -> bytes:
    """The AES key of ``secret``: 200,000 rounds (0.1 CPU-seconds), worked out once per secret
    and process (a process may make more than one sealer of a secret; the tests make many)."""
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), b"promoter-hub sealed keys", _ROUNDS, 32)


def is_sealed(stored: str) -> bool:
    return stored.startswith(PREFIX)


def stored_form(key: str, key_digest: str, sealer: Sealer | None) -> str:
    """What the database keeps of a cluster's key: sealed when there is a secret."""
    return sealer.seal(key, key_digest) if sealer else key


def opened(stored: str, key_digest: str, sealer: Sealer | None) -> str | None:
    """The key from what the database keeps, or None when it cannot be opened (sealed, and no
    secret or another one given)."""
    if not is_sealed(stored):
        return stored
    if sealer is None:
        return None
    try:
        return sealer.open(stored, key_digest)
    except SealError:
        return None
