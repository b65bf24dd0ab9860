"""Environments as a graph at the hub (docs/hub.md, "Desired state"), on SQLite and PostgreSQL:
the promoter records which environments each follows; the overview draws the Pipeline in tiers
and says, per environment, what it follows and which of those run a main commit it does not yet;
discrepancies compare each environment with the ones it follows, never two siblings; a hub told
no graph keeps the list's order."""

from __future__ import annotations

import re
from typing import Any

import pytest
import requests

from promoter.hub import keys
from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.reads import read
from tests.support.hub_support import LiveHub

ORDER = ("staging", "prod-eu", "prod-us", "global-edge")
FOLLOWS = {
    "staging": [],
    "prod-eu": ["staging"],
    "prod-us": ["staging"],
    "global-edge": ["prod-eu", "prod-us"],
}
A, B = "a" * 40, "b" * 40  # main commits: B is the newer


def _record(hub: LiveHub, env: str, sha: str, main: str, **body: Any) -> requests.Response:
    key = keys.add_promoter_key(hub.db, f"ci-{env}-{sha[:4]}")[1]
    record = {"environment": env, "sha": sha, "branch": env, "mainCommit": main, **body}
    return requests.post(
        f"{hub.url}/v1/commits", json=record, headers={"Authorization": f"Bearer {key}"}, timeout=10
    )


def _world(hub: LiveHub) -> None:
    """B reached staging and prod-eu; prod-us and global-edge still run A."""
    for i, env in enumerate(ORDER):
        main = B if env in ("staging", "prod-eu") else A
        sent = _record(hub, env, f"{i + 1}" * 40, main, environments=list(ORDER), follows=FOLLOWS)
        assert sent.status_code == 201, sent.text


def test_the_overview_says_what_follows_what_and_what_waits(live_hub: LiveHub) -> None:
    _world(live_hub)
    overview = {
        e["environment"]: e for e in requests.get(f"{live_hub.url}/v1/environments", timeout=10).json()
    }
    assert [*overview] == list(ORDER)
    assert {n: e["follows"] for n, e in overview.items()} == FOLLOWS
    assert overview["prod-us"]["waitsOn"] == [{"environment": "staging", "mainCommit": B}]
    assert overview["prod-eu"]["waitsOn"] == []
    assert overview["global-edge"]["waitsOn"] == [{"environment": "prod-eu", "mainCommit": B}]
    env = requests.get(f"{live_hub.url}/v1/environments/global-edge", timeout=10).json()
    assert env["follows"] == ["prod-eu", "prod-us"]

    page = requests.get(f"{live_hub.url}/", timeout=10).text
    tiers = re.search(r'<p class="graph">(.*?)</p>', page, re.S)
    assert tiers is not None
    text = re.sub(r"<[^>]+>", "", tiers.group(1))
    assert re.sub(r"\s+", " ", text) == (
        "staging stale → prod-eu stale, prod-us stale → global-edge stale"
    )  # no cluster registered: each is stale
    section = page.split('id="env-global-edge"')[1]
    follows = re.search(r'<p class="follows">(.*?)</p>', section, re.S)
    assert follows is not None
    said = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", follows.group(1)))
    assert said == f"After prod-eu and prod-us; waits on prod-eu's main {B[:12]}."


def test_discrepancies_follow_the_graph(live_hub: LiveHub) -> None:
    _world(live_hub)
    found = read(live_hub.db, "discrepancies", {}, 0.0, 1800)
    pairs = sorted((d["upstream"], d["downstream"]) for d in found if d["kind"] == "promotion")
    # prod-eu and prod-us are siblings: never compared with each other.
    assert pairs == [("prod-eu", "global-edge"), ("staging", "prod-us")]


def test_a_hub_told_no_graph_keeps_the_list(live_hub: LiveHub) -> None:
    for i, env in enumerate(("dev", "qa", "prod")):
        assert _record(live_hub, env, f"{i + 1}" * 40, A if i else B, environments=["dev", "qa", "prod"]).ok
    overview = requests.get(f"{live_hub.url}/v1/environments", timeout=10).json()
    assert [e["follows"] for e in overview] == [[], ["dev"], ["qa"]]
    found = read(live_hub.db, "discrepancies", {}, 0.0, 1800)
    assert [(d["upstream"], d["downstream"]) for d in found if d["kind"] == "promotion"] == [("dev", "qa")]
    record_commit(live_hub.db, CommitRecord("prod", "4" * 40, "prod", "3" * 40, A), 5.0)  # by hand: no graph
    assert [e["follows"] for e in requests.get(f"{live_hub.url}/v1/environments", timeout=10).json()] == [
        [],
        ["dev"],
        ["qa"],
    ]


@pytest.mark.parametrize("hub_url", ["sqlite"], indirect=True)  # a body is judged alike on both engines
def test_a_bad_graph_is_refused_naming_the_field(live_hub: LiveHub) -> None:
    bad = _record(live_hub, "qa", "1" * 40, A, environments=["dev", "qa"], follows={"qa": ["staging"]})
    assert bad.status_code == 422 and "'follows.qa' names 'staging'" in bad.json()["error"]
    bad = _record(live_hub, "qa", "1" * 40, A, follows={"qa": "dev"})
    assert bad.status_code == 422 and "'follows' must map each environment" in bad.json()["error"]
