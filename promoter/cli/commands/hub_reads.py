"""The hub's reads on the command line: each asks the hub's API (``--url``) or its database
(``--database``), and prints text or the API's own JSON (``-o json``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

import click

from promoter.cli.commands.completion import complete_environments
from promoter.clock import parse_duration
from promoter.errors import UsageError
from promoter.hub import lookup

F = TypeVar("F", bound=Callable[..., Any])

DATABASE = click.option(
    "--database",
    default=None,
    help="A SQLite file (default promoter-hub.sqlite3) or postgresql://...; or PROMOTER_HUB_DATABASE.",
)
URL = click.option("--url", default=None, help="Ask the hub at this URL instead of its database.")
OUTPUT = click.option(
    "-o",
    "--output",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text, or the API's JSON.",
)


def env_option(required: bool = False, help: str = "The environment.") -> Callable[[F], F]:
    """The environment option of every ``hub`` command: ``--env``, ``--environment`` accepted."""
    # No ``default=None``: click 8.3+ takes an explicit None default as a value, and would not
    # enforce ``required``.
    option: Callable[[F], F] = click.option(
        "--env",
        "--environment",
        "environment",
        required=required,
        help=help,
        shell_complete=complete_environments,
    )
    return option


STALE = click.option(
    "--stale-after", default="30m", show_default=True, help="A cluster silent this long is stale."
)
_HELP = {
    "status": "Each environment in the Pipeline's order and the rollout of its head per cluster type.",
    "rollout": "Rollout progress of a platform (or main) commit per cluster type.",
    "environment": "One environment, NAME: scheduled against deployed per deployment target, and its clusters.",
    "clusters": "Every registered cluster: its platform commit, how far behind, how healthy.",
    "cluster": "One cluster, NAME: its reconcilers and its latest reports.",
    "history": "Reports, newest first.",
    "discrepancies": "What differs between environments, in the Pipeline's order, and clusters off their head.",
    "drift": "Clusters not at their environment's head.",
    "stale": "Clusters silent for longer than --stale-after.",
    "failing": "Clusters failing now, longest first: since when, which reconciler, why.",
    "delivery": "The four DORA measures per environment and cluster type over --window (docs/hub.md).",
    "holds": "The holds in force, as the promoter last sent them (docs/hub.md#holds).",
}


def fetch(name: str, params: dict[str, Any], url: str | None, database: str | None, stale_after: str) -> Any:
    """The read ``name``, from the API or the database; errors as the CLI words them."""
    try:
        seconds = parse_duration(stale_after)
    except ValueError as err:
        raise UsageError(f"--stale-after: {err}") from err
    return lookup.fetch(name, params, url, database, seconds)


def _emit(data: Any, output: str, text: Callable[[Any], list[str]]) -> None:
    if output == "json":
        click.echo(json.dumps(data, indent=2))
    else:
        for line in text(data):
            click.echo(line)


def _rollout_lines(r: dict[str, Any]) -> list[str]:
    lines = [
        f"{r['environment']} {str(r['commit'])[:12]} (main {str(r.get('mainCommit') or '?')[:12]})"
        f" {r.get('state', '')}, recorded {_when(r.get('recordedAt'))}"
    ]
    for name, c in r["clusterTypes"].items():
        lines.append(
            f"  {name:<24} {c['success']:>5}/{c['total']:<5} success {c['failed']:>4} failed"
            f" {c['pending']:>4} pending {c['stale']:>4} stale  {c['percent']:>5}%"
        )
    return lines


def _cluster_lines(rows: list[dict[str, Any]]) -> list[str]:
    return [
        f"{c['name']:<30} {c['environment']:<10} {c['clusterType']:<20} {str(c['commit'] or 'none')[:12]:<12}"
        f" behind {c['behind'] if c['behind'] is not None else '?'}  {c.get('state') or '-'}"
        + ("  STALE" if c["stale"] and c.get("state") != "stale" else "")
        for c in rows
    ]


def _cluster_detail_lines(c: dict[str, Any]) -> list[str]:
    """One cluster: its summary line, then each reconciler's state, revision and message."""
    lines = _cluster_lines([c])
    if c.get("failingSince"):
        lines.append(f"  failing since {_when(c['failingSince'])}: {c.get('failingReconciler')}")
    for r in c.get("reconcilerStates", []):
        lines.append(
            f"  {r['name']:<48} {r['state']:<11} {_revision(r['revision']):<20} {_when(r['receivedAt'])}"
            + (f"  {r['message'][:120]}" if r["message"] else "")
        )
    return lines


def _revision(value: Any) -> str:
    """A commit as 12 characters; a chart version or an OCI digest as up to 20."""
    text = str(value or "-")
    return text[:12] if len(text) == 40 and all(c in "0123456789abcdef" for c in text) else text[:20]


def _when(at: Any) -> str:
    """A time as the hub holds it (its own clock), in UTC, saying so."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at)) if isinstance(at, int | float) else "never"


def _history_lines(rows: list[dict[str, Any]]) -> list[str]:
    return [
        f"{_when(h['receivedAt'])} {h['cluster']:<24} {h['reconciler']:<40}"
        f" {h['state']:<11} {str(h['revision'])[:12]} {h['reason']}"
        for h in rows
    ]


def _overview_lines(rows: list[dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    for e in rows:
        if e["rollout"]:
            lines += _rollout_lines(e["rollout"])
        else:
            lines.append(f"{e['environment']}: no platform commit recorded")
        lines += [f"  HELD: {_hold_text(h)}" for h in e.get("holds") or []]
    return lines


def _hold_text(h: dict[str, Any]) -> str:
    """``prod, wave canary: held by alice since ... until ...: incident 4711``."""
    where = f"{h['environment']}, wave {h['wave']}" if h.get("wave") else str(h["environment"])
    until = f" until {_when(h['until'])}" if h.get("until") else ""
    if h.get("origin") == "label":
        return f"{where}: held by the label promoter/hold on {h.get('url') or 'its promotion PR'}"
    return f"{where}: held by {h['by']} since {_when(h['since'])}{until}: {h['reason']}"


def _holds_lines(rows: list[dict[str, Any]]) -> list[str]:
    return [_hold_text(h) for h in rows] or ["no hold in force"]


def _environment_lines(e: dict[str, Any]) -> list[str]:
    lines = (
        _rollout_lines(e["rollout"]) if e["rollout"] else [f"{e['environment']}: no platform commit recorded"]
    )
    lines += [f"  HELD: {_hold_text(h)}" for h in e.get("holds") or []]
    for t in e["targets"]:
        lines.append(
            f"  {t['clusterType']}/{t['deploymentTarget']}: deployed on {t['deployed']} of {t['clusters']}"
        )
    return lines


def _failing_lines(rows: list[dict[str, Any]]) -> list[str]:
    return [
        f"{c['name']:<30} {c['environment']:<10} {c['clusterType']:<20} {c['badge']:<11}"
        f" since {_when(c['failingSince'])}  {c['failingReconciler']}: {str(c['failingMessage'] or '')[:120]}"
        for c in rows
    ] or ["no cluster is failing"]


def _delivery_lines(data: dict[str, Any]) -> list[str]:
    days = data["window"] / 86400
    lines = [f"over the last {days:g} days (the hub's clock):"]
    for e in data["environments"]:
        rows = [(e["environment"], e), *((f"  {t}", f) for t, f in e["clusterTypes"].items())]
        for label, f in rows:
            lines.append(
                f"{label:<24} {f['deployments']:>4} deployments ({_figure(f['deploymentFrequencyPerDay'], '/day')})"
                f"  lead time {_figure(f['leadTimeSeconds'], 's')}"
                f"  change failure rate {_figure(f['changeFailureRate'], '%')}"
                f"  time to restore {_figure(f['timeToRestoreSeconds'], 's')}"
            )
    return lines


def _figure(value: Any, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "%":
        return f"{100 * value:.0f}%"
    return f"{value:.2f}/day" if unit == "/day" else f"{value:.0f}s"


def _items(rows: list[dict[str, Any]]) -> list[str]:
    return [" ".join(f"{k}={v}" for k, v in row.items()) for row in rows] or ["none"]


def read_commands() -> list[click.Command]:
    """One command per read, all with the same source and output options."""
    specs: list[tuple[str, str, list[Any], Callable[[Any], list[str]]]] = [
        ("status", "environments", [], _overview_lines),
        (
            "rollout",
            "rollout",
            [
                env_option(required=True),
                _opt("--commit", "commit", "A platform commit (7+ characters), else a main commit.", True),
                _multi("--cluster-type", "clusterType"),
            ],
            _rollout_lines,
        ),
        (
            "environment",
            "environment",
            [click.argument("name", shell_complete=complete_environments)],
            _environment_lines,
        ),
        ("clusters", "clusters", [env_option(help="Only this environment.")], _cluster_lines),
        ("cluster", "cluster", [click.argument("name")], _cluster_detail_lines),
        (
            "history",
            "history",
            [
                _opt("--cluster", "cluster", "Only this cluster's reports."),
                env_option(help="Only this environment's reports."),
                click.option("--limit", default=50, show_default=True, help="The most reports to show."),
            ],
            _history_lines,
        ),
        ("discrepancies", "discrepancies", [], _items),
        ("drift", "drift", [env_option(help="Only this environment.")], _items),
        ("stale", "stale", [env_option(help="Only this environment.")], _items),
        ("failing", "failing", [env_option(help="Only this environment.")], _failing_lines),
        (
            "delivery",
            "delivery",
            [
                env_option(help="Only this environment."),
                click.option(
                    "--window", default="30d", show_default=True, help="Days (30d) or a duration (12h)."
                ),
            ],
            _delivery_lines,
        ),
        ("holds", "holds", [env_option(help="Only this environment.")], _holds_lines),
    ]
    return [_command(*spec) for spec in specs]


def _opt(flag: str, name: str, help: str, required: bool = False) -> Any:
    complete = complete_environments if name == "environment" else None
    return click.option(flag, name, required=required, help=help, shell_complete=complete)


def _multi(flag: str, name: str) -> Any:
    return click.option(flag, name, multiple=True, help="Only these cluster types (repeatable).")


def _command(command: str, name: str, options: list[Any], text: Callable[[Any], list[str]]) -> click.Command:
    def run(url: str | None, database: str | None, output: str, stale_after: str, **params: Any) -> None:
        _emit(fetch(name, params, url, database, stale_after), output, text)

    run.__doc__ = _HELP[command] + " Text, or the API's JSON with -o json."
    for decorator in [*options, URL, DATABASE, OUTPUT, STALE]:
        run = decorator(run)
    return click.command(command)(run)
