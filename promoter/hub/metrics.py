"""``GET /metrics``: the hub's own counters, each environment's rollout state and the four DORA
measures, in Prometheus' text exposition format (version 0.0.4).

The counters live in the database (table ``counters``), so every hub process of one database
answers the same totals: acknowledged reports are counted in the transaction that stores them;
refusals are counted in memory and written with the process's next batch or scrape.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from promoter.hub import dora, holds
from promoter.hub.db import Database, Tx
from promoter.hub.queries import environment_names, head
from promoter.hub.rollout import find_commit, rollout

RECEIVED = "promoter_hub_reports_received_total"
REFUSED = "promoter_hub_reports_refused_total"
STATES = ("success", "failed", "pending", "stale")


class Counters:
    """Increments waiting to be written (thread-safe): ``add``, then ``flush`` in a transaction."""

    def __init__(self) -> None:
        self._pending: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def add(self, name: str, labels: dict[str, str], n: int = 1) -> None:
        key = (name, _labels(labels))
        with self._lock:
            self._pending[key] = self._pending.get(key, 0) + n

    def flush(self, tx: Tx) -> None:
        """Write the pending increments in ``tx``; if it fails they are kept for the next one."""
        with self._lock:
            taken, self._pending = self._pending, {}
        try:
            for (name, labels), n in sorted(taken.items()):
                tx.run(
                    "INSERT INTO counters (name, labels, value) VALUES (?, ?, ?) ON CONFLICT (name, labels)"
                    " DO UPDATE SET value = counters.value + excluded.value",
                    (name, labels, n),
                )
        except Exception:
            with self._lock:
                for key, n in taken.items():
                    self._pending[key] = self._pending.get(key, 0) + n
            raise


def _labels(labels: dict[str, str]) -> str:
    return ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _sample(name: str, labels: dict[str, str], value: float | int | None) -> str | None:
    if value is None:
        return None
    text = _labels(labels)
    return f"{name}{{{text}}} {value}" if text else f"{name} {value}"


def _family(name: str, kind: str, help_text: str, samples: Iterable[str | None]) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", *(s for s in samples if s)]


_DORA = (
    (
        "deployments",
        "promoter_hub_dora_deployments",
        "Deployments finished in the window (docs/hub.md#delivery-figures).",
    ),
    (
        "deploymentFrequencyPerDay",
        "promoter_hub_dora_deployment_frequency_per_day",
        "Deployments finished in the window, per day.",
    ),
    (
        "leadTimeSeconds",
        "promoter_hub_dora_lead_time_seconds",
        "Median time from the hub's first record of a main commit to its deployment here.",
    ),
    (
        "changeFailureRate",
        "promoter_hub_dora_change_failure_ratio",
        "Share of the platform commits recorded in the window that failed or were rolled back.",
    ),
    (
        "timeToRestoreSeconds",
        "promoter_hub_dora_time_to_restore_seconds",
        "Median time from a cluster's first failing report to its recovery, over spells ended in the window.",
    ),
)


def exposition(db: Database, now: float, stale_after: float, window: float, counters: Counters) -> str:
    """The whole ``/metrics`` text."""
    with db.transaction() as tx:
        counters.flush(tx)
    with db.transaction(write=False) as tx:
        counted = tx.rows("SELECT name, labels, value FROM counters ORDER BY name, labels")
        rollouts, delivery = _rollouts(tx, now, stale_after), _delivery(tx, now, window)
        held = holds.in_force(tx, now)
    lines = [
        *_counted(counted),
        *_rollout_lines(rollouts, window),
        *_held_lines(held),
        *_dora_lines(delivery),
    ]
    return "\n".join(lines) + "\n"


def _held_lines(held: list[dict[str, Any]]) -> list[str]:
    return _family(
        "promoter_hub_holds",
        "gauge",
        'Holds in force, by environment and wave ("": the whole environment); 1 each.',
        (
            _sample("promoter_hub_holds", {"environment": h["environment"], "wave": h["wave"] or ""}, 1)
            for h in held
        ),
    )


def _counted(counted: list[Any]) -> list[str]:
    return [
        *_family(
            RECEIVED,
            "counter",
            "Reports acknowledged, by sender and outcome (stored, unchanged, duplicate).",
            (f"{n}{{{lb}}} {v}" for n, lb, v in counted if n == RECEIVED),
        ),
        *_family(
            REFUSED,
            "counter",
            "Deliveries refused, by sender and HTTP status.",
            (f"{n}{{{lb}}} {v}" for n, lb, v in counted if n == REFUSED),
        ),
    ]


def _rollout_lines(rollouts: list[tuple[str, str, dict[str, Any]]], window: float) -> list[str]:
    return [
        *_family(
            "promoter_hub_rollout_clusters",
            "gauge",
            "Clusters of each environment's head rollout, by cluster type and state.",
            (
                _sample(
                    "promoter_hub_rollout_clusters", {"environment": e, "cluster_type": t, "state": s}, c[s]
                )
                for e, t, c in rollouts
                for s in STATES
            ),
        ),
        *_family(
            "promoter_hub_rollout_percent",
            "gauge",
            "Percent of the fresh clusters that run the head, healthy.",
            (
                _sample("promoter_hub_rollout_percent", {"environment": e, "cluster_type": t}, c["percent"])
                for e, t, c in rollouts
            ),
        ),
        *_family(
            "promoter_hub_dora_window_seconds",
            "gauge",
            "The window the DORA measures cover.",
            [_sample("promoter_hub_dora_window_seconds", {}, window)],
        ),
    ]


def _dora_lines(delivery: list[dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    for key, name, help_text in _DORA:
        samples = []
        for figures in delivery:
            env = figures["environment"]
            samples.append(_sample(name, {"environment": env}, figures[key]))
            samples += [
                _sample(name, {"environment": env, "cluster_type": t}, f[key])
                for t, f in figures["clusterTypes"].items()
            ]
        lines += _family(name, "gauge", help_text, samples)
    return lines


def _rollouts(tx: Tx, now: float, stale_after: float) -> list[tuple[str, str, dict[str, Any]]]:
    out = []
    for env in environment_names(tx):
        top = head(tx, env)
        if top is None:
            continue
        commit = find_commit(tx, env, top["commit"])
        progress = rollout(tx, env, commit.sha, now, stale_after, with_times=False)
        out += [(env, t, c) for t, c in progress["clusterTypes"].items()]
    return out


def _delivery(tx: Tx, now: float, window: float) -> list[dict[str, Any]]:
    return [dora.measures(tx, env, now, window) for env in environment_names(tx)]
