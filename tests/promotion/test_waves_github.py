"""Waves on the github forge, through the CLI, against the fake GitHub: one PR per wave, titled
with the wave; the environment's status says which wave it is in; what a wave costs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.gitcmd import Git
from tests.forges.github.test_budget import polls
from tests.support.fake_github import World, make_world
from tests.support.helpers import WORKLOAD, ControlPlaneFactory
from tests.support.waves import QA_TYPES, first_parent_merges, folder_commits, waved_pipeline

GITHUB = "{url: https://github.com/org/platform}"


@pytest.fixture
def world(factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    w = make_world(factory, monkeypatch)
    text = waved_pipeline(canary_gates="[{soak: 1m}]", fleet_gates="[]", bake="5m", platform=GITHUB)
    factory.commit("main", {"promoter.yaml": text.replace("[{soak: 10s}]", "[]")}, "waves", keep=True)
    factory.commit("qa", {"env.yaml": QA_TYPES}, "qa: three cluster types")
    yield w
    w.close()


def test_one_pr_per_wave_through_the_cli(world: World, factory: ControlPlaneFactory) -> None:
    x = factory.commit("main", {"README.md": "waves\n"}, "Roll out in waves", keep=True)
    args = [
        "promote",
        "--control-plane",
        str(world.control_plane),
        "--control-plane-repo",
        "org/control-plane",
    ]
    result = CliRunner().invoke(cli, [*args, "--poll-interval", "5s", "--output", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{\n") :])
    dev, qa, _prod = report["environments"]
    assert [(w["name"], w["state"]) for w in qa["waves"]] == [
        ("canary", "success"),
        ("fleet", "success"),
        ("rest", "success"),
    ]
    prs = [p for p in world.platform_prs if p["base"]["ref"] == "qa"]
    assert [p["title"] for p in prs] == [
        f"Promote {x[:7]} to qa, wave canary (1/3): Roll out in waves",
        f"Promote {x[:7]} to qa, wave fleet (2/3): Roll out in waves",
        f"Promote {x[:7]} to qa, wave rest (3/3): Roll out in waves",
    ]
    assert all(p["merged"] and p["head"]["ref"] == "promoter/qa" for p in prs)
    assert [w["prUrl"] for w in qa["waves"]] == [p["html_url"] for p in prs]
    body = prs[1]["body"]
    assert "| canary | edge | success | soak 1m00s: success |" in body
    assert "| fleet | large | this PR | - |" in body and "| rest | small | waiting | - |" in body
    assert "| large | 3 | 0 | 0 |" in body and "| edge |" not in body.split("| cluster type |")[1]
    assert len(first_parent_merges(factory.platform, "qa")) == 3
    assert folder_commits(factory) == {"edge": x, "large": x, "small": x}
    qa_statuses = [
        (s["state"], s["description"])
        for s in world.fake.statuses[("org/control-plane", x)]
        if s["context"] == "promoter/qa"
    ]
    assert [d.split(":")[0] for state, d in qa_statuses if state == "pending"] == [
        "wave canary (1/3)",
        "wave canary (1/3)",
        "wave canary (1/3) healthy at " + qa["waves"][0]["mergeSha"][:12] + " (soak 1m00s",
        "wave fleet (2/3)",
        "wave fleet (2/3)",
        "wave fleet (2/3) healthy at " + qa["waves"][1]["mergeSha"][:12] + " (no gates); next",
        "wave rest (3/3)",
        "wave rest (3/3)",
    ]
    latest = world.fake.latest_statuses("org/control-plane", x)
    assert latest["promoter/qa"]["state"] == "success"
    assert latest["promoter/qa"]["description"].startswith("3 waves healthy at ")
    # what waves cost: the requests of one PR per wave, over an environment that lands at once
    # what waves cost, polls excluded: each wave the requests of one PR (docs/github.md)
    dev_spent = dev["requests"] - polls(world, dev["prUrl"], 0)
    qa_spent = qa["requests"] - sum(polls(world, w["prUrl"], 0) for w in qa["waves"])
    print(f"\nrequests, polls excluded: dev {dev_spent} (one PR), qa {qa_spent} (three waves)")
    assert (dev_spent, qa_spent) == (7, 20)  # 7 + 6 (no gates: no comment) + 7
    assert sum(e["requests"] for e in report["environments"]) == len(world.fake.requests)


def test_a_failed_wave_rolls_back_its_folders_with_a_pr(
    world: World, factory: ControlPlaneFactory, tmp_path: Path
) -> None:
    broken = tmp_path / "fleet-is-broken"  # the fleet's gate fails once this file exists
    gate = f"{{command: {{run: 'test ! -e {broken}', shell: true}}}}"
    text = waved_pipeline(fleet_gates=f"[{gate}]", on_failure="rollback", platform=GITHUB)
    factory.commit("main", {"promoter.yaml": text.replace("[{soak: 10s}]", "[]")}, "fleet gate", keep=True)
    args = [
        "promote",
        "--control-plane",
        str(world.control_plane),
        "--control-plane-repo",
        "org/control-plane",
    ]
    first = CliRunner().invoke(cli, [*args, "--poll-interval", "5s"])
    assert first.exit_code == 0, first.output
    x = factory.refs()["control-plane:refs/heads/main"]
    before = {ct: Git(factory.platform).out("rev-parse", f"qa:{ct}") for ct in ("edge", "large", "small")}
    prod = factory.refs()["platform.git:refs/heads/prod"]
    y = factory.commit(
        "main", {"workloads/app.yaml": WORKLOAD.replace("./qa", "./BROKEN")}, "break qa", keep=True
    )
    broken.write_text("")
    result = CliRunner().invoke(cli, [*args, "--poll-interval", "5s", "--output", "json"])
    assert result.exit_code == 1, result.output
    qa = json.loads(result.output[result.output.index("{\n") :])["environments"][1]
    assert [(w["name"], w["state"]) for w in qa["waves"]] == [("canary", "success"), ("fleet", "failure")]
    rollback = [p for p in world.platform_prs if p["head"]["ref"] == "promoter/qa-rollback"]
    assert len(rollback) == 1 and rollback[0]["merged"]
    assert rollback[0]["title"] == f"Roll back qa large to {x[:7]}: {y[:12]} failed its gates"
    after = {ct: Git(factory.platform).out("rev-parse", f"qa:{ct}") for ct in ("edge", "large", "small")}
    assert after["large"] == before["large"] and after["small"] == before["small"]
    assert after["edge"] != before["edge"]  # wave 1 keeps y
    assert folder_commits(factory) == {"edge": y, "large": x, "small": x}
    assert factory.refs()["platform.git:refs/heads/prod"] == prod
    latest = world.fake.latest_statuses("org/control-plane", y)
    assert latest["promoter/qa"]["state"] == "failure" and "promoter/prod" not in latest
    assert latest["promoter/qa"]["description"].startswith("wave fleet (2/3): gate command")
