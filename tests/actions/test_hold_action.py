"""``actions/hold`` in the composite-action harness, as a job of the ``hold`` workflow runs it: a
hold recorded on ``refs/promoter/holds``, then a release that sends ``promoter-wake`` through the
promoter itself to this run's GitHub (``GITHUB_API_URL``: GitHub's loopback stand-in), with the
job's token, and no ``gh`` on the way (which went to github.com on an Enterprise Server)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from promoter.changecontrol.holds import HOLDS_REF, HoldBook
from promoter.changecontrol.records import Records
from promoter.gitcmd import Git
from tests.actions.github_stand_in import GitHubStandIn
from tests.actions.test_harness import FAST, Runner, runner
from tests.support.helpers import ControlPlaneFactory

__all__ = ["runner"]  # the harness's fixture, shared
HOLD = {k: FAST[k] for k in ("control-plane", "python-version")}


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHubStandIn]:
    stand_in = GitHubStandIn().start()
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_REPOSITORY", "org/control-plane")
    monkeypatch.setenv("GITHUB_API_URL", stand_in.url)
    monkeypatch.setenv("GITHUB_ACTOR", "oncall")
    yield stand_in
    stand_in.stop()


def test_a_release_in_actions_wakes_the_promotion_on_this_runs_github(
    runner: Runner, factory: ControlPlaneFactory, github: GitHubStandIn
) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    held = runner.run(
        "hold", {**HOLD, "environment": "prod", "reason": "INC-4711", "until": "4h", "token": "ghs_job"}
    )
    assert held.returncode == 0, held.stderr
    [hold] = HoldBook(Records(Git(path), HOLDS_REF)).holds(0.0)
    assert (hold.environment, hold.by, hold.reason, hold.until is not None) == (
        "prod",
        "oncall",
        "INC-4711",
        True,
    )
    assert github.dispatches == []  # a hold wakes nothing: its end is a time the heartbeat is armed for

    released = runner.run("hold", {**HOLD, "command": "release", "environment": "prod", "token": "ghs_job"})
    assert released.returncode == 0, released.stderr
    assert "woke the promotion: promoter-wake sent to org/control-plane" in released.stdout
    assert github.dispatches == [
        (
            "org/control-plane",
            {
                "event_type": "promoter-wake",
                "client_payload": {"event": "release", "environment": "prod", "wave": None},
            },
        )
    ]
    shown = [line for line in (released.stdout + released.stderr).splitlines() if "ghs_job" in line]
    assert shown == ["::add-mask::ghs_job"]  # only where the runner is told to mask it
