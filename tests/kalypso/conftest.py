"""The tests of this folder written for Kalypso's 2023 scheduler run with
``PROMOTER_KALYPSO_NAMING=2023`` (the old name of ``PROMOTER_KALYPSO_GENERATION``, which keeps
working); a test of a later scheduler removes the variable (the default, ``head``) or names its
generation itself."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _naming_2023(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMOTER_KALYPSO_NAMING", "2023")
