"""Cluster keys at rest: the hub must keep each cluster's key itself (a Flux ``generic-hmac``
signature can only be checked with it), so it keeps it sealed with a server secret that is not
in the database (``PROMOTER_HUB_SECRET``, or the file ``PROMOTER_HUB_SECRET_FILE`` names), as
Grafana's ``secret_key`` protects its data sources' passwords: a dump or a backup of the
database holds no usable key.

A sealed key is ``sealed1:<base64url(nonce | ciphertext | tag)>``. The ciphertext is the key
XORed with a keystream of HMAC-SHA256(k_enc, nonce | counter) blocks, the tag HMAC-SHA256 of
(k_mac, "sealed1" | nonce | ciphertext | the key's SHA-256), so a sealed value moved to another
row does not open (encrypt-then-MAC with a PRF in counter mode; standard library only). k_enc
and k_mac come from the secret through PBKDF2-HMAC-SHA256.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from promoter.errors import UsageError
from promoter.gates.hubapi import secret_from_env

SECRET_ENV = "PROMOTER_HUB_SECRET"
NEW_SECRET_ENV = "PROMOTER_HUB_NEW_SECRET"
PREFIX = "sealed1:"
_NONCE, _TAG, _ROUNDS = 16, 32, 200_000


class SealError(Exception):
    """A sealed key that this secret does not open (another secret, or a tampered value)."""


class Sealer:
    """Seals and opens keys with one server secret."""

    def __init__(self, secret: str) -> None:
        if len(secret) < 16:
            raise UsageError(
                f"{SECRET_ENV} is too short: use 16 characters or more (e.g. openssl rand -hex 32)"
            )
        derived = hashlib.pbkdf2_hmac("sha256", secret.encode(), b"promoter-hub sealed keys", _ROUNDS, 64)
        self._enc, self._mac = derived[:32], derived[32:]

    @classmethod
    def from_env(cls, name: str = SECRET_ENV) -> Sealer | None:
        """The sealer of the secret in ``name`` (or the file ``<name>_FILE`` names), or None."""
        secret = secret_from_env(name)
        return cls(secret) if secret else None

    def seal(self, key: str, key_digest: str) -> str:
        nonce = secrets.token_bytes(_NONCE)
        plain = key.encode()
        cipher = bytes(a ^ b for a, b in zip(plain, self._stream(nonce, len(plain)), strict=True))
        return (
            PREFIX + base64.urlsafe_b64encode(nonce + cipher + self._tag(nonce, cipher, key_digest)).decode()
        )

    def open(self, sealed: str, key_digest: str) -> str:
        try:
            raw = base64.urlsafe_b64decode(sealed.removeprefix(PREFIX).encode())
        except ValueError as err:
            raise SealError("not a sealed key") from err
        nonce, cipher, tag = raw[:_NONCE], raw[_NONCE:-_TAG], raw[-_TAG:]
        if len(raw) < _NONCE + _TAG or not hmac.compare_digest(tag, self._tag(nonce, cipher, key_digest)):
            raise SealError("the secret does not open this key")
        return bytes(a ^ b for a, b in zip(cipher, self._stream(nonce, len(cipher)), strict=True)).decode()

    def _stream(self, nonce: bytes, size: int) -> bytes:
        blocks = (size + 31) // 32
        stream = b"".join(
            hmac.new(self._enc, nonce + i.to_bytes(4, "big"), hashlib.sha256).digest() for i in range(blocks)
        )
        return stream[:size]

    def _tag(self, nonce: bytes, cipher: bytes, key_digest: str) -> bytes:
        return hmac.new(self._mac, b"sealed1" + nonce + cipher + key_digest.encode(), hashlib.sha256).digest()


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
