"""Past the retry budget: each kind of call x each kind of failure, for good, through the CLI.

The promotion stops with exit 1 and a message that names the call and the status; a primary
rate limit that resets later than ``--github-rate-limit-wait`` fails at once and says when.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from tests.forges.github.test_faults import CALLS, inject
from tests.support.fake_github import FAULTS, make_world
from tests.support.helpers import ControlPlaneFactory

NAMES = {
    "get_pr": "GitHub get PR",
    "create_pr": "GitHub create PR",
    "merge": "GitHub merge PR",
    "create_status": "GitHub create status promoter/dev",
    "get_statuses": "GitHub get statuses",
    "push": "push of promoter/dev to https://github.com/org/platform.git",
}
STATUSES = {
    "500": "500 Internal Server Error: Server Error, still failing after 5 attempts",
    "502": "502 Bad Gateway, still failing after 5 attempts",
    "503": "503 Service Unavailable, still failing after 5 attempts",
    "secondary": "403 Forbidden: You have exceeded a secondary rate limit.",
    "primary": "403 Forbidden: API rate limit exceeded for user ID 1.",
    "429": "429 Too Many Requests: You have exceeded a secondary rate limit.",
    "reset": "connection reset, still failing after 5 attempts",
    "timeout": "timed out, still failing after 5 attempts",
}
GIT_STATUSES = {
    "500": "HTTP 500 Internal Server Error, still failing after 5 attempts",
    "502": "HTTP 502 Bad Gateway, still failing after 5 attempts",
    "503": "HTTP 503 Service Unavailable, still failing after 5 attempts",
    "secondary": "was refused: error: RPC failed; HTTP 403",
    "primary": "was refused: error: RPC failed; HTTP 403",
    "429": "HTTP 429 Too Many Requests, still failing after 5 attempts",
    "reset": "connection reset or timed out, still failing after 5 attempts",
    "timeout": "connection reset or timed out, still failing after 5 attempts",
}


# A push that stalls until git gives up and one whose connection resets are one kind of failure
# to the promoter (git says so in the same words, and the same message names both); each is
# retried once in test_faults.py. For good, the stalled push would only spend five more git
# time-outs of real time on the point that the reset push already makes.
CASES = [(call, kind) for call in CALLS for kind in FAULTS if (call, kind) != ("push", "timeout")]


@pytest.mark.parametrize(("call", "kind"), CASES)
def test_failing_for_good_exits_1_naming_call_and_status(
    call: str, kind: str, factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(factory, monkeypatch, git_http=call == "push")
    try:
        inject(world, call, kind, 1000, reset_in=7200)
        result = CliRunner().invoke(
            cli,
            [
                "promote",
                "--control-plane",
                str(world.control_plane),
                "--control-plane-repo",
                "org/control-plane",
            ],
        )
        assert result.exit_code == 1, result.output
        error = next(line for line in result.output.splitlines() if line.startswith("error: "))
        expected = GIT_STATUSES[kind] if call == "push" else STATUSES[kind]
        assert error.startswith(f"error: {NAMES[call]}"), error
        assert expected in error, error
        if kind == "primary" and call != "push":
            assert error.endswith(
                "the rate limit resets in 2h00m01s, longer than the 15m00s this run may wait "
                "(--github-rate-limit-wait); rerun later"
            ), error
        assert world.platform_prs == [] or not any(p["merged"] for p in world.platform_prs)
    finally:
        world.close()
