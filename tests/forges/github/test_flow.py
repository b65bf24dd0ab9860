"""The whole promotion on the github forge, through the CLI, against the fake GitHub."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result

from promoter.cli.main import cli
from promoter.clock import FAKE_EPOCH
from tests.support.fake_github import FakeGitHub, World, make_world
from tests.support.helpers import ControlPlaneFactory

P = "org/platform"


@pytest.fixture
def world(factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    w = make_world(factory, monkeypatch, prod="manual")
    yield w
    w.close()


def promote(world: World, *args: str) -> Result:
    command = ["promote", "--control-plane", str(world.control_plane), "--poll-interval", "5s", *args]
    return CliRunner().invoke(cli, command)


def head(world: World, branch: str = "main") -> str:
    return subprocess.run(
        ["git", "-C", str(world.control_plane), "rev-parse", branch],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def merge_when_polled(number: int, polls: int) -> Any:
    """A human merges PR ``number`` on GitHub once the promoter has polled it ``polls`` times."""
    seen = {"n": 0}

    def hook(fake: FakeGitHub, method: str, path: str) -> bool:
        if method == "GET" and path == f"/repos/{P}/pulls/{number}":
            seen["n"] += 1
            if seen["n"] == polls:
                fake.human_merges(P, number)
                return True
        return False

    return hook


def test_dev_qa_prod_through_the_cli(
    world: World, factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "org/control-plane")  # where the statuses go
    monkeypatch.setenv("GITHUB_RUN_ID", "4242")
    world.fake.hooks.append(merge_when_polled(3, 3))  # prod is merge: manual
    x = head(world)

    result = promote(world, "--output", "json")

    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{\n") :])
    assert [(e["environment"], e["state"]) for e in report["environments"]] == [
        ("dev", "success"),
        ("qa", "success"),
        ("prod", "success"),
    ]
    prs = world.platform_prs
    assert [(p["number"], p["head"]["ref"], p["base"]["ref"], p["merged"]) for p in prs] == [
        (1, "promoter/dev", "dev", True),
        (2, "promoter/qa", "qa", True),
        (3, "promoter/prod", "prod", True),
    ]
    assert [sorted(label["name"] for label in p["labels"]) for p in prs] == [
        ["env:dev", "promotion"],
        ["env:qa", "promotion"],
        ["env:prod", "promotion"],
    ]
    assert [p["merged_by"]["login"] for p in prs] == ["promoter-bot", "promoter-bot", "octocat"]
    run = "https://github.com/org/control-plane/actions/runs/4242"
    body = prs[1]["body"]
    assert f"Promotion of control-plane commit `{x}` to **qa**." in body
    assert "- previous environment: dev: success" in body
    assert f"- run: {run}" in body
    assert "| small | 3 | 0 | 0 |" in body
    assert prs[1]["title"] == f"Promote {x[:7]} to qa: initial main"
    latest = world.fake.latest_statuses("org/control-plane", x)
    assert {c: (s["state"], s["target_url"]) for c, s in latest.items()} == {
        "promoter/dev": ("success", run),
        "promoter/qa": ("success", run),
        "promoter/prod": ("success", run),
    }
    # the merges are real git merges on the platform repo
    assert factory.platform_files("prod")[-3:] == [
        "small/app-t3/namespace.yaml",
        "small/app-t3/platform-config.yaml",
        "small/app-t3/reconciler.yaml",
    ]
    assert factory.platform_file("prod", "README.md") == "platform\n"
    # every request is counted, and counted once
    assert sum(e["requests"] for e in report["environments"]) == len(world.fake.requests)


def test_validate_warns_of_removals_on_github_given_the_credentials(
    world: World, factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_REPOSITORY", "org/control-plane")  # where the statuses go
    world.fake.hooks.append(merge_when_polled(3, 3))  # prod is merge: manual
    done = promote(world)
    assert done.exit_code == 0, done.output
    pipeline_text = (world.control_plane / "promoter.yaml").read_text()
    factory.commit("main", {"promoter.yaml": pipeline_text}, "retire the app")  # the workload file goes

    warned = CliRunner().invoke(cli, ["validate", "--control-plane", str(world.control_plane)])
    monkeypatch.delenv("PROMOTER_GITHUB_TOKEN")
    silent = CliRunner().invoke(cli, ["validate", "--control-plane", str(world.control_plane)])

    assert warned.exit_code == 0, warned.output
    removals = [ln for ln in warned.stderr.splitlines() if ln.startswith("warning: ")]
    assert [ln.split(":")[1].strip() for ln in removals] == ["dev", "qa", "prod"], warned.stderr
    assert all("removes all" in ln for ln in removals)
    assert silent.exit_code == 0 and "warning: " not in silent.stderr  # no token: nothing compared


def test_summary_prints_the_requests_per_environment(world: World) -> None:
    world.fake.hooks.append(merge_when_polled(3, 2))
    result = promote(world, "--control-plane-repo", "org/control-plane")

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = lines.index(next(line for line in lines if line.startswith("environment ")))
    assert lines[header] == "environment   result        files  changes         merge commit  requests  gates"
    rows = [line.split() for line in lines[header + 1 : header + 4]]
    assert [row[0] for row in rows] == ["dev", "qa", "prod"]
    assert sum(int(row[7]) for row in rows) == len(world.fake.requests)


def test_a_newer_main_commit_updates_the_same_pr(world: World, factory: ControlPlaneFactory) -> None:
    x = head(world)

    def interrupt(fake: FakeGitHub, method: str, path: str) -> bool:
        if method == "GET" and path == f"/repos/{P}/pulls/3":
            raise KeyboardInterrupt  # the run dies while prod's PR waits for a human
        return False

    world.fake.hooks.append(interrupt)
    first = promote(world, "--control-plane-repo", "org/control-plane")
    assert first.exit_code == 130, first.output
    assert world.statuses(x)["promoter/prod"] == "pending"

    world.fake.hooks.clear()
    y = factory.commit("main", {"workloads/extra.yaml": "# a comment\n"}, "second change", keep=True)
    world.fake.hooks.append(merge_when_polled(3, 2))
    second = promote(world, "--control-plane-repo", "org/control-plane")

    assert second.exit_code == 0, second.output
    prod = [p for p in world.platform_prs if p["base"]["ref"] == "prod"]
    assert len(prod) == 1 and prod[0]["merged"], prod
    assert prod[0]["title"] == f"Promote {y[:7]} to prod: second change"
    assert f"- supersedes the promotion of `{x[:12]}`" in prod[0]["body"]
    assert world.statuses(x)["promoter/prod"] == "error"
    assert world.statuses(y)["promoter/prod"] == "success"
    # the existing PR was found with head=<owner>:<branch>, then updated, not created twice
    lists = [r.query for r in world.fake.calls("get_pr") if r.path == f"/repos/{P}/pulls"]
    assert lists == [
        {
            "state": "open",
            "head": "org:promoter/prod",
            "base": "prod",
            "sort": "created",
            "direction": "desc",
            "per_page": "100",
        }
    ]
    assert [r.status for r in world.fake.calls("create_pr")][-1] == 422
    assert len(world.fake.calls("update_pr")) == 1


def test_a_bare_branch_filter_would_pick_another_pr(world: World, factory: ControlPlaneFactory) -> None:
    """GitHub ignores head=<branch> without the owner; the forge must not pick a stranger's PR."""
    x = head(world)
    factory.commit_platform("feature", {"README.md": "other\n"})
    world.fake.hooks.append(lambda fake, method, path: _interrupt_at(path, f"/repos/{P}/pulls/3"))
    assert promote(world, "--control-plane-repo", "org/control-plane").exit_code == 130
    world.fake.hooks.clear()
    stranger = _open_pr(world.fake, "feature", "prod")  # newer than prod's promotion PR
    world.fake.hooks.append(merge_when_polled(3, 1))

    result = promote(world, "--control-plane-repo", "org/control-plane", "--commit", x)

    assert result.exit_code == 0, result.output
    prs = {p["number"]: p for p in world.platform_prs}
    assert prs[3]["merged"] and prs[3]["head"]["ref"] == "promoter/prod"
    assert prs[stranger]["state"] == "open" and prs[stranger]["title"] == "A stranger's change"


def _interrupt_at(path: str, target: str) -> bool:
    if path == target:
        raise KeyboardInterrupt
    return False


def _open_pr(fake: FakeGitHub, head_branch: str, base: str) -> int:
    status, body, _ = fake._create_pull(
        {"owner": "org", "repo": "platform"},
        {},
        {"head": head_branch, "base": base, "title": "A stranger's change"},
        {},
    )
    assert status == 201
    return int(body["number"])


def test_manual_pr_closed_unmerged_fails_the_environment(world: World) -> None:
    x = head(world)

    def close(fake: FakeGitHub, method: str, path: str) -> bool:
        if method == "GET" and path == f"/repos/{P}/pulls/3":
            fake.human_closes(P, 3)
            return True
        return False

    world.fake.hooks.append(close)
    result = promote(world, "--control-plane-repo", "org/control-plane")

    assert result.exit_code == 1
    assert (
        "prod: FAILED: the promotion PR https://github.com/org/platform/pull/3 was closed without merging"
        in result.output
    )
    assert world.statuses(x) == {
        "promoter/dev": "success",
        "promoter/qa": "success",
        "promoter/prod": "failure",
    }


def test_required_check_blocks_until_it_passes(world: World) -> None:
    world.fake.protect(P, "qa", contexts=("ci/test",))
    ci = {"polls": 0}

    def ci_passes(fake: FakeGitHub, method: str, path: str) -> bool:
        if method == "GET" and path == f"/repos/{P}/pulls/2":
            ci["polls"] += 1
            if ci["polls"] == 4:
                fake.post_status(P, fake.pulls[(P, 2)]["head_sha"], "ci/test", "success")
                return True
        return False

    world.fake.hooks += [ci_passes, merge_when_polled(3, 1)]
    result = promote(world, "--control-plane-repo", "org/control-plane")

    assert result.exit_code == 0, result.output
    assert (
        "merge (auto): https://github.com/org/platform/pull/2 cannot be merged yet: required reviews or status checks are missing"
        in result.output
    )
    merges = [r for r in world.fake.calls("merge") if r.path.endswith("/pulls/2/merge")]
    assert [r.status for r in merges] == [200]  # no PUT while GitHub says it is blocked


def test_head_moved_while_merging_is_never_merged(world: World, factory: ControlPlaneFactory) -> None:
    def someone_pushes(fake: FakeGitHub, method: str, path: str) -> bool:
        if method == "PUT" and path == f"/repos/{P}/pulls/2/merge":
            factory.commit_platform("promoter/qa", {"README.md": "not reviewed\n"})
            return True
        return False

    world.fake.hooks.append(someone_pushes)
    qa_before = world.fake.repos[P].ref("qa")
    result = promote(world, "--control-plane-repo", "org/control-plane")

    assert result.exit_code == 1
    assert [r.status for r in world.fake.calls("merge") if "/pulls/2/" in r.path] == [409]
    assert "qa: superseded: promoter/qa moved to" in result.output
    assert world.fake.repos[P].ref("qa") == qa_before


def test_mergeable_null_is_waited_out(world: World) -> None:
    world.fake.mergeable_delay = 3
    world.fake.hooks.append(merge_when_polled(3, 1))
    result = promote(world, "--control-plane-repo", "org/control-plane")

    assert result.exit_code == 0, result.output
    dev = [(r.method, r.status) for r in world.fake.requests if "/pulls/1" in r.path]
    # null three times (the same body: 304 to the conditional request), then computed
    assert dev[:5] == [("GET", 200), ("GET", 304), ("GET", 304), ("GET", 200), ("PUT", 200)]
    assert "dev: waiting" not in result.output or "GitHub is still working out whether" in result.output


def test_github_auto_merge_and_its_fallback(world: World) -> None:
    world.fake.protect(P, "qa", contexts=("ci/test",))

    def ci_passes(fake: FakeGitHub, method: str, path: str) -> bool:
        pr = fake.pulls.get((P, 2))
        if pr and pr["auto_merge"]:
            fake.post_status(P, pr["head_sha"], "ci/test", "success")
            return True
        return False

    world.fake.hooks += [ci_passes, merge_when_polled(3, 1)]
    result = promote(world, "--control-plane-repo", "org/control-plane", "--github-auto-merge")

    assert result.exit_code == 0, result.output
    # dev: clean, so "in clean status" and merged directly; qa: auto-merge on, GitHub merged it
    assert len(world.fake.calls("graphql")) == 2
    prs = world.platform_prs
    assert [p["merged"] for p in prs] == [True, True, True]
    assert [r.path for r in world.fake.calls("merge")] == [f"/repos/{P}/pulls/1/merge"]
    assert prs[1]["auto_merge"]["merge_method"] == "merge"


def test_direct_merge_opens_no_pr(factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    world = make_world(factory, monkeypatch, prod="direct")
    try:
        result = promote(world, "--control-plane-repo", "org/control-plane")
        assert result.exit_code == 0, result.output
        assert [p["base"]["ref"] for p in world.platform_prs] == ["dev", "qa"]
        assert "prod: pushed" in result.output and "straight to prod (merge: direct)" in result.output
        assert factory.platform_file("prod", ".promoter/promotion.yaml") is not None
    finally:
        world.close()


def test_github_enterprise_server(factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """forge: github with the server's own URL; the API at <server>/api/v3 is derived from it."""
    world = make_world(factory, monkeypatch, ghes=True, prod="direct")
    try:
        result = promote(world, "--control-plane-repo", "org/control-plane")
        assert result.exit_code == 0, result.output
        assert world.fake.requests and all(r.path.startswith("/repos/") for r in world.fake.requests)
        assert [p["html_url"] for p in world.platform_prs] == [
            f"{world.git.url}/org/platform/pull/1",
            f"{world.git.url}/org/platform/pull/2",
        ]
        assert any(e["path"] == "/org/platform.git/git-receive-pack" for e in world.git.log)
    finally:
        world.close()


def test_status_reads_github(world: World) -> None:
    world.fake.hooks.append(merge_when_polled(3, 1))
    assert promote(world, "--control-plane-repo", "org/control-plane").exit_code == 0
    x = head(world)

    result = CliRunner().invoke(
        cli,
        ["status", "--control-plane", str(world.control_plane), "--control-plane-repo", "org/control-plane"],
    )

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"main {x[:12]} initial main"
    assert [line.split()[:2] for line in lines[1:]] == [
        ["dev", "success"],
        ["qa", "success"],
        ["prod", "success"],
    ]
    assert all(line.endswith("[dev has this commit]") for line in lines[1:2])


def test_rate_limit_wait_is_the_users_to_choose(world: World) -> None:
    world.fake.hooks.append(merge_when_polled(3, 1))
    world.fake.fail("merge", "primary", 1, reset_in=1200)  # 20 minutes: more than the default 15m

    result = promote(world, "--control-plane-repo", "org/control-plane", "--github-rate-limit-wait", "1h")

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    # the wait is told at once and then every 10 s with the time left, never a silent minute
    said = lines.index("GitHub merge PR: the rate limit to reset; trying again in 20m01s (try 2 of 5)")
    left = [line for line in lines[said + 1 :] if line.startswith("GitHub merge PR: still waiting")]
    assert len(left) == 120 and left[0].endswith("19m51s left") and left[-1].endswith(", 1.0s left")


def test_rate_limit_wait_must_be_a_duration(world: World) -> None:
    result = promote(world, "--github-rate-limit-wait", "soon")
    assert (result.exit_code, result.output) == (
        2,
        "error: --github-rate-limit-wait: expected a duration like 30s, 5m or 1h, got 'soon'\n",
    )


def test_wait_none_on_github_stops_at_each_wait_and_goes_on_in_the_next_run(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each run advances the promotion and ends; the clocks read the statuses' created_at.
    The pipeline soaks 30s in dev; prod is merged by hand."""
    world.fake.epoch = FAKE_EPOCH  # GitHub's times and the CLI's clock tell the same time of day
    monkeypatch.setenv("GITHUB_REPOSITORY", "org/control-plane")  # where the statuses go
    x = head(world)
    seen = []
    for _ in range(8):  # a heartbeat a minute until prod waits for its merge
        result = promote(world, "--wait", "none", "-o", "json")
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        seen.append((report["waiting"]["for"], report["waiting"]["environment"]))
        if seen[-1] == ("merge", "prod"):
            break
        world.clock.t += 60
    again = json.loads(promote(world, "--wait", "none", "-o", "json").stdout)
    world.fake.human_merges(P, 3)
    world.clock.t += 3600
    done = promote(world, "--wait", "none", "-o", "json")

    assert seen == [("gates", "dev"), ("merge", "prod")]  # dev's soak, then qa at once
    assert again["waiting"]["since"] == report["waiting"]["since"]  # as GitHub recorded it
    assert json.loads(done.stdout)["state"] == "done", done.output
    posted = [
        s["description"]
        for s in world.fake.statuses[("org/control-plane", x)]
        if s["context"] == "promoter/prod"
    ]
    assert sum(d.startswith("PR open: ") for d in posted) == 1  # the phase's status, posted once
    assert world.statuses(x) == {
        "promoter/dev": "success",
        "promoter/qa": "success",
        "promoter/prod": "success",
    }
