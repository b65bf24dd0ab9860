"""Waiting for the platform cache lock is visible: who holds it, since when, how long is left;
and it ends with exit 1 after the timeout instead of hanging."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.errors import UsageError
from promoter.platform.lock import LockTimeout, cache_lock, holder_text, lock_timeout
from promoter.platform.repo import PlatformRepo
from tests.support.helpers import ControlPlaneFactory


def test_a_waiter_names_the_holder_and_gives_up_after_the_timeout(tmp_path: Path) -> None:
    lock = tmp_path / "promoter.lock"
    said: list[str] = []
    with (
        cache_lock(lock, "the cache", 60),
        pytest.raises(LockTimeout) as err,
        cache_lock(lock, "the cache", 0.5, said.append),
    ):
        pass
    assert err.value.exit_code == 1
    holder = f"held by pid {os.getpid()} ("
    assert len(said) == 1 and said[0].startswith(f"waiting for the lock on the cache, {holder}")
    assert said[0].endswith(": 0.5s left before giving up")
    assert str(err.value).startswith(f"gave up after 0.5s waiting for the lock on the cache, {holder}")
    assert str(err.value).endswith("; wait for it to finish, or set PROMOTER_LOCK_TIMEOUT")
    assert lock.read_text() == ""  # released: the note is gone


def test_a_waiter_goes_on_when_the_holder_lets_go(tmp_path: Path) -> None:
    lock = tmp_path / "promoter.lock"
    taken, said = threading.Event(), []

    def hold() -> None:
        with cache_lock(lock, "the cache", 5):
            taken.set()
            time.sleep(0.5)

    thread = threading.Thread(target=hold)
    thread.start()
    taken.wait(5)
    with cache_lock(lock, "the cache", 10, said.append):
        assert '"pid"' in lock.read_text()  # our own note now
    thread.join()
    assert len(said) == 1 and said[0].endswith("s left before giving up")


def test_the_holder_note_is_read_in_words() -> None:
    assert holder_text("") == "another process"
    assert holder_text(
        '{"pid": 7, "command": "promoter promote", "host": "h", "since": "2026-01-01T00:00:00+00:00"}'
    ).startswith("pid 7 (promoter promote) on h since 2026-01-01T00:00:00+00:00 (")


def test_the_timeout_comes_from_the_environment_as_a_duration() -> None:
    assert lock_timeout({}) == 600
    assert lock_timeout({"PROMOTER_LOCK_TIMEOUT": "1.5m"}) == 90
    with pytest.raises(UsageError, match="PROMOTER_LOCK_TIMEOUT: expected a duration"):
        lock_timeout({"PROMOTER_LOCK_TIMEOUT": "soon"})


def test_a_second_promote_says_it_waits_and_fails_with_exit_1(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = factory.create(platform_branches=("dev", "qa", "prod"))
    monkeypatch.setenv("PROMOTER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PROMOTER_LOCK_TIMEOUT", "0.4s")
    platform = PlatformRepo(str(factory.platform))
    with platform.locked():
        result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--dry-run"])
    assert result.exit_code == 1, result.output
    assert (
        f"waiting for the lock on the platform cache {platform.path}, held by pid {os.getpid()}"
        in result.stdout
    )
    assert result.stderr.startswith(
        f"error: gave up after 0.4s waiting for the lock on the platform cache {platform.path}"
    )
