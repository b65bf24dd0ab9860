"""On the github forge, a teammate's fresh clone decides as the clone that promoted before it
(issue 48): the statuses live on GitHub, so there is nothing to fetch and nothing of them is
kept in the clone; a platform branch already holding the new commit's render from an earlier
commit is a no-op that names that commit."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from promoter.cli.main import cli
from promoter.gitcmd import Git
from tests.support.fake_github import World, make_world
from tests.support.helpers import WORKLOAD, ControlPlaneFactory

CP = "org/control-plane"


@pytest.fixture
def world(factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    w = make_world(factory, monkeypatch)
    monkeypatch.setenv("GITHUB_REPOSITORY", CP)  # where the statuses go
    yield w
    w.close()


def promote(path: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--poll-interval", "5s", *args])


def local_refs(path: Path) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(path), "for-each-ref", "--format=%(refname)", "refs/notes/", "refs/promoter/"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def test_a_fresh_clone_makes_the_same_decisions(world: World, factory: ControlPlaneFactory) -> None:
    a = world.control_plane
    w = Git(a).out("rev-parse", "main")
    done = promote(a)
    assert done.exit_code == 0, done.output
    x = factory.commit(
        "main",
        {"workloads/app.yaml": WORKLOAD.replace("path: ./prod}", "path: ./prod-eu}")},
        "prod-eu only",
        keep=True,
    )
    b = factory.clone("b", a)

    result = promote(b, "--to", "dev")
    assert result.exit_code == 0, result.output
    assert f"dev: no changes; dev already has this content (promoted with main {w[:12]})" in result.output
    latest = world.fake.latest_statuses(CP, x)["promoter/dev"]
    assert (latest["state"], latest["description"]) == (
        "success",
        f"no changes (dev already has this content, promoted with main {w[:12]})",
    )
    rest = promote(b)
    assert rest.exit_code == 0, rest.output
    assert world.statuses(x) == {f"promoter/{e}": "success" for e in ("dev", "qa", "prod")}
    assert world.platform_prs[-1]["title"].startswith(f"Promote {x[:7]} to prod")
    assert local_refs(a) == local_refs(b) == []  # nothing of the statuses is kept in a clone
    again = promote(a)  # A decides as B did: done everywhere
    assert again.exit_code == 0, again.output
    assert [line.split()[:2] for line in again.output.splitlines()[-3:]] == [
        [env, "skipped"] for env in ("dev", "qa", "prod")
    ]
