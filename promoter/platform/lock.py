"""The lock on a platform cache: one writer at a time across processes, and a waiter that says
whom it waits for and gives up in time.

``flock`` is released by the kernel when its holder dies, so a lock is never stale. The holder
writes who it is into the lock file (pid, command, host, since when); a process that finds the
lock taken reads that, says it, and tries again until its timeout, then fails with exit 1.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from promoter.clock import format_duration, parse_duration
from promoter.errors import PromoterError, UsageError

POLL = 0.25  # seconds between tries
REPORT_EVERY = 30.0  # seconds between "still waiting" lines
DEFAULT_TIMEOUT = 600.0


def lock_timeout(environ: Mapping[str, str] | None = None) -> float:
    """Seconds to wait for the lock: $PROMOTER_LOCK_TIMEOUT (a duration), else 10 minutes."""
    text = (os.environ if environ is None else environ).get("PROMOTER_LOCK_TIMEOUT", "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        return parse_duration(text)
    except ValueError as err:
        raise UsageError(f"PROMOTER_LOCK_TIMEOUT: {err}") from err


class LockTimeout(PromoterError):
    """Another process held the platform cache for longer than we would wait. Exit 1."""

    exit_code = 1


def holder_text(raw: str) -> str:
    """Who holds the lock, in words, from what the holder wrote ("another process" if unknown)."""
    try:
        info = json.loads(raw)
        since = datetime.fromisoformat(info["since"])
        ago = format_duration(max(0.0, (datetime.now(UTC) - since).total_seconds()))
        return f"pid {info['pid']} ({info['command']}) on {info['host']} since {info['since']} ({ago} ago)"
    except (ValueError, KeyError, TypeError):
        return "another process"


def _claim(handle: IO[str]) -> None:
    handle.seek(0)
    handle.truncate()
    since = datetime.now(UTC).replace(microsecond=0).isoformat()
    command = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv[:3]))
    handle.write(
        json.dumps({"pid": os.getpid(), "command": command, "host": socket.gethostname(), "since": since})
    )
    handle.flush()


def _try(handle: IO[str]) -> bool:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextmanager
def cache_lock(
    path: Path, what: str, timeout: float, say: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Hold the lock file ``path`` (of the cache ``what``) for the block; wait at most
    ``timeout`` seconds for another holder, saying who it is, then raise LockTimeout."""
    with open(path, "a+", encoding="utf-8") as handle:  # "a+": a waiter must not erase the holder's note
        if not _try(handle):
            _wait(handle, what, timeout, say or (lambda line: None))
        _claim(handle)
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


def _wait(handle: IO[str], what: str, timeout: float, say: Callable[[str], None]) -> None:
    start = time.monotonic()
    reported = -REPORT_EVERY
    while True:
        waited = time.monotonic() - start
        if waited >= REPORT_EVERY + reported:
            handle.seek(0)
            holder = holder_text(handle.read())
            left = format_duration(max(0.0, timeout - waited))
            say(f"waiting for the lock on {what}, held by {holder}: {left} left before giving up")
            reported = waited
        time.sleep(POLL)
        if _try(handle):
            return
        if time.monotonic() - start >= timeout:
            handle.seek(0)
            raise LockTimeout(
                f"gave up after {format_duration(timeout)} waiting for the lock on {what}, held by "
                f"{holder_text(handle.read())}; wait for it to finish, or set PROMOTER_LOCK_TIMEOUT"
            )
