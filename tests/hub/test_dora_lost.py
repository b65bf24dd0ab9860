"""A cluster lost mid-history (docs/hub.md, "Delivery figures"): it falls silent, the deployments
go on without it once it has been silent for 30 minutes, it comes back and counts again from its
return; the figures of each moment, read again at the end, are those read then. On SQLite and
PostgreSQL, through ingest (the intervals in which each cluster was heard are written with its
reports); every answer worked out by hand."""

from __future__ import annotations

import math
from typing import Any

from promoter.hub import fleet
from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from tests.hub.test_dora_history import MAIN, ORDER, T0, P, _answers, _delivery, _figures, _post
from tests.support.hub_support import register

TYPES = {"a1": "small", "a2": "small", "b1": "large"}
#: (hub time - T0, what, *args): main commit n lands in dev 500 s before prod ("prod", n).
STEPS: tuple[tuple[Any, ...], ...] = (
    (-500, "register", "a1"),
    (-500, "register", "a2"),
    (-500, "register", "b1"),
    (0, "prod", "1"),
    (100, "report", "a1", "1"),
    (150, "report", "a2", "1"),  # a2's last word for a while: lost from 1950
    (200, "report", "b1", "1"),
    (1000, "prod", "2"),
    (1100, "report", "a1", "2"),
    (1200, "report", "b1", "2"),  # P2 waits for a2 until it is lost, at 1950
    (3000, "prod", "3"),
    (3100, "report", "a1", "3"),
    (3200, "report", "b1", "3"),  # P3 deployed without a2, lost
    (5000, "report", "a2", "2"),  # back, at an older commit: counts again from now
    (6000, "prod", "4"),
    (6100, "report", "a1", "4"),
    (6200, "report", "b1", "4"),  # P4 waits for a2 again
    (6500, "report", "a2", "4"),
)
#: Between their reports the clusters that are up heartbeat every 10 minutes (what they said last, again).
BEATING = {"a1": (100, 7000), "a2": (5000, 7000), "b1": (200, 7000)}
REPLAY = sorted(
    (*STEPS, *((t, "beat", c) for c, (a, b) in BEATING.items() for t in range(a + 600, b, 600))),
    key=lambda step: step[0],
)

# By hand (lead: from main commit n's record in dev, 500 s before prod's; a cluster counts from
# its first report, so P1 is deployed to prod and small with a1's, at 100):
# at 1900: a2 (silent since 150) still counts: prod and small deploy P1 at 100 (lead 600), not P2;
#   large P1 at 200 and P2 at 1200 (700 each). P1 and P2 were reported: 2 changes.
AT_1900 = {
    "prod": _figures(1, 600.0, 2, 0, None),
    "small": _figures(1, 600.0, 2, 0, None),
    "large": _figures(2, 700.0, 2, 0, None),
}
# at 3500: a2 lost from 1950 (its last report at 150, plus 30 minutes): P2 deployed then to prod
#   and small (lead 1450), P3 at 3200 (prod: 700) and 3100 (small: 600); large P3 at 3200 (700).
AT_3500 = {
    "prod": _figures(3, 700.0, 3, 0, None),
    "small": _figures(3, 600.0, 3, 0, None),
    "large": _figures(3, 700.0, 3, 0, None),
}
# at 6300: a2 is back since 5000 and has not reached P4 (recorded at 6000): prod and small wait for
#   it; large deploys P4 at 6200 (700).
AT_6300 = {
    "prod": _figures(3, 700.0, 4, 0, None),
    "small": _figures(3, 600.0, 4, 0, None),
    "large": _figures(4, 700.0, 4, 0, None),
}
# at 10000: P4 deployed to prod and small at 6500, when a2 reached it (lead 1000): medians of
#   600, 1450, 700, 1000 and of 600, 1450, 600, 1000.
AT_10000 = {
    "prod": _figures(4, 850.0, 4, 0, None),
    "small": _figures(4, 800.0, 4, 0, None),
    "large": _figures(4, 700.0, 4, 0, None),
}
ANSWERS = {1900: AT_1900, 3500: AT_3500, 6300: AT_6300}


def _step(db: Database, cluster_keys: dict[str, str], step: tuple[Any, ...]) -> None:
    at, what, *args = step
    if what == "register":
        cluster_keys[args[0]] = register(db, args[0], "prod", TYPES[args[0]], T0 + at)
    elif what == "prod":
        n = args[0]
        dev = CommitRecord("dev", "d" * 39 + n, "dev", None, MAIN[n], order=ORDER)
        record_commit(db, dev, T0 + at - 500)
        parent = P[str(int(n) - 1)] if n != "1" else None
        record_commit(db, CommitRecord("prod", P[n], "prod", parent, MAIN[n], order=ORDER), T0 + at)
    else:  # a report, or a beat: the cluster's latest report said again
        cluster = args[0]
        sha = next(s[3] for s in reversed(STEPS) if s[0] <= at and s[1] == "report" and s[2] == cluster)
        _post(db, cluster_keys[cluster], cluster, TYPES[cluster], "ok", P[sha], T0 + at)


def test_a_lost_cluster_holds_up_no_deployment_and_counts_again_from_its_return(hub_db: Database) -> None:
    cluster_keys: dict[str, str] = {}
    read_then: dict[float, dict[str, Any]] = {}
    for step in REPLAY:
        for moment in ANSWERS:
            if step[0] > moment and moment not in read_then:
                read_then[moment] = _delivery(hub_db, moment)
        _step(hub_db, cluster_keys, step)
    for moment, answers in ANSWERS.items():
        assert _answers(read_then[moment]) == answers, moment
    assert _answers(_delivery(hub_db, 10000)) == AT_10000
    # a2's silence, its return, the deployments since: each moment's figures stay as read then.
    for moment, then in read_then.items():
        assert _delivery(hub_db, moment) == then
    with hub_db.transaction(write=False) as tx:
        lost = fleet.silences(tx, "prod")
    last_beat = {c: max(t for t, _, name, *_ in REPLAY if name == c) for c in TYPES}
    assert lost == {
        "a1": [(T0 + last_beat["a1"] + 1800, math.inf)],
        "a2": [(T0 + 1950, T0 + 5000), (T0 + last_beat["a2"] + 1800, math.inf)],
        "b1": [(T0 + last_beat["b1"] + 1800, math.inf)],
    }
