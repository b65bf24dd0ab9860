"""Every GitHub answer the forge uses is checked for its shape before anything reads it.

A server that is not quite GitHub (a proxy's error page, a mock, a wrong ``--github-api-url``)
can answer an object where a list belongs, or a pull request without a head sha. PyGithub would
build objects from anything and the promotion would poll them until its timeout. Here the JSON
is judged once, at the requester, against the fields the forge reads, and a wrong shape is a
ForgeError at once: no retry, no polling, one line that names the request.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from promoter.errors import ForgeError

Check = Callable[[Any], str | None]  # a problem, or None


class MalformedAnswer(ForgeError):
    """GitHub (or what answered in its place) sent JSON of the wrong shape. Exit 1."""


def _object(**fields: Check) -> Check:
    def check(value: Any) -> str | None:
        if not isinstance(value, dict):
            return f"{_kind(value)} where an object was expected"
        for key, field in fields.items():
            problem = field(value.get(key, _MISSING))
            if problem:
                return f"{key}: {problem}"
        return None

    return check


def _list(item: Check) -> Check:
    def check(value: Any) -> str | None:
        if not isinstance(value, list):
            return f"{_kind(value)} where a list was expected"
        for i, element in enumerate(value):
            problem = item(element)
            if problem:
                return f"[{i}]: {problem}"
        return None

    return check


def _typed(*types: type, optional: bool = False, pattern: str | None = None) -> Check:
    compiled = re.compile(pattern) if pattern else None

    def check(value: Any) -> str | None:
        if value is _MISSING:
            return None if optional else "missing"
        if value is None and optional:
            return None
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            return f"{_kind(value)} where {' or '.join(t.__name__ for t in types)} was expected"
        if compiled and not compiled.fullmatch(str(value)):
            return f"{str(value)[:40]!r} is not a valid value"
        return None

    return check


class _Missing:
    pass


_MISSING: Any = _Missing()
SHA = _typed(str, pattern=r"[0-9a-f]{40}")
TEXT = _typed(str)
PULL = _object(
    number=_typed(int),
    state=_typed(str, pattern=r"open|closed"),
    head=_object(sha=SHA, ref=TEXT),
    base=_object(ref=TEXT),
    html_url=TEXT,
    merged_at=_typed(str, optional=True),
    mergeable=_typed(bool, optional=True),
)
STATUS = _object(context=TEXT, state=_typed(str, pattern=r"pending|success|failure|error"))


def _app(value: Any) -> str | None:
    """The App that ran a check run: an object with its slug, or null."""
    return None if value is _MISSING or value is None else _object(slug=TEXT)(value)


CHECK_RUN = _object(
    id=_typed(int),
    name=TEXT,
    status=TEXT,
    conclusion=_typed(str, optional=True),
    html_url=_typed(str, optional=True),
    app=_app,
)
ANY_OBJECT = _object()

# (methods, path pattern after the API prefix, expected shape), first match wins.
_REPO = r"/repos/[^/]+/[^/]+"
ANSWERS: list[tuple[frozenset[str], re.Pattern[str], Check]] = [
    (frozenset({"GET"}), re.compile(_REPO + r"/pulls"), _list(PULL)),
    (frozenset({"POST"}), re.compile(_REPO + r"/pulls"), PULL),
    (frozenset({"GET", "PATCH"}), re.compile(_REPO + r"/pulls/\d+"), PULL),
    (frozenset({"PUT"}), re.compile(_REPO + r"/pulls/\d+/merge"), _object(sha=SHA, merged=_typed(bool))),
    (frozenset({"GET"}), re.compile(_REPO + r"/commits/[^/]+/statuses"), _list(STATUS)),
    (frozenset({"GET"}), re.compile(_REPO + r"/commits/[^/]+/status"), _object(statuses=_list(STATUS))),
    (
        frozenset({"GET"}),
        re.compile(_REPO + r"/commits/[^/]+/check-runs"),
        _object(total_count=_typed(int), check_runs=_list(CHECK_RUN)),
    ),
    (frozenset({"POST"}), re.compile(_REPO + r"/statuses/[^/]+"), STATUS),
    (frozenset({"POST"}), re.compile(_REPO + r"/issues/\d+/comments"), _object(id=_typed(int))),
    (frozenset({"POST"}), re.compile(_REPO + r"/issues/\d+/labels"), _list(ANY_OBJECT)),
    (frozenset({"GET"}), re.compile(_REPO + r"/installation"), _object(id=_typed(int))),
    (frozenset({"POST"}), re.compile(r"/app/installations/\d+/access_tokens"), _object(token=TEXT)),
    (frozenset({"POST"}), re.compile(r"/graphql"), ANY_OBJECT),
    (frozenset({"GET"}), re.compile(_REPO + r"/actions/variables/[^/]+"), _object(name=TEXT, value=TEXT)),
]


def check_answer(verb: str, url: str, data: Any) -> None:
    """MalformedAnswer when ``data`` is not what GitHub answers to ``verb url``."""
    path = _path(url)
    for methods, pattern, check in ANSWERS:
        if verb in methods and pattern.fullmatch(path):
            problem = check(data)
            if problem:
                raise MalformedAnswer(
                    f"GitHub answered {verb} {path} with {problem}; is the API URL a GitHub API "
                    "(--github-api-url, GITHUB_API_URL)?"
                )
            return


def guard(requester: Any) -> None:
    """Make a PyGithub requester check every JSON answer before PyGithub reads it.

    ``requestJson`` is where every JSON request of PyGithub passes (``requestJsonAndCheck``
    and the conditional ``update()`` both call it); successful answers are judged there."""
    original = requester.requestJson

    def checked(verb: str, url: str, *args: Any, **kwargs: Any) -> tuple[int, dict[str, Any], str]:
        status, headers, output = original(verb, url, *args, **kwargs)
        if 200 <= status < 300 and output:
            try:
                data = json.loads(output)
            except ValueError:
                data = output  # not JSON at all: judged as a string
            check_answer(verb, url, data)
        return status, headers, output

    requester.requestJson = checked


def _path(url: str) -> str:
    path = urlsplit(url).path if "://" in url else url.split("?", 1)[0]
    return re.sub(r"^/api/v3(?=/)", "", path).rstrip("/")


def _kind(value: Any) -> str:
    if value is _MISSING:
        return "nothing"
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
