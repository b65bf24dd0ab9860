"""Repository URLs a control plane may name, judged once, at load time.

git accepts far more than a repository location: ``ext::<command>`` runs a command, an ssh host
that starts with ``-`` becomes an ssh option, and credentials in a URL end up in error messages
and in ``.git/config``. ``url_problem`` allows per forge only what that forge uses, and
``redact`` is how any URL is shown to a user.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# git's remote-helper syntax "<transport>::<address>" (ext::, fd::, or any helper on the PATH).
_HELPER = re.compile(r"[A-Za-z0-9][A-Za-z0-9+.-]*::")
# scp-like "user@host:path", as git reads it: no "://", a colon before any slash.
_SCP = re.compile(r"(?:(?P<user>[^@/]+)@)?(?P<host>[^:/]+):(?P<path>.*)")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")
# Userinfo that may be a secret: any on http(s) (a token as the user name), a password elsewhere.
_CREDENTIALS = re.compile(
    r"(?P<scheme>\b(?:https?://(?=[^/@\s]*@)|[A-Za-z][A-Za-z0-9+.-]*://(?=[^/@\s:]*:[^/@\s]*@)))[^/@\s]*@"
)

FORGE_SCHEMES = {
    "local": ("path", "file"),
    "github": ("https", "http", "ssh"),
}
_WANTED = {"local": "a path or a file:// URL", "github": "an https://, http:// or ssh:// URL"}


def redact(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``***``: all userinfo of an
    http(s) URL, the user and password elsewhere (``ssh://git@host`` keeps its plain user)."""
    return _CREDENTIALS.sub(lambda m: f"{m['scheme']}***@", text)


def scheme_of(url: str) -> str:
    """``file``, ``https``, ``http``, ``ssh`` (also for ``git://`` and scp-like), or ``path``."""
    if "://" in url:
        scheme = urlsplit(url).scheme.lower()
        return "ssh" if scheme in ("ssh", "git", "git+ssh", "ssh+git") else scheme
    if _SCP.fullmatch(url) and not url.startswith(("/", ".")) and "/" not in url.split(":", 1)[0]:
        return "ssh"
    return "path"


def url_problem(url: str, forge: str) -> str | None:
    """Why ``url`` may not be the platform repo of ``forge`` (``local`` or ``github``), or None."""
    if not url:
        return "must not be empty"
    if _UNSAFE.search(url):
        return "must not contain control characters"
    if _HELPER.match(url):
        return "git remote-helper transports (such as ext::) are not allowed"
    if url.startswith("-"):
        return "must not start with '-'"
    scheme = scheme_of(url)
    if scheme != "path" and " " in url:
        return "must not contain spaces"
    if scheme not in FORGE_SCHEMES.get(forge, ()):
        return f"the {forge} forge needs {_WANTED.get(forge, 'a known forge')}, not {scheme}"
    if scheme in ("https", "http"):
        return _http_problem(url)
    if scheme == "ssh":
        return _ssh_problem(url)
    return None


def _http_problem(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        return "remove the credentials from the URL; tokens come from the environment (PROMOTER_GITHUB_TOKEN)"
    if not parts.hostname or parts.hostname.startswith("-"):
        return "has no valid host"
    return None


def _ssh_problem(url: str) -> str | None:
    if "://" in url:
        parts = urlsplit(url)
        host, password = parts.hostname or "", parts.password
        user = parts.username or ""
    else:
        match = _SCP.fullmatch(url)
        assert match is not None  # scheme_of said scp-like
        host, password, user = match["host"], None, match["user"] or ""
    if password is not None:
        return "remove the password from the URL; use an ssh key"
    if not host or host.startswith("-") or user.startswith("-"):
        return "has no valid host (a host or user starting with '-' would be an ssh option)"
    return None
