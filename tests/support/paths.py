"""Where things are: the checkout and the tests' own data (fixtures, golden trees)."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
