"""Waves on the github forge under SIGKILL: a chain of real promoter processes, each killed
right after the next write to GitHub (a push, a PR request, a status) that no run died after
yet, until a run finishes; then every wave has exactly one merged PR and one merge, every
folder holds the main commit, and no status ever said failure."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.forges.github.test_crash import CP, TOKEN, Reconciler, Served, git
from tests.promotion.test_waves_resume import QA_ONLY
from tests.support.fake_github import GitServer
from tests.support.fake_github_server import FakeGitHubServer
from tests.support.helpers import ControlPlaneFactory, pipeline, stage
from tests.support.waves import QA_TYPES, folder_commits

P = "org/platform"
WAVES = (
    '\n        - {name: canary, clusterTypes: [edge], gates: [{commitStatus: {contexts: ["kustomization/*"]}}]}'
    "\n        - {name: fleet, selector: {matchLabels: {size: large}}, gates: []}"
)
PIPELINE = pipeline(stage("qa", waves=WAVES), platform="{url: GIT/org/platform, forge: github}")


@pytest.fixture
def served(factory: ControlPlaneFactory, tmp_path: Path) -> Iterator[Served]:
    api = FakeGitHubServer(tokens=(TOKEN,))
    gitd = GitServer({"/org/platform.git": factory.platform}, token=TOKEN)
    path = factory.create(
        {"promoter.yaml": PIPELINE.replace("GIT", gitd.url), "workloads/app.yaml": QA_ONLY},
        {"qa": {"env.yaml": QA_TYPES}},
        platform_branches=("qa",),
    )
    api.fake.add_repo(P, factory.platform)
    api.fake.add_repo(CP, path)
    api.fake.hooks.append(Reconciler())
    env = {
        "GIT_HTTP_LOW_SPEED_LIMIT": "1000",
        "GIT_HTTP_LOW_SPEED_TIME": "5",
        "PROMOTER_GITHUB_TOKEN": TOKEN,
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"url.{factory.platform}.insteadOf",
        "GIT_CONFIG_VALUE_0": f"{gitd.url}/org/platform.git",
    }
    world = Served(api, gitd, factory, path, tmp_path, env)
    yield world
    api.stop()
    gitd.stop()


def assert_finished(served: Served, x: str) -> None:
    prs = served.prs("qa")
    assert [(p["merged"], p["title"].split(":")[0]) for p in prs] == [
        (True, f"Promote {x[:7]} to qa, wave canary (1/3)"),
        (True, f"Promote {x[:7]} to qa, wave fleet (2/3)"),
        (True, f"Promote {x[:7]} to qa, wave rest (3/3)"),
    ]
    merges = git(served.factory.platform, "rev-list", "--first-parent", "--merges", "qa").split()
    assert merges == [p["merge_commit_sha"] for p in reversed(prs)]
    assert folder_commits(served.factory) == {"edge": x, "large": x, "small": x}
    history = served.fake.statuses.get((CP, x), [])
    assert history[-1]["state"] == "success" and history[-1]["description"].startswith("3 waves healthy")
    assert not [s for s in history if s["state"] in ("failure", "error")], history


# the pushes and PR requests of the second and third waves
KILL_POINTS = [("push", 2), ("merge", 2), ("create_pr", 3)]


@pytest.mark.parametrize(("kind", "n"), KILL_POINTS, ids=[f"{k}-{n}" for k, n in KILL_POINTS])
def test_sigkill_in_a_later_wave_then_rerun_finishes(served: Served, kind: str, n: int) -> None:
    x = served.main()
    killed = served.promote((kind, n))
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    rerun = served.promote()
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert_finished(served, x)


def test_sigkill_after_every_write_of_every_wave_then_rerun_finishes(served: Served, tmp_path: Path) -> None:
    x = served.main()
    log = tmp_path / "kills.log"
    served.env.update(KILLHOOK_LOG=str(log))
    runs = []
    for _ in range(40):
        runs.append(served.promote(("write", 1)))
        if runs[-1].returncode != -signal.SIGKILL:
            break
    last = runs[-1]
    assert last.returncode == 0, last.stdout + last.stderr
    kills = [line.split("\t")[0] for line in log.read_text().splitlines()]
    assert len(kills) == len(runs) - 1
    # The chain dies once after each distinct write: the waves' pushes and PR requests read
    # alike (``push promoter/qa``, ``create PR (qa)``), so the later waves' are tried by the
    # kill points below; their statuses name the wave and are each tried here. A run resumed
    # after a merge goes straight to the gates, with no "merged" status.
    assert kills == [
        *("push", "create_pr", "label", "status", "merge", "comment"),  # canary
        "status",  # "wave canary (1/3) healthy ...; next: wave fleet"
        *("status", "status", "status"),  # fleet: PR open, merged, healthy
        *("status", "status", "status"),  # rest: PR open, merged, the environment's success
    ], kills
    assert_finished(served, x)
