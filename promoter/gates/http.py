"""HTTP for the gates that ask a server (Prometheus, Argo CD): one GET, JSON back.

There are no retries here on purpose: a gate is polled at its interval until the environment's
timeout, so the next poll is the retry, and a gate's message says what the last one saw.
Messages pass ``mask`` and never carry the token.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from promoter.masking import mask, register_secret

if TYPE_CHECKING:
    import requests

USER_AGENT = "promoter (health gate)"


class HttpProblem(Exception):
    """A request that did not give JSON with a 2xx status; ``status`` is None when nothing came back."""

    def __init__(self, message: str, status: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


@dataclass(frozen=True)
class Endpoint:
    """A server a gate asks: base URL, bearer token variable, TLS settings."""

    base: str
    token_env: str | None = None
    ca_file: str | None = None
    insecure: bool = False
    timeout: float = 30.0

    def token(self) -> str | None:
        """The bearer token from the environment (masked from all output from now on)."""
        if not self.token_env:
            return None
        value = os.environ.get(self.token_env) or None
        register_secret(value)
        return value

    def get(self, path: str, params: dict[str, str] | None = None, token: str | None = None) -> Any:
        """GET ``base + path``; the decoded JSON body, or HttpProblem."""
        url = self.base.rstrip("/") + path
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        verify: bool | str = self.ca_file or not self.insecure
        response = send(
            "GET", url, self.host, params=params, headers=headers, timeout=self.timeout, verify=verify
        )
        return json_body(response, self.where(path))

    @property
    def host(self) -> str:
        """scheme://host[:port], without any user:password@ the URL may carry."""
        parts = urlsplit(self.base)
        netloc = parts.netloc.rpartition("@")[2]
        return f"{parts.scheme}://{netloc}" if netloc else self.base

    def where(self, path: str) -> str:
        """The URL of ``path`` as messages show it: no credentials, no query."""
        return self.host + urlsplit(self.base).path.rstrip("/") + path


def check_base_url(value: Any) -> str | None:
    """The problem with a server URL, or None when it is an http(s) URL with a host."""
    if not isinstance(value, str) or not value.strip():
        return "must be a URL such as https://server.example.com"
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"must be an http:// or https:// URL with a host, got {value!r}"
    if parts.query or parts.fragment:
        return f"must not have a query or fragment, got {value!r}"
    return None


def send(method: str, url: str, where: str, **kwargs: Any) -> requests.Response:
    """One request (``kwargs`` as requests takes them); HttpProblem naming ``where`` when the
    server cannot be reached."""
    import requests  # heavy (110 ms, over a quarter of `promoter diff`'s start): only when a server is asked

    try:
        return requests.request(method, url, **kwargs)
    except requests.RequestException as err:
        timed_out, tls = isinstance(err, requests.Timeout), isinstance(err, requests.exceptions.SSLError)
        raise HttpProblem(mask(f"cannot reach {where}: {_reason(err, timed_out, tls)}")) from err


def json_body(response: requests.Response, where: str) -> Any:
    """The decoded JSON body of a 2xx answer; else HttpProblem with the status and what the
    server said, from ``where``."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.status_code >= 400 or body is None:
        detail = _detail(body) or response.reason or "not JSON"
        raise HttpProblem(
            mask(f"HTTP {response.status_code} from {where}: {detail}"), response.status_code, body
        )
    return body


def _reason(err: Exception, timed_out: bool, tls: bool) -> str:
    """The useful part of a requests error (its text repeats the whole pool and URL)."""
    errno = re.search(r"\[Errno -?\d+\] [^'\")]+", str(err))
    if errno:
        return errno.group(0).strip()
    if timed_out:
        return "timed out"
    if tls:
        return "TLS verification failed (set caFile, or insecure: true for a test server)"
    return type(err).__name__


def _detail(body: Any) -> str:
    """The error text in a JSON error body: Prometheus' ``error``, Argo CD's ``message``."""
    if isinstance(body, dict):
        for key in ("error", "message"):
            value = body.get(key)
            if isinstance(value, str) and value:
                return value[:300]
    return ""
