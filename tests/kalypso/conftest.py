"""The tests of this folder written for Kalypso's 2023 scheduler run with
``PROMOTER_KALYPSO_NAMING=2023``; a test of the current scheduler (the default) says
``current`` (or removes the variable) itself."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _naming_2023(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMOTER_KALYPSO_NAMING", "2023")
