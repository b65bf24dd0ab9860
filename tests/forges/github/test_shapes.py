"""Answers of the wrong shape from GitHub (or from what answers in its place): a one-line
ForgeError naming the request, at once, with no retry and no polling until a timeout."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.forges.github.shapes import MalformedAnswer, check_answer
from tests.support.fake_github import FakeGitHub, World, make_world
from tests.support.helpers import ControlPlaneFactory

SHA = "a" * 40
PULL = {
    "number": 1,
    "state": "open",
    "head": {"sha": SHA, "ref": "promoter/dev"},
    "base": {"ref": "dev"},
    "html_url": "https://github.com/org/platform/pull/1",
    "merged_at": None,
    "mergeable": None,
}
R = "/repos/org/platform"


def _with(**changes: Any) -> dict[str, Any]:
    return {**PULL, **changes}


@pytest.mark.parametrize(
    ("verb", "path", "data", "says"),
    [
        ("GET", f"{R}/pulls", {"message": "ok"}, "an object where a list was expected"),
        ("GET", f"{R}/pulls", [PULL, "x"], "[1]: a string where an object was expected"),
        ("GET", f"{R}/pulls", None, "null where a list was expected"),
        ("GET", f"{R}/pulls/1", [PULL], "a list where an object was expected"),
        ("GET", f"{R}/pulls/1", _with(head={"ref": "x"}), "head: sha: missing"),
        (
            "GET",
            f"{R}/pulls/1",
            _with(head={"sha": "nope", "ref": "x"}),
            "head: sha: 'nope' is not a valid value",
        ),
        ("GET", f"{R}/pulls/1", _with(number="1"), "number: a string where int was expected"),
        ("GET", f"{R}/pulls/1", _with(number=True), "number: a boolean where int was expected"),
        ("GET", f"{R}/pulls/1", _with(state="merged-ish"), "state: 'merged-ish' is not a valid value"),
        ("GET", f"{R}/pulls/1", _with(mergeable="yes"), "mergeable: a string where bool was expected"),
        ("PATCH", f"{R}/pulls/1", "<html>proxy error</html>", "a string where an object was expected"),
        ("POST", f"{R}/pulls", [], "a list where an object was expected"),
        ("PUT", f"{R}/pulls/1/merge", {"merged": True}, "sha: missing"),
        ("GET", f"{R}/commits/{SHA}/statuses", {"statuses": []}, "an object where a list was expected"),
        ("GET", f"{R}/commits/{SHA}/statuses", [{"context": "c", "state": "great"}], "[0]: state"),
        (
            "GET",
            f"{R}/commits/{SHA}/status",
            {"statuses": {}},
            "statuses: an object where a list was expected",
        ),
        ("POST", f"{R}/statuses/{SHA}", {"context": "c"}, "state: missing"),
        (
            "GET",
            f"{R}/commits/{SHA}/check-runs",
            {"total_count": 0},
            "check_runs: nothing where a list was expected",
        ),
        (
            "GET",
            f"{R}/commits/{SHA}/check-runs",
            {"total_count": 1, "check_runs": [{"id": 1, "name": "lint", "status": None}]},
            "check_runs: [0]: status: null where str was expected",
        ),
        (
            "GET",
            f"{R}/commits/{SHA}/check-runs",
            {"total_count": 1, "check_runs": [{"id": 1, "name": "lint", "status": "queued", "app": {}}]},
            "check_runs: [0]: app: slug: missing",
        ),
        ("POST", f"{R}/issues/1/comments", {"id": "7"}, "id: a string where int was expected"),
        ("GET", f"{R}/installation", {}, "id: missing"),
        ("POST", "/app/installations/5/access_tokens", {"token": None}, "token: null where str was expected"),
        (
            "GET",
            f"https://ghe.example.com/api/v3{R}/pulls?state=open",
            {},
            "GET /repos/org/platform/pulls with",
        ),
    ],
)
def test_wrong_shapes_are_named(verb: str, path: str, data: Any, says: str) -> None:
    with pytest.raises(MalformedAnswer) as err:
        check_answer(verb, path, data)
    assert says in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("verb", "path", "data"),
    [
        ("GET", f"{R}/pulls", [PULL, _with(number=2, state="closed", merged_at="2026-01-01T00:00:00Z")]),
        ("GET", f"{R}/pulls", []),
        (
            "PUT",
            f"{R}/pulls/1/merge",
            {"sha": SHA, "merged": True, "message": "Pull Request successfully merged"},
        ),
        ("GET", f"{R}/commits/{SHA}/statuses", [{"context": "c", "state": "pending", "extra": 1}]),
        ("GET", "/user", {"login": "x"}),  # not used by the forge: not judged
    ],
)
def test_real_shapes_pass(verb: str, path: str, data: Any) -> None:
    check_answer(verb, path, data)


@pytest.fixture
def world(factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    w = make_world(factory, monkeypatch)
    yield w
    w.close()


def malform(fake: FakeGitHub, call: str, make: Callable[[Any], Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every successful answer to ``call`` is replaced by ``make(answer)``."""
    original = fake._dispatch

    def dispatch(request: Any) -> tuple[int, dict[str, str], str]:
        status, headers, text = original(request)
        if fake.requests[-1].call == call and status < 300 and text:
            return status, headers, json.dumps(make(json.loads(text)))
        return status, headers, text

    monkeypatch.setattr(fake, "_dispatch", dispatch)


@pytest.mark.parametrize(
    ("call", "make", "says"),
    [
        ("get_pr", lambda body: {"items": body} if isinstance(body, list) else [body], "where"),
        (
            "get_pr",
            lambda body: (
                [{**p, "head": None} for p in body] if isinstance(body, list) else {**body, "head": None}
            ),
            "head: null",
        ),
        ("create_pr", lambda body: {**body, "number": "one"}, "number: a string"),
        ("merge", lambda body: {"merged": True}, "sha: missing"),
        ("get_statuses", lambda body: {"statuses": body} if isinstance(body, list) else [body], "where"),
        ("create_status", lambda body: [body], "a list where an object was expected"),
    ],
)
def test_a_promotion_stops_at_once_on_a_wrong_shape(
    world: World, monkeypatch: pytest.MonkeyPatch, call: str, make: Callable[[Any], Any], says: str
) -> None:
    malform(world.fake, call, make, monkeypatch)
    started, fake_started = time.monotonic(), world.clock.now()
    result = CliRunner().invoke(
        cli,
        ["promote", "--control-plane", str(world.control_plane), "--control-plane-repo", "org/control-plane"],
    )
    assert result.exit_code == 1, result.output
    error = [line for line in result.stderr.splitlines() if line.startswith("error:") or "FAILED" in line]
    assert any("GitHub answered" in line and says in line for line in result.output.splitlines()), (
        result.output
    )
    assert time.monotonic() - started < 30
    assert world.clock.now() - fake_started < 120, "it waited on the clock instead of failing"
    assert error or "FAILED" in result.output
