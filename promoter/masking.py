"""Secrets never reach output: everything printed or raised passes through ``mask``."""

from __future__ import annotations

import os

from promoter.urls import redact

#: The notification receivers' variables, as lines ``NAME=value`` in one (changecontrol/notify.py).
NOTIFICATIONS_ENV = "PROMOTER_NOTIFICATIONS_ENV"
# Environment variables whose values are secrets wherever they appear.
SECRET_VARIABLES = (
    "PROMOTER_GITHUB_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "PROMOTER_GITHUB_APP_PRIVATE_KEY",
    "PROMOTER_ARGOCD_TOKEN",
    "ARGOCD_AUTH_TOKEN",
    "PROMOTER_PROMETHEUS_TOKEN",
    "PROMOTER_HUB_TOKEN",
    "PROMOTER_HUB_KEY",
    NOTIFICATIONS_ENV,  # and each value of its NAME=value lines
)

_extra: set[str] = set()


def register_secret(value: str | None) -> None:
    """Mask ``value`` from now on (for tokens minted at run time, such as App tokens)."""
    if value and len(value) >= 4:
        _extra.add(value)


def secrets() -> list[str]:
    found = {os.environ.get(name, "") for name in SECRET_VARIABLES} | _extra
    for line in os.environ.get(NOTIFICATIONS_ENV, "").splitlines():
        found.add(line.partition("=")[2].strip())
    # longest first, so that a secret containing another is masked whole
    return sorted((s for s in found if len(s) >= 4), key=len, reverse=True)


def mask(text: str) -> str:
    text = redact(text)
    for secret in secrets():
        if secret in text:
            text = text.replace(secret, "***")
        for line in secret.splitlines():  # multi-line keys leak line by line
            if len(line) >= 8 and line in text:
                text = text.replace(line, "***")
    return text
