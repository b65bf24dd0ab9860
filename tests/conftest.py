"""Real git in every test: repos in tmp_path, global config and identity isolated."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from promoter import masking
from promoter.clock import FakeClock
from promoter.ghactions import runner
from tests.support.helpers import ControlPlaneFactory

# the hub's databases and live server; the actions' checkout, installed once per session
pytest_plugins = ["tests.support.hub_support", "tests.support.action_install"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that spend most of their time asleep while real time passes (marked ``asleep``) go
    first: the first worker starts them at once, and its sleep overlaps the other workers' work
    instead of trailing the run (a 70-second sleep begun last was the run's last minute). ``make
    test`` distributes with ``--dist worksteal``: each worker starts on a quarter of the tests
    and an idle one takes tests from a busy one's queue, so a quarter that holds the slow
    install and workflow tests no longer ends the run 50 seconds after the others."""
    items.sort(key=lambda item: item.get_closest_marker("asleep") is None)


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    # no template: the thousands of repos a run makes get no sample hooks (a third of the files);
    # no automatic maintenance: every fetch and push would start a git that finds nothing to do
    gitconfig.write_text(
        '[init]\n\tdefaultBranch = main\n\ttemplateDir =\n[protocol "file"]\n\tallow = always\n'
        "[maintenance]\n\tauto = false\n[gc]\n\tauto = 0\n[receive]\n\tautogc = false\n[transfer]\n\tunpackLimit = 1\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("PROMOTER_CACHE_DIR", str(home / "cache"))
    for key in (
        "GITHUB_ACTIONS",
        "GITHUB_OUTPUT",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_TOKEN",
        "PROMOTER_GITHUB_TOKEN",
        "GITHUB_SERVER_URL",
        "GITHUB_REPOSITORY",
        "GITHUB_RUN_ID",
    ):
        monkeypatch.delenv(key, raising=False)
    for key, value in {
        "GIT_AUTHOR_NAME": "Test Author",
        "GIT_AUTHOR_EMAIL": "author@example.com",
        "GIT_COMMITTER_NAME": "Test Author",
        "GIT_COMMITTER_EMAIL": "author@example.com",
    }.items():
        monkeypatch.setenv(key, value)
    yield
    os.environ.pop("PROMOTER_TEST_MARKER", None)


@pytest.fixture(autouse=True)
def fresh_secrets() -> Iterator[None]:
    """Each test starts with no secret registered or announced (``::add-mask::``) by an earlier
    one in the same worker, so that what a test sees does not depend on the order of tests."""
    masking._extra.clear()
    runner._masked.clear()
    yield
    masking._extra.clear()
    runner._masked.clear()


@pytest.fixture
def factory(tmp_path: Path) -> ControlPlaneFactory:
    return ControlPlaneFactory(tmp_path)


@pytest.fixture
def fake_time(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """The CLI's clock, faked: soaks, bakes and poll intervals of a promotion run in the test's
    process pass at once. Only for runs whose gates need no real process to move meanwhile."""
    clock = FakeClock()
    monkeypatch.setattr("promoter.clock.RealClock", lambda: clock)
    return clock
