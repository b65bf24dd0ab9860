"""The request budget: at most 12 REST requests per environment promotion, polls excluded;
and the polls themselves free.

Polls are the conditional GETs of a waiting loop (the PR while it waits for its merge, the
platform statuses while a gate waits): their number depends on how long GitHub and the
clusters take, not on the promoter. Each sends the ETag of the last answer for its own URL, and
GitHub answers 304 while nothing changed; a 304 to an authorized request does not count against
the primary rate limit (docs: "Best practices for using the REST API"). The figures measured
here are in docs/github.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from tests.support.fake_github import FakeGitHub, World, make_world
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline, stage

BUDGET = 12
POLL = re.compile(r"^/repos/[^/]+/[^/]+/(pulls/\d+|commits/[^/]+/statuses)$")
STATUS_POLL = re.compile(r"^/repos/org/platform/commits/([0-9a-f]{40})/statuses$")
FLUX = "kustomization/platform/5f3c9a1e"
P = "org/platform"


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


# ------------------------------------------------------------------ free polls


def reconciled_after(polls: int) -> Any:
    """Flux posts success on a platform commit once its statuses were read ``polls`` times."""
    seen: dict[str, int] = {}

    def hook(fake: FakeGitHub, method: str, path: str) -> bool:
        found = STATUS_POLL.match(path) if method == "GET" else None
        if found:
            seen[found.group(1)] = seen.get(found.group(1), 0) + 1
            if seen[found.group(1)] == polls:
                fake.post_status(P, found.group(1), FLUX, "success", "reconciliation succeeded")
                return True
        return False

    return hook


def merged_by_a_human_after(number: int, polls: int) -> Any:
    seen = {"n": 0}

    def hook(fake: FakeGitHub, method: str, path: str) -> bool:
        if method == "GET" and path == f"/repos/{P}/pulls/{number}":
            seen["n"] += 1
            if seen["n"] == polls:
                fake.human_merges(P, number)
                return True
        return False

    return hook


def test_polls_of_a_waiting_promotion_are_304s(world: World, factory: ControlPlaneFactory) -> None:
    """qa waits five minutes for Flux (a commitStatus gate read every 30 s), prod ten minutes
    for a human to merge (the PR read every 5 s): the polls that find nothing new are 304s."""
    gated = pipeline(
        stage("dev"),
        stage("qa", gates=f'[{{commitStatus: {{contexts: ["{FLUX}"], interval: 30s}}}}]', timeout="1h"),
        stage("prod", merge="manual", timeout="4h"),
        platform="{url: https://github.com/org/platform}",
    )
    factory.commit("main", {"promoter.yaml": gated, "workloads/app.yaml": WORKLOAD}, "gated")
    world.fake.hooks += [reconciled_after(10), merged_by_a_human_after(3, 120)]
    spent_before = world.fake.limit - world.fake.remaining

    report = promote(world, "--poll-interval", "5s")

    assert report["ok"], report
    polls = [r for r in world.fake.requests if r.method == "GET" and POLL.match(r.path)]
    free = [r for r in polls if r.status == 304]
    # a poll is answered 200 only when what it reads changed since the last answer for its URL
    last: dict[str, str] = {}
    for r in polls:
        assert r.status in (200, 304), r
        if r.path in last:
            assert r.headers["If-None-Match"] == last[r.path]
            assert (r.status == 304) == (r.etag == last[r.path]), r
        last[r.path] = r.etag
    share = len(free) / len(polls)
    assert share >= 0.8, (len(free), len(polls))
    # a 304 costs nothing: the primary limit counted every request but the 304s
    counted = world.fake.limit - world.fake.remaining - spent_before
    assert counted == len(world.fake.requests) - len(free)
    print(f"\npolls: {len(polls)}, answered 304: {len(free)} ({share:.0%}); requests counted: {counted}")


def test_every_request_names_the_api_version_and_media_type(world: World) -> None:
    """The fake refuses a REST request without them (GitHub would guess); this says it outright."""
    report = promote(world)
    assert report["ok"], report
    rest = [r for r in world.fake.requests if r.path != "/graphql"]
    assert rest and {(r.headers.get("X-GitHub-Api-Version"), r.headers.get("Accept")) for r in rest} == {
        ("2022-11-28", "application/vnd.github+json")
    }
