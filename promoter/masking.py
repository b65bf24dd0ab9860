"""Secrets never reach output: everything printed or raised passes through ``mask``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, MutableMapping

from promoter.urls import redact

#: The notification receivers' variables, as lines ``NAME=value`` in one (changecontrol/notify.py).
NOTIFICATIONS_ENV = "PROMOTER_NOTIFICATIONS_ENV"
#: The gates' and the hub's variables (tokens, ``PROMOTER_HUB_URL``), as lines ``NAME=value`` in
#: one: what a reusable workflow can pass as a single secret (``load_gates_env``).
GATES_ENV = "PROMOTER_GATES_ENV"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
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
    GATES_ENV,  # the same
)

_extra: set[str] = set()


def register_secret(value: str | None) -> None:
    """Mask ``value`` from now on (for tokens minted at run time, such as App tokens)."""
    if value and len(value) >= 4:
        _extra.add(value)


def secrets() -> list[str]:
    found = {os.environ.get(name, "") for name in SECRET_VARIABLES} | _extra
    for block in (NOTIFICATIONS_ENV, GATES_ENV):
        for line in os.environ.get(block, "").splitlines():
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


def name_value_lines(text: str) -> Iterator[tuple[int, str, str, str]]:
    """Each line of a block of ``NAME=value`` lines (``$PROMOTER_NOTIFICATIONS_ENV``,
    ``$PROMOTER_GATES_ENV``) but blank ones and ``#`` comments: its number, its name, the ``=``
    (empty when the line has none) and its value, stripped."""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            name, sep, value = stripped.partition("=")
            yield number, name.strip(), sep, value.strip()


def load_gates_env(environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Set each ``NAME=value`` line of ``$PROMOTER_GATES_ENV`` as a variable of this process (a
    variable already set wins; blank lines and ``#`` comments are skipped), each value masked
    from now on; the names set. A line that is not ``NAME=value`` is a ValueError naming its
    line, never its text (it may hold a secret)."""
    env = os.environ if environ is None else environ
    loaded = []
    for number, name, sep, value in name_value_lines(env.get(GATES_ENV, "")):
        if not sep or not _NAME.fullmatch(name):
            raise ValueError(f"${GATES_ENV} line {number}: expected NAME=value")
        register_secret(value)
        if name not in env:
            env[name] = value
            loaded.append(name)
    return loaded
