"""A hub read from its database or its API (promoter/hub/lookup.py): what the hub refuses is the
user's to fix (exit 2), a hub that failed is not (exit 4)."""

from __future__ import annotations

from pathlib import Path

import pytest
import responses

from promoter.errors import ForgeError, UsageError
from promoter.hub.db import Database
from promoter.hub.lookup import PATHS, fetch

URL = "http://127.0.0.1:9"


def test_a_database_without_the_cluster_says_so(tmp_path: Path) -> None:
    database = str(tmp_path / "hub.sqlite3")
    with pytest.raises(UsageError, match="no hub database there"):  # a read makes no new database
        fetch("clusters", {}, None, database, 1800.0)
    Database.from_option(database).migrate()
    assert fetch("clusters", {"environment": None}, None, database, 1800.0) == []
    with pytest.raises(UsageError):
        fetch("cluster", {"name": "nowhere"}, None, database, 1800.0)


@responses.activate
def test_the_api_is_asked_with_the_stale_time_and_no_empty_parameters() -> None:
    responses.get(URL + PATHS["clusters"], json=[{"cluster": "eu-1"}])
    assert fetch("clusters", {"environment": "", "stale": None}, URL, None, 90.0) == [{"cluster": "eu-1"}]
    assert responses.calls[0].request.url == URL + "/v1/clusters?staleAfter=90s"


@responses.activate
@pytest.mark.parametrize(("status", "error"), [(404, UsageError), (400, UsageError), (503, ForgeError)])
def test_a_refusal_is_the_users_and_a_failure_the_hubs(status: int, error: type[Exception]) -> None:
    responses.get(URL + "/v1/clusters/eu-1", status=status, json={"error": "no"})
    with pytest.raises(error):
        fetch("cluster", {"name": "eu-1"}, URL, None, 60.0)
