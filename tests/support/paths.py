"""Where things are: the checkout and the tests' own data (fixtures, golden trees)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from promoter.platform.lock import cache_lock

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent


@contextmanager
def building_the_checkout() -> Iterator[None]:
    """Held while a test builds this checkout where it stands (pip, uv, setuptools): setuptools
    builds in the checkout's own ``build/`` folder, and two builds at once (two xdist workers,
    or two runs) deleted each other's files there."""
    build = ROOT / "build"
    build.mkdir(exist_ok=True)
    with cache_lock(build / ".tests-building.lock", "this checkout's build folder", 600.0):
        yield
