"""Names within Kubernetes' limits, shortened the same way every time.

Namespaces are DNS labels (at most 63 characters); a Flux Kustomization labels every object it
applies with its own name, and label values are at most 63 characters too. A name that would
pass its limit keeps a readable prefix and ends with a short hash of the whole name, so two
long names that share a prefix never collide, and the same input always gives the same name.
"""

from __future__ import annotations

import hashlib
import re

DNS_LABEL_MAX = 63
LABEL_VALUE_MAX = 63
HASH_CHARS = 8
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def bounded(name: str, limit: int = DNS_LABEL_MAX) -> str:
    """``name`` if it fits ``limit``; else its first characters, ``-`` and 8 hex of its sha256."""
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:HASH_CHARS]
    prefix = name[: limit - HASH_CHARS - 1].rstrip("-.")
    return f"{prefix}-{digest}"


def is_dns_label(name: str) -> bool:
    return len(name) <= DNS_LABEL_MAX and DNS_LABEL.fullmatch(name) is not None
