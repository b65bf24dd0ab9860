"""The request budget: at most 12 REST requests per environment promotion, polls excluded.

Polls are the conditional GETs of a waiting loop (the PR while it waits for its merge, the
platform statuses while a gate waits): their number depends on how long GitHub and the
clusters take, not on the promoter. The figures measured here are in docs/github.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from tests.fake_github import FakeGitHub, World, make_world
from tests.helpers import WORKLOAD, ControlPlaneFactory

BUDGET = 12
POLL = re.compile(r"^/repos/[^/]+/[^/]+/(pulls/\d+|commits/[^/]+/statuses)$")


@pytest.fixture
def world(factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    w = make_world(factory, monkeypatch)
    yield w
    w.close()


def promote(world: World, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        cli,
        [
            "promote",
            "--control-plane",
            str(world.control_plane),
            "--control-plane-repo",
            "org/control-plane",
            "--output",
            "json",
            *args,
        ],
    )
    return dict(json.loads(result.output[result.output.index("{\n") :]))


def polls(world: World, pr_url: str | None, start: int) -> int:
    number = pr_url.rsplit("/", 1)[1] if pr_url else None
    return sum(
        1
        for r in world.fake.requests[start:]
        if r.method == "GET"
        and POLL.match(r.path)
        and (r.path.endswith(f"/pulls/{number}") or "statuses" in r.path)
    )


def spent(world: World, report: dict[str, Any], start: int) -> dict[str, int]:
    """Requests per environment of a run, polls excluded."""
    return {e["environment"]: e["requests"] - polls(world, e["prUrl"], start) for e in report["environments"]}


def test_each_environment_stays_within_budget(world: World, factory: ControlPlaneFactory) -> None:
    report = promote(world)
    assert report["ok"], report
    first = spent(world, report, 0)
    assert sum(e["requests"] for e in report["environments"]) == len(world.fake.requests)
    assert all(n <= BUDGET for n in first.values()), first

    # A newer main commit while prod's PR for the older one is open: prod's PR is updated.
    factory.commit("main", {"workloads/app.yaml": workload("2")}, "second", keep=True)
    world.fake.hooks.append(_interrupt_when_polled(6))  # dev 4, qa 5, prod 6
    CliRunner().invoke(
        cli,
        ["promote", "--control-plane", str(world.control_plane), "--control-plane-repo", "org/control-plane"],
    )
    world.fake.hooks.clear()
    factory.commit("main", {"workloads/app.yaml": workload("3")}, "third", keep=True)
    start = len(world.fake.requests)
    again = promote(world)
    assert again["ok"], again
    superseding = spent(world, again, start)
    assert all(n <= BUDGET for n in superseding.values()), superseding
    prod = [p for p in world.platform_prs if p["base"]["ref"] == "prod"]
    assert len(prod) == 2 and "supersedes the promotion of" in prod[1]["body"]
    print(f"\nrequests per environment, polls excluded: first run {first}, superseding run {superseding}")


def workload(version: str) -> str:
    """The test workload with other manifest paths: new content in every environment."""
    return WORKLOAD.replace("path: ./", f"path: ./v{version}/")


def _interrupt_when_polled(number: int) -> Any:
    def hook(fake: FakeGitHub, method: str, path: str) -> bool:
        if method == "GET" and path == f"/repos/org/platform/pulls/{number}":
            raise KeyboardInterrupt
        return False

    return hook
