"""``hold`` and ``release`` as library calls (promoter/promotion/holding.py): ``--until``, the
events the receivers hear, and the wake-up outside GitHub."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from promoter.changecontrol.holds import Hold
from promoter.controlplane.repo import ControlPlane
from promoter.errors import UsageError
from promoter.promotion.control_wiring import hold_key
from promoter.promotion.holding import WAKE, hold_event, release_event, until_of, wake

NOW = 1_800_000_000.0  # 2027-01-15T08:00:00Z


def test_until_is_a_duration_or_a_time_to_come() -> None:
    assert until_of(None, NOW) is None
    assert until_of("4h", NOW) == NOW + 4 * 3600
    assert until_of("2027-01-16T08:00:00Z", NOW) == NOW + 86400
    with pytest.raises(UsageError, match=r"--until 2027-01-14T08:00:00Z: that is in the past"):
        until_of("2027-01-14T08:00:00Z", NOW)
    with pytest.raises(UsageError, match=r"expected a time like .* or a duration like 4h"):
        until_of("tomorrow", NOW)


def test_a_hold_and_a_release_are_told_once_each() -> None:
    held = Hold("prod", "canary", "incident", "alice", NOW, None)
    event = hold_event(held)
    assert (event.kind, event.environment, event.wave, event.key) == (
        "held",
        "prod",
        "canary",
        hold_key("prod", "canary", NOW),
    )
    assert event.message == f"{held.where()}: {held.describe()}"
    released = release_event("prod", None, "bob", NOW)
    assert (released.kind, released.message, released.key) == (
        "released",
        "prod: released by bob",
        f"released:prod:None:{int(NOW)}",
    )


def test_outside_github_a_release_says_how_to_go_on(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    warned: list[str] = []
    said = wake(ControlPlane(str(tmp_path), "main"), None, None, ("prod", None), warned.append, environ={})
    assert (
        said == "the control plane is not on GitHub, so nothing runs by itself: run promoter promote to go on"
    )
    assert warned == []


def test_on_github_without_credentials_it_says_how_to_send_the_wake_up(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    cp = ControlPlane(str(tmp_path), "main")
    said = wake(cp, "acme/control-plane", "https://api.github.com", ("prod", None), print, environ={})
    assert said.startswith(
        f"to go on now, wake the promotion: gh api --method POST repos/acme/control-plane/dispatches -f event_type={WAKE}"
    )
