"""Whether the environment holds GitHub credentials the promoter would use, asked without
loading PyGithub: ``validate`` and ``hold`` ask it on every run, GitHub or not."""

from __future__ import annotations

import os
from collections.abc import Mapping


def github_credentials(environ: Mapping[str, str] | None = None) -> bool:
    """True when ``environ`` (default: the process's) holds a GitHub App's or a token's variables."""
    # Deferred: promoter.forges.github.auth loads PyGithub and requests, 0.3 s of every start of
    # the promoter (--help included: measured 607 ms -> about 900 ms), and only GitHub runs use it.
    from promoter.forges.github.auth import credentials_in  # heavy: PyGithub loads only when asked

    return credentials_in(os.environ if environ is None else environ)
