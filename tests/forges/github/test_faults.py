"""The fault matrix: each kind of call x each kind of failure, once, through the CLI.

A single failure is retried as GitHub asks and the promotion completes with exactly one PR per
environment. Every call is first made for dev, where the fault strikes: with a 500 the whole
promotion runs on through qa and prod after the retry; the other kinds of failure promote dev
alone (``--to dev``), which is where they are retried. Pushes go over loopback smart HTTP. (Writes whose answer was lost:
test_github_lost_answers.py; failures past the retry budget: test_github_retry_budget.py.)
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner, Result

from promoter.cli.main import cli
from tests.support.fake_github import FAULTS, World, make_world
from tests.support.helpers import ControlPlaneFactory

CALLS = ("get_pr", "create_pr", "merge", "create_status", "get_statuses", "push")
WRITES = ("create_pr", "merge", "create_status", "push")


ENVS = ("dev", "qa", "prod")
WHOLE = "500"  # the kind of failure after which the whole promotion runs; the others stop at dev


def run(world: World, *, to: str = "prod") -> Result:
    return CliRunner().invoke(
        cli,
        [
            "promote",
            "--control-plane",
            str(world.control_plane),
            "--control-plane-repo",
            "org/control-plane",
            "--to",
            to,
        ],
    )


def inject(
    world: World, call: str, kind: str, times: int, *, after: bool = False, reset_in: float = 120.0
) -> None:
    if call == "push":
        world.git.fail(kind, times, after=after)
    else:
        world.fake.fail(call, kind, times, after=after, reset_in=reset_in)


def assert_promoted_once(world: World, x: str, *, to: str = "prod") -> None:
    envs = ENVS[: ENVS.index(to) + 1]
    prs = world.platform_prs
    assert [(p["head"]["ref"], p["base"]["ref"], p["merged"]) for p in prs] == [
        (f"promoter/{env}", env, True) for env in envs
    ]
    statuses = world.statuses(x)
    assert {c: statuses.get(c) for c in [f"promoter/{env}" for env in envs]} == {
        f"promoter/{env}": "success" for env in envs
    }
    assert not [c for c, state in statuses.items() if state in ("failure", "error")], statuses
    posted = [
        (s["context"], s["state"], s["description"]) for s in world.fake.statuses[("org/control-plane", x)]
    ]
    assert len(posted) == len(set(posted)), posted  # no status was posted twice
    merges = [line for line in _log(world) if line.startswith("Merge pull request")]
    assert len(merges) == len(envs), merges


def _log(world: World) -> list[str]:
    import subprocess

    out = subprocess.run(
        ["git", "-C", str(world.platform), "log", "--all", "--format=%s"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.splitlines()


def main_head(world: World) -> str:
    import subprocess

    return subprocess.run(
        ["git", "-C", str(world.control_plane), "rev-parse", "main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@pytest.mark.parametrize("kind", FAULTS)
@pytest.mark.parametrize("call", CALLS)
def test_one_failure_is_retried(
    call: str, kind: str, factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(factory, monkeypatch, git_http=call == "push")
    try:
        inject(world, call, kind, 1)
        to = "prod" if kind == WHOLE else "dev"
        result = run(world, to=to)
        assert [f.times for f in world.fake.faults + world.git.faults] == [0]  # it did happen
        if call == "push" and kind in ("secondary", "primary"):
            # git shows a 403 and nothing more: a rate limit cannot be told from a refusal
            assert result.exit_code == 1, result.output
            assert (
                "error: push of promoter/dev to https://github.com/org/platform.git was refused"
                in result.output
            )
            assert "403" in result.output
            return
        assert result.exit_code == 0, result.output
        assert_promoted_once(world, main_head(world), to=to)
    finally:
        world.close()
