"""``prChecks`` on GitHub: the promotion PR's check runs and commit statuses, read by the forge
(``promoter/forges/github/checks.py``) and required before the merge, through the CLI against
the fake GitHub. Time is the fake clock's: nothing here sleeps."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import responses
from click.testing import CliRunner, Result

from promoter.cli.main import cli
from promoter.forges.base import PRCheck
from tests.forges.github.test_forge import Setup
from tests.support.fake_github import FakeGitHub, World, make_world
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, pipeline, stage

P = "org/platform"
CP = ("--control-plane-repo", "org/control-plane")
RUNS = "https://github.com/org/platform/runs"


@pytest.fixture
def world(factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    w = make_world(factory, monkeypatch)
    yield w
    w.close()


def requiring(factory: ControlPlaneFactory, require: str, **dev: str) -> str:
    """Main at a Pipeline whose dev (no gates) requires ``require`` of its PR's checks."""
    text = pipeline(
        stage("dev", prChecks=f"{{require: {require}}}", **dev),
        "qa",
        "prod",
        platform="{url: https://github.com/org/platform}",
    )
    return factory.commit(
        "main", {"promoter.yaml": text, "workloads/app.yaml": WORKLOAD}, "require PR checks"
    )


def promote(*args: str) -> Result:
    return CliRunner().invoke(cli, ["promote", "--poll-interval", "5s", *CP, "--to", "dev", *args])


def at_check_read(
    reads: dict[int, Callable[[FakeGitHub, str], Any]],
) -> Callable[[FakeGitHub, str, str], bool]:
    """A hook: at the n-th read of a commit's check runs, ``reads[n](fake, sha)`` happens first
    (what CI does on the PR's head meanwhile)."""
    seen = {"n": 0}

    def hook(fake: FakeGitHub, method: str, path: str) -> bool:
        if method == "GET" and path.endswith("/check-runs"):
            seen["n"] += 1
            action = reads.get(seen["n"])
            if action is not None:
                action(fake, path.split("/")[-2])
            return seen["n"] >= max(reads)
        return False

    return hook


def report_of(result: Result) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.stdout[result.stdout.index("{\n") :])
    return data


def test_a_failed_check_fails_the_environment_and_nothing_is_merged(
    world: World, factory: ControlPlaneFactory
) -> None:
    x = requiring(factory, "all")
    ran: dict[str, Any] = {}

    def kubeconform_fails(fake: FakeGitHub, sha: str) -> None:
        ran.update(fake.add_check_run(P, sha, "kubeconform", "completed", "failure"))

    world.fake.hooks.append(at_check_read({1: kubeconform_fails}))
    result = promote("-o", "json", "--control-plane", str(world.control_plane))

    url = f"{RUNS}/{ran['id']}"
    message = f"dev: PR check kubeconform failed (failure): {url}"
    assert result.exit_code == 1, result.output
    assert world.fake.calls("merge") == []
    pr = world.platform_prs[0]
    assert (pr["state"], pr["merged"]) == ("open", False)
    dev = report_of(result)["environments"][0]
    assert (dev["state"], dev["message"]) == ("failure", message)
    assert dev["prChecks"] == [
        {
            "name": "kubeconform",
            "kind": "check-run",
            "state": "failure",
            "detail": "failure",
            "url": url,
            "app": "github-actions",
        }
    ]
    status = world.fake.latest_statuses("org/control-plane", x)["promoter/dev"]
    assert (status["state"], status["description"]) == ("failure", message)
    (comment,) = world.fake.pulls[(P, 1)]["comment_bodies"]
    assert comment.splitlines()[0] == (
        f"**dev** PR checks on `{pr['head']['sha'][:12]}`: PR check kubeconform failed (failure): {url}; not merged"
    )
    assert f"| kubeconform | check-run | failure | [failure]({url}) |" in comment

    shown = CliRunner().invoke(cli, ["status", *CP, "--control-plane", str(world.control_plane)])
    assert shown.exit_code == 0, shown.output
    assert f"    PR check kubeconform: failure (check run) {url}\n" in shown.output


def test_pending_checks_hold_the_merge_until_they_pass(world: World, factory: ControlPlaneFactory) -> None:
    requiring(factory, "all")
    runs: list[dict[str, Any]] = []
    merged_after: list[int] = []

    def start(fake: FakeGitHub, sha: str) -> None:  # the first read found none yet
        runs.append(fake.add_check_run(P, sha, "kubeconform"))

    def done(fake: FakeGitHub, sha: str) -> None:
        fake.finish_check_run(runs[0], "success")
        merged_after.append(len(fake.requests))

    world.fake.hooks.append(
        at_check_read({2: start, 3: lambda f, s: f.finish_check_run(runs[0], "", "in_progress"), 5: done})
    )
    result = promote("--control-plane", str(world.control_plane))

    assert result.exit_code == 0, result.output
    url = f"{RUNS}/{runs[0]['id']}"
    assert f"dev: PR check kubeconform: pending, queued (check run) {url}\n" in result.output
    assert f"dev: PR check kubeconform: pending, in_progress (check run) {url}\n" in result.output
    assert f"dev: PR check kubeconform: success (check run) {url}\n" in result.output
    assert "dev: PR checks passed: kubeconform\n" in result.output
    assert f"              PR check kubeconform: success (check run) {url}\n" in result.output  # the table
    # no merge was asked for before the read that found the check passed
    merges = [i for i, r in enumerate(world.fake.requests) if r.call == "merge"]
    assert merges and min(merges) >= merged_after[0]
    assert world.platform_prs[0]["merged"]


def test_named_checks_ignore_the_others_and_a_rerun_replaces_its_failure(
    world: World, factory: ControlPlaneFactory
) -> None:
    requiring(factory, '[kubeconform, "policy/*"]')
    runs: dict[str, dict[str, Any]] = {}

    def ci(fake: FakeGitHub, sha: str) -> None:
        runs["failed"] = fake.add_check_run(P, sha, "kubeconform", "completed", "failure")
        runs["rerun"] = fake.add_check_run(P, sha, "kubeconform", "completed", "success")  # a new suite
        fake.add_check_run(P, sha, "lint", "completed", "failure")  # not required
        fake.add_check_run(P, sha, "docs", "completed", "timed_out", app="ci-bot")  # not required
        fake.post_status(P, sha, "policy/opa", "success", "ok", "https://opa.example.com/r/1")
        fake.post_status(P, sha, "legacy-ci", "error", "broken")  # not required

    world.fake.hooks.append(at_check_read({1: ci}))
    result = promote("-o", "json", "--control-plane", str(world.control_plane))

    assert result.exit_code == 0, result.output
    assert world.platform_prs[0]["merged"]
    checks = report_of(result)["environments"][0]["prChecks"]
    assert [(c["name"], c["kind"], c["state"], c["url"]) for c in checks] == [
        ("kubeconform", "check-run", "success", f"{RUNS}/{runs['rerun']['id']}"),
        ("policy/opa", "status", "success", "https://opa.example.com/r/1"),
    ]


def test_a_pending_check_ends_the_run_waiting_and_a_later_run_merges(
    world: World, factory: ControlPlaneFactory
) -> None:
    requiring(factory, "[kubeconform]")
    runs: list[dict[str, Any]] = []
    world.fake.hooks.append(
        at_check_read(
            {1: lambda fake, sha: runs.append(fake.add_check_run(P, sha, "kubeconform", "in_progress"))}
        )
    )
    args = ("--wait", "none", "-o", "json", "--control-plane", str(world.control_plane))

    first = promote(*args)

    assert first.exit_code == 0, first.output
    url = f"{RUNS}/{runs[0]['id']}"
    report = report_of(first)
    assert (report["state"], report["waiting"]["for"], report["waiting"]["environment"]) == (
        "waiting",
        "merge",
        "dev",
    )
    assert report["waiting"]["nextCheck"] is not None  # the heartbeat looks again
    assert report["waiting"]["message"] == (
        f"dev: waiting for https://github.com/org/platform/pull/1: PR checks pending: kubeconform (in_progress) {url}"
    )
    assert world.fake.calls("merge") == []
    assert len(world.fake.calls("get_check_runs")) == 1  # one look, no polling in a run that does not wait

    world.fake.finish_check_run(runs[0], "success")
    second = promote(*args)  # the next run (a wake-up, the heartbeat): new objects, same repos

    assert second.exit_code == 0, second.output
    assert report_of(second)["state"] == "done"
    assert world.platform_prs[0]["merged"] and len(world.platform_prs) == 1
    assert (
        world.statuses(factory.refs()[f"{world.control_plane.name}:refs/heads/main"])["promoter/dev"]
        == "success"
    )


def test_a_check_still_pending_at_the_timeout_fails_the_environment(
    world: World, factory: ControlPlaneFactory
) -> None:
    requiring(factory, "[kubeconform]", timeout="2m")

    result = promote("--control-plane", str(world.control_plane))

    assert result.exit_code == 1, result.output
    message = "dev: PR checks did not pass within the timeout: kubeconform (not reported yet)"
    assert f"dev: FAILED: {message.removeprefix('dev: ')}" in result.output
    assert world.fake.calls("merge") == []
    (comment,) = world.fake.pulls[(P, 1)]["comment_bodies"]
    assert "| (none reported) | | | |" in comment


# -------------------------------------------------------------- the forge, call by call


@pytest.fixture
def gh(factory: ControlPlaneFactory) -> Iterator[Setup]:
    setup = Setup(factory)
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        setup.fake.install(mock)
        yield setup


def test_every_page_of_check_runs_and_statuses_is_read(gh: Setup) -> None:
    pr = gh.open()
    for i in range(130):
        gh.fake.add_check_run(P, pr.head_sha, f"shard-{i:03}", "completed", "success")
    for i in range(105):
        gh.fake.post_status(P, pr.head_sha, f"ci/{i:03}", "success")
    gh.fake.requests.clear()

    checks = gh.forge.pr_checks(pr)

    assert len([c for c in checks if c.kind == "check-run"]) == 130
    assert len([c for c in checks if c.kind == "status"]) == 105
    assert [(r.call, r.query.get("page")) for r in gh.fake.requests] == [
        ("get_check_runs", "1"),
        ("get_check_runs", "2"),
        ("get_statuses", "1"),
        ("get_statuses", "2"),
    ]
    assert gh.fake.requests[0].query["filter"] == "latest"


@pytest.mark.parametrize(
    ("status", "conclusion", "state"),
    [
        ("queued", None, "pending"),
        ("in_progress", None, "pending"),
        ("completed", "success", "success"),
        ("completed", "neutral", "success"),
        ("completed", "skipped", "success"),
        ("completed", "failure", "failure"),
        ("completed", "timed_out", "failure"),
        ("completed", "cancelled", "failure"),
        ("completed", "action_required", "failure"),
        ("completed", "stale", "failure"),
    ],
)
def test_a_check_runs_conclusion_is_judged_as_branch_protection_does(
    gh: Setup, status: str, conclusion: str | None, state: str
) -> None:
    pr = gh.open()
    run = gh.fake.add_check_run(P, pr.head_sha, "kubeconform", status, conclusion, app="kubeconform-app")

    assert gh.forge.pr_checks(pr) == [
        PRCheck(
            "kubeconform", "check-run", state, conclusion or status, f"{RUNS}/{run['id']}", "kubeconform-app"
        )  # type: ignore[arg-type]
    ]


def test_statuses_are_checks_too_the_newest_per_context(gh: Setup) -> None:
    pr = gh.open()
    gh.fake.post_status(P, pr.head_sha, "policy/opa", "failure", "denied", "https://opa.example.com/r/1")
    gh.fake.post_status(P, pr.head_sha, "policy/opa", "success", "allowed", "https://opa.example.com/r/2")
    gh.fake.post_status(P, pr.head_sha, "ci/legacy", "error")
    gh.fake.post_status(P, pr.head_sha, "ci/slow", "pending")

    assert sorted(gh.forge.pr_checks(pr), key=lambda c: c.name) == [
        PRCheck("ci/legacy", "status", "failure", "error"),
        PRCheck("ci/slow", "status", "pending", "pending"),
        PRCheck("policy/opa", "status", "success", "success", "https://opa.example.com/r/2"),
    ]
