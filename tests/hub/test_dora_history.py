"""History that stays written: DORA figures of a replayed history in which clusters join, fall
silent, leave and come back under the same name, and of an environment promoted in waves, on
SQLite and PostgreSQL. Every answer is worked out by hand (docs/hub.md, "Delivery figures"); the
figures of a moment, read again after everything that came later, are the same."""

from __future__ import annotations

from typing import Any

from promoter.hub import fleet, keys
from promoter.hub.commits import CommitRecord, record_commit
from promoter.hub.db import Database
from promoter.hub.fleet import Registration
from promoter.hub.ingest import ingest
from promoter.hub.reads import read
from tests.support.hub_support import flux_stream_event, register, rfc3339, sign

T0 = 1_790_000_000.0
DAY = "1d"
P = {n: f"{n}" * 40 for n in "12345"}  # prod's platform commits
MAIN = {n: "m" * 39 + n for n in "12345"}
ORDER = ("dev", "prod")
#: (hub time - T0, what, *args). Main commit n lands in dev first ("dev", n), then in prod ("prod", n).
STEPS: tuple[tuple[Any, ...], ...] = (
    (-1000, "dev", "1"),
    (-500, "register", "s1", "small"),
    (-500, "register", "l1", "large"),
    (0, "prod", "1"),
    (50, "report", "s1", "progress", "1"),  # the first reports: from these, s1 and l1 count
    (60, "report", "l1", "progress", "1"),
    (100, "report", "s1", "ok", "1"),
    (200, "report", "l1", "ok", "1"),
    (1000, "register", "s2", "small"),  # joins after P1's deployment: P1 stays deployed at 200
    (1100, "report", "s2", "ok", "1"),
    (1500, "dev", "2"),
    (1500, "register", "s3", "small"),  # never reports: holds up nothing, shown stale
    (2000, "prod", "2"),
    (2100, "report", "s1", "ok", "2"),
    (2150, "report", "s2", "ok", "2"),
    (2200, "report", "l1", "fail", "2"),  # P2 failed on l1 ...
    (2500, "report", "l1", "ok", "2"),  # ... restored after 300 s; P2 deployed
    (3000, "revoke", "l1"),  # leaves: its failure and restore stay
    (3200, "register", "l2", "large"),
    (3300, "report", "l2", "ok", "2"),  # then silent (lost at 5100, were it not revoked first)
    (3800, "dev", "3"),
    (4000, "prod", "3"),
    (4100, "report", "s1", "ok", "3"),
    (4200, "report", "s2", "ok", "3"),  # P3 waits for the silent l2
    (4500, "revoke", "s3"),
    (5000, "revoke", "l2"),  # P3 deployed now, at the revocation
    (5500, "register", "l1", "large"),  # the name registered again: counted from its next report
    (5600, "report", "l1", "ok", "3"),
    (5900, "dev", "4"),
    (6000, "prod", "4"),
    (6100, "report", "s1", "ok", "4"),
    (6150, "report", "s2", "ok", "4"),
    (6300, "report", "l1", "ok", "4"),
)
TYPES = {"s1": "small", "s2": "small", "s3": "small", "l1": "large", "l2": "large"}
#: Between their reports, the clusters that are up heartbeat (a Flux Kustomization's, every 10
#: minutes, says again what it said last): a cluster that says nothing for 30 minutes is lost
#: (fleet.LOST_AFTER). l2 falls silent at 3300 and is revoked at 5000, before it would be lost
#: (5100); s3 never reports.
BEATING = {"s1": ((100, 7000),), "s2": ((1100, 7000),), "l1": ((200, 3000), (5600, 7000))}
BEAT = 600
REPLAY = sorted(
    (
        *STEPS,
        *((t, "beat", c) for c, spans in BEATING.items() for a, b in spans for t in range(a + BEAT, b, BEAT)),
    ),
    key=lambda step: step[0],
)
KEYS = (
    "deployments",
    "deploymentFrequencyPerDay",
    "leadTimeSeconds",
    "changes",
    "failedChanges",
    "changeFailureRate",
    "restores",
    "timeToRestoreSeconds",
)


def _figures(
    deployments: int, lead: float | None, changes: int, failed: int, restore: float | None
) -> dict[str, Any]:
    return dict(
        zip(
            KEYS,
            (deployments, float(deployments), lead, changes, failed, round(failed / changes, 6),
             1 if restore else 0, restore),
            strict=True,
        )
    )  # fmt: skip


# Worked out by hand, in a window of a day ending at each moment (deployment times, then lead times):
# at 2700: prod deploys P1 at 200 (l1, the last of s1 and l1: s2 came later), P2 at 2500 (l1's
#   restore; s3 never reported) -> leads 1200, 1000; small P1 at 100, P2 at 2150 -> 1100, 650;
#   large P1 at 200, P2 at 2500 -> 1200, 1000. P2 failed on l1, restored after 300 s.
AT_2700 = {
    "prod": _figures(2, 1100.0, 2, 1, 300.0),
    "small": _figures(2, 875.0, 2, 0, None),
    "large": _figures(2, 1100.0, 2, 1, 300.0),
}
# at 4800: P3 (recorded at 4000) reached s1 and s2 (4100, 4200) but not l2, which counts (it
#   reported at 3300, silent for less than 30 minutes since): prod still has 2 deployments, 3
#   changes; small deploys P3 at 4200 (lead 400);
#   no large cluster reported P3 yet, so it is no change of large's.
AT_4800 = {
    "prod": _figures(2, 1100.0, 3, 1, 300.0),
    "small": _figures(3, 650.0, 3, 0, None),
    "large": _figures(2, 1100.0, 2, 1, 300.0),
}
# at 10000: l2's revocation at 5000 deploys P3 to prod then (lead 1200); P4 at 6300 (400). Large
#   had no cluster counted from 5000 (l2 revoked) to 5600 (l1's first report of its second
#   registration): P3 is deployed to it at 5600 (lead 1800), P4 at 6300 (400); small P4 at 6150 (250).
AT_10000 = {
    "prod": _figures(4, 1100.0, 4, 1, 300.0),
    "small": _figures(4, 525.0, 4, 0, None),
    "large": _figures(4, 1100.0, 4, 1, 300.0),
}


REASONS = {"ok": "ReconciliationSucceeded", "fail": "HealthCheckFailed", "progress": "Progressing"}


def _post(db: Database, key: str, cluster: str, cluster_type: str, state: str, sha: str, at: float) -> None:
    reason = REASONS[state]
    body, extra = flux_stream_event(
        "Kustomization", "platform", reason, f"{reason} at {at - T0:.0f}", rfc3339(at),
        severity="error" if state == "fail" else "info", revision=f"prod@sha1:{sha}",
        alert_metadata={"cluster": cluster, "clusterType": cluster_type, "environment": "prod"},
    )  # fmt: skip
    headers = {"content-type": "application/json", "x-signature": sign(body, key), **extra}
    ingest(db, "flux", cluster, headers, body, at)


def _step(db: Database, cluster_keys: dict[str, str], step: tuple[Any, ...]) -> None:
    at, what, *args = step
    if what == "beat":  # the cluster's latest report, said again
        step = next(s for s in reversed(STEPS) if s[0] < at and s[1] == "report" and s[2] == args[0])
        what, args = "report", [*step[2:]]
    when = T0 + at
    if what == "dev":
        record_commit(
            db, CommitRecord("dev", "d" * 39 + args[0], "dev", None, MAIN[args[0]], order=ORDER), when
        )
    elif what == "prod":
        parent = P[str(int(args[0]) - 1)] if args[0] != "1" else None
        record_commit(db, CommitRecord("prod", P[args[0]], "prod", parent, MAIN[args[0]], order=ORDER), when)
    elif what == "register":
        cluster_keys[args[0]] = register(db, args[0], "prod", args[1], when)
    elif what == "revoke":
        keys.revoke(db, args[0], now=when)
    else:
        _post(db, cluster_keys[args[0]], args[0], TYPES[args[0]], args[1], P[args[2]], when)


def _delivery(db: Database, at: float) -> dict[str, Any]:
    return read(db, "delivery", {"environment": "prod", "window": DAY}, T0 + at, 1800)["environments"][0]


def _answers(delivery: dict[str, Any]) -> dict[str, dict[str, Any]]:
    types = delivery["clusterTypes"]
    return {"prod": {k: delivery[k] for k in KEYS}, **{t: {k: types[t][k] for k in KEYS} for t in types}}


def test_figures_judge_each_moment_against_the_clusters_registered_then(hub_db: Database) -> None:
    cluster_keys: dict[str, str] = {}
    seen: dict[float, dict[str, Any]] = {}
    for step in REPLAY:
        for moment in (2700, 4800):
            if step[0] > moment and moment not in seen:  # the figures as they were read then
                seen[moment] = _delivery(hub_db, moment)
        _step(hub_db, cluster_keys, step)
    assert _answers(seen[2700]) == AT_2700
    assert _answers(seen[4800]) == AT_4800
    assert _answers(_delivery(hub_db, 10000)) == AT_10000
    # Everything that came after a moment (registrations, revocations, a lost cluster, a name
    # registered again) leaves that moment's figures as they were, per cluster type and trend too.
    for moment, then in seen.items():
        assert _delivery(hub_db, moment) == then
    with hub_db.transaction(write=False) as tx:  # l1's two registrations, each with its first report
        l1 = [r for r in fleet.registrations(tx, "prod") if r.cluster == "l1"]
    assert l1 == [
        Registration("l1", "large", T0 - 500, T0 + 3000, T0 + 60),
        Registration("l1", "large", T0 + 5500, None, T0 + 5600),
    ]


def test_a_cluster_that_never_reported_is_stale_and_holds_up_no_deployment(hub_db: Database) -> None:
    cluster_keys: dict[str, str] = {}
    for step in (s for s in REPLAY if s[0] <= 2500):
        _step(hub_db, cluster_keys, step)
    stale = read(hub_db, "stale", {"environment": "prod"}, T0 + 2700, 1800)
    assert [c["name"] for c in stale] == ["s3"]
    assert _delivery(hub_db, 2700)["deployments"] == 2


# An environment promoted in waves: canary (cluster type edge), then fleet (big). Each wave lands a
# platform commit of its own, carrying the same main commit; each records which main commit every
# cluster type's folder holds.
WAVES = (
    # (recorded at - T0, sha, wave, main, {cluster type: main its folder holds}, reaches: {cluster: at})
    (0, "1", "canary", "1", {"edge": "1", "big": None}, {"e1": 100, "b1": 120}),
    (1000, "2", "fleet", "1", {"edge": "1", "big": "1"}, {"e1": 1100, "b1": 1200}),
    (2000, "3", "canary", "2", {"edge": "2", "big": "1"}, {"e1": 2100, "b1": 2150}),
    (3000, "4", "fleet", "2", {"edge": "2", "big": "2"}, {"e1": 3100, "b1": 3300}),
    # The canary wave of main commit 3 fails on e1 (b1, whose folder it left alone, reconciles it):
    # the promotion stops there, so main commit 3 never reaches the fleet.
    (4000, "5", "canary", "3", {"edge": "3", "big": "2"}, {"b1": 4050}),
)
WAVE_TYPES = {"e1": "edge", "b1": "big"}
# By hand: prod deploys main commit 1 with its last wave (P2, at 1200: b1) and 2 with P4 (3300):
# 2 deployments, not 4; leads 2200 (first recorded at -1000) and 1800 (at 1500). Main commit 3 is a
# change that failed (on e1), not a deployment. edge deploys each with its canary wave (P1 at 100,
# P3 at 2100: leads 1100, 600; 3 changes, 1 failed); big with the fleet wave (P2, P4), and main
# commit 3, which never reached its folder, is no change of its.
WAVED = {
    "prod": {"deployments": 2, "leadTimeSeconds": 2000.0, "changes": 3, "failedChanges": 1},
    "edge": {"deployments": 2, "leadTimeSeconds": 850.0, "changes": 3, "failedChanges": 1},
    "big": {"deployments": 2, "leadTimeSeconds": 2000.0, "changes": 2, "failedChanges": 0},
}


def test_an_environment_promoted_in_waves_deploys_once_per_main_commit(hub_db: Database) -> None:
    for n, at in (("1", -1000), ("2", 1500), ("3", 3900)):
        record_commit(hub_db, CommitRecord("dev", "d" * 39 + n, "dev", None, MAIN[n], order=ORDER), T0 + at)
    cluster_keys = {name: register(hub_db, name, "prod", t, T0 - 100) for name, t in WAVE_TYPES.items()}
    for at, sha, wave, main, folders, reaches in WAVES:
        parent = P[str(int(sha) - 1)] if sha != "1" else None
        held = tuple(
            (t, "canary" if t == "edge" else "fleet", MAIN[m] if m else None) for t, m in folders.items()
        )
        record = CommitRecord(
            "prod", P[sha], "prod", parent, MAIN[main], order=ORDER, wave=wave, folders=held
        )
        record_commit(hub_db, record, T0 + at)
        for cluster, reached in sorted(reaches.items(), key=lambda r: r[1]):
            _post(hub_db, cluster_keys[cluster], cluster, WAVE_TYPES[cluster], "ok", P[sha], T0 + reached)
    _post(hub_db, cluster_keys["e1"], "e1", "edge", "fail", P["5"], T0 + 4100)
    delivery = _delivery(hub_db, 10000)
    answers = {"prod": delivery, **delivery["clusterTypes"]}
    assert {scope: {k: answers[scope][k] for k in WAVED[scope]} for scope in WAVED} == WAVED
