"""States a person acts on, on both engines: a cluster behind (still at an older commit) told
from one progressing, a rollout stuck past the gates' timeout (or ``stuckAfter``), and a failed
or stuck environment that says what the promotion did, links its PR, run and commits, and names
the commands that act on it. The gate's counts stay as they were."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from promoter.hub import keys
from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from promoter.hub.ingest import commit_from_json
from promoter.hub.payloads import IngestError, Report
from promoter.hub.promotions import Promotion
from promoter.hub.reads import read
from promoter.hub.store import store_report
from tests.support.hub_support import LiveHub

M0, M, M1 = "0" * 40, "1" * 40, "2" * 40
T = 1_000_000.0
PLATFORM = "https://github.com/acme/platform-gitops"
CONTROL = "https://github.com/acme/control-plane"
PR = f"{PLATFORM}/pull/41"
RUN = f"{CONTROL}/actions/runs/987"


def _report(db: Database, cluster: str, state: str, revision: str, at: float) -> None:
    with db.transaction() as tx:
        found = keys.cluster(tx, cluster)
    assert found is not None
    report = Report("native", "platform", "apply", state, revision, "dev", state, "", None)  # type: ignore[arg-type]
    store_report(db, found, report, f"{cluster}-{revision}-{state}-{at}", at)


def _commit(db: Database, sha: str, parent: str | None, main: str, at: float, **promotion: Any) -> None:
    record_commit(
        db,
        CommitRecord(
            "dev", sha, "dev", parent, main, None, (("small", "web"),), ("dev", "prod"), PLATFORM,
            promotion=Promotion(**promotion),
        ),
        at,
    )  # fmt: skip


def _world(db: Database, **promotion: Any) -> None:
    """dev: c1 runs M, c2 is still at M0 (behind), c3 is applying M (progressing)."""
    _commit(db, M0, None, "a" * 40, T - 3600)
    for name in ("c1", "c2", "c3"):
        keys.add_cluster_key(db, name, "dev", "small")
        _report(db, name, "success", M0, T - 3000)
    _commit(db, M, M0, "b" * 40, T, **promotion)
    _report(db, "c1", "success", M, T + 60)
    _report(db, "c3", "progressing", M, T + 90)


def _badges(env: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["badge"] for c in env["clusters"]}


def test_behind_is_told_from_progressing_and_a_late_rollout_is_stuck(hub_db: Database) -> None:
    _world(hub_db, pull_request=PR, run=RUN, control_plane=CONTROL, on_failure="stop", timeout=600.0)
    early = read(hub_db, "environment", {"name": "dev"}, T + 300, 86400)
    assert early["state"] == "progressing" and not early["head"]["stuck"] and "attention" not in early
    assert _badges(early) == {"c1": "healthy", "c2": "behind", "c3": "progressing"}
    gate = read(hub_db, "rollout", {"environment": "dev", "commit": M}, T + 900, 86400)
    late = read(hub_db, "environment", {"name": "dev"}, T + 900, 86400)
    assert gate["clusterTypes"]["small"]["state"] == "progressing"  # the gate's answer is its own
    assert late["state"] == "stuck" and late["head"]["stuck"]
    assert late["rollout"]["clusterTypes"]["small"]["state"] == "stuck"
    assert _badges(late) == {"c1": "healthy", "c2": "stuck", "c3": "stuck"}
    assert late["head"]["expectedBy"] == T + 600 and late["head"]["expectation"] == "the gates' timeout"
    attention = late["attention"]
    assert attention["did"] == (
        "Its gates gave up 5 min ago, at their timeout: the promotion stopped here (onFailure: stop);"
        " what follows dev waits."
    )
    assert attention["links"] == [
        {"text": "promotion PR", "href": PR},
        {"text": "run", "href": RUN},
        {"text": f"platform commit {M[:12]}", "href": f"{PLATFORM}/commit/{M}"},
        {"text": f"main commit {'b' * 12}", "href": f"{CONTROL}/commit/{'b' * 40}"},
    ]
    assert [c["command"] for c in attention["commands"]] == [
        "promoter rollback --env dev",
        'promoter hold dev --reason "..."',
        f"promoter status --commit {'b' * 12}",
    ]
    overview = read(hub_db, "environments", {}, T + 900, 86400)
    assert overview[0]["state"] == "stuck" and overview[0]["attention"] == attention


def test_without_a_timeout_stuck_after_decides(hub_db: Database) -> None:
    _world(hub_db)
    assert read(hub_db, "environment", {"name": "dev"}, T + 1700, 86400)["state"] == "progressing"
    late = read(hub_db, "environment", {"name": "dev"}, T + 1900, 86400)
    assert late["state"] == "stuck" and late["head"]["expectation"] == "stuckAfter"
    assert late["attention"]["did"].startswith(
        "It has not finished 31 min after it was recorded (stuckAfter 30 min): the promotion stops here"
    )
    assert [link["text"] for link in late["attention"]["links"]] == [f"platform commit {M[:12]}"]
    sooner = read(hub_db, "environment", {"name": "dev", "stuckAfter": "10m"}, T + 700, 86400)
    assert sooner["state"] == "stuck"
    with pytest.raises(IngestError, match="stuckAfter"):
        read(hub_db, "environment", {"name": "dev", "stuckAfter": "soon"}, T, 86400)


def test_a_finished_rollout_is_never_stuck(hub_db: Database) -> None:
    _world(hub_db, timeout=600.0)
    for name in ("c2", "c3"):
        _report(hub_db, name, "success", M, T + 120)
    done = read(hub_db, "environment", {"name": "dev"}, T + 5000, 86400)
    assert done["state"] == "healthy" and not done["head"]["stuck"] and "attention" not in done


def test_a_failure_says_what_the_promotion_did_and_a_rollback_is_named(hub_db: Database) -> None:
    _world(hub_db, on_failure="rollback", timeout=600.0)
    _report(hub_db, "c3", "failure", M, T + 100)
    failed = read(hub_db, "environment", {"name": "dev"}, T + 200, 86400)
    assert failed["state"] == "failed"
    assert failed["attention"]["did"] == (
        "Its gates fail on a failed cluster: the promotion stopped here and rolls dev back to its last"
        " healthy commit (onFailure: rollback)."
    )
    _commit(hub_db, M1, M, "a" * 40, T + 300)  # the rollback: main a... again
    for name in ("c1", "c2"):
        _report(hub_db, name, "success", M1, T + 320)
    _report(hub_db, "c3", "failure", M1, T + 330)
    again = read(hub_db, "environment", {"name": "dev"}, T + 400, 86400)
    assert again["attention"]["rolledBack"] == {"from": "b" * 40, "to": "a" * 40}
    assert again["attention"]["did"].startswith(
        f"This head is a rollback to main {'a' * 12} (from {'b' * 12})."
    )


def test_a_commit_record_carries_the_promotion_and_keeps_it(hub_db: Database) -> None:
    body = {"environment": "dev", "sha": M0, "branch": "dev", "pullRequest": PR, "run": RUN}
    body |= {"controlPlaneRepo": CONTROL, "onFailure": "rollback", "timeout": 900}
    record = commit_from_json(body)
    assert record.promotion == Promotion(PR, RUN, CONTROL, "rollback", 900.0)
    for bad, message in (
        ({"onFailure": "retry"}, "'onFailure' must be stop or rollback"),
        ({"timeout": -1}, "'timeout' must be"),
        ({"timeout": True}, "'timeout' must be"),
        (
            {"pullRequest": "https://user:pw@github.com/x/y/pull/1"},
            "'pullRequest' must be an http(s) web address",
        ),
        ({"run": "javascript:alert(1)"}, "'run' must be"),
    ):
        with pytest.raises(IngestError, match=message.replace("(", r"\(").replace(")", r"\)")):
            commit_from_json({**body, **bad})
    record_commit(hub_db, record, T)
    record_commit(hub_db, commit_from_json({"environment": "dev", "sha": M0, "branch": "dev"}), T + 1)
    with hub_db.transaction() as tx:
        row = tx.one("SELECT pull_request, run_url, on_failure, gate_timeout FROM platform_commits")
    assert tuple(row) == (PR, RUN, "rollback", 900.0)  # sent again without them: kept


def test_the_pages_say_it_and_keep_their_query(hub_db: Database) -> None:
    _world(hub_db, pull_request=PR, run=RUN, control_plane=CONTROL, on_failure="stop", timeout=600.0)
    with LiveHub(hub_db, clock=lambda: T + 900) as live:
        page = requests.get(f"{live.url}/environments/dev?staleAfter=2h&refresh=0", timeout=10).text
    assert "Stuck: 1 of 3 clusters run it\n15 min after it was recorded" in page
    assert f'<a href="{PR}">promotion PR</a>' in page and f'<a href="{RUN}">run</a>' in page
    assert "<code>promoter rollback --env dev</code> restores its last healthy commit" in page
    assert 'href="/clusters/c2?staleAfter=2h&amp;refresh=0"' in page
    assert 'href="/delivery?environment=dev&amp;staleAfter=2h&amp;refresh=0"' in page
    assert f'href="{PR}"' in page  # another site's link is left as it is


def test_the_hub_gates_failure_budget_is_shown_as_the_gate_counts_it(hub_db: Database) -> None:
    _world(hub_db, budget='{"clusterTypes": {"small": "50%"}, "maxFailures": 0}')
    _report(hub_db, "c3", "failure", M, T + 100)
    env = read(hub_db, "environment", {"name": "dev"}, T + 200, 86400)
    small = env["rollout"]["clusterTypes"]["small"]
    assert small["failed"] == 1 and small["failuresAllowed"] == 1  # 50% of 3 fresh
    assert env["head"]["failureBudget"] == {"clusterTypes": {"small": "50%"}, "maxFailures": 0}
    for bad in ({"maxFailures": "ten"}, {"maxFailures": -1}, {"other": 1}, "2"):
        with pytest.raises(IngestError, match="'failureBudget' must be"):
            commit_from_json({"environment": "dev", "sha": M0, "branch": "dev", "failureBudget": bad})
    with LiveHub(hub_db, clock=lambda: T + 200) as live:
        page = requests.get(f"{live.url}/environments/dev?refresh=0", timeout=10).text
    assert '<td class="n failed" data-label="failed">1 <small class="muted">of 1 allowed</small></td>' in page
