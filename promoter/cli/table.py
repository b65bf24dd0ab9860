"""The table a promotion run ends with on a terminal (``promote``, ``demo``): a row per
environment and wave, and what the run stopped for."""

from __future__ import annotations

from typing import Any

import click

from promoter.promotion.prchecks import line_of
from promoter.promotion.report import change_summary
from promoter.promotion.waiting import Wait


def print_summary(report: Any) -> None:
    """The run's results, a row per environment (and per wave of one rolled out in waves)."""
    # The forge's API requests per environment, where it counts them (GitHub).
    counted = any(r.requests for r in report.results)
    click.echo("")
    click.echo(
        f"{'environment':<14}{'result':<12}{'files':>7}  {'changes':<16}{'merge commit':<14}"
        + (f"{'requests':>8}  " if counted else "")
        + "gates"
    )
    for r in report.results:
        for line in _environment_rows(r, counted):
            click.echo(line)
    if report.wait is not None:
        click.echo("")
        click.echo(waiting_line(report.wait))


def _environment_rows(r: Any, counted: bool) -> list[str]:
    """An environment's row, its PR's checks, and a row per wave of one rolled out in waves."""
    gates = "by wave:" if r.waves else _gates(r.gates)
    requests = f"{r.requests:>8}  " if counted else ""
    rows = [
        f"{r.environment:<14}{r.state:<12}{r.files:>7}  {change_summary(r.changes):<16}"
        f"{(r.merge_sha or '-')[:12]:<14}{requests}{gates}"
    ]
    rows += [f"{'':<14}PR check {line_of(check)}" for check in r.checks]  # prChecks, with their links
    return rows + [
        f"{'  ' + w.name:<14.14}{w.state:<12}{'':>7}  {change_summary(w.changes):<16}"
        f"{(w.merge_sha or '-')[:12]:<14}{' ' * 10 if counted else ''}{_gates(w.gates)}"
        for w in r.waves
    ]


def _gates(gates: Any) -> str:
    return ", ".join(f"{g.gate}: {g.state}" for g in gates) or "-"


def waiting_line(wait: Wait) -> str:
    """``waiting for gates: prod, wave canary, since ..., next check at ...``."""
    where = f"{wait.environment}, wave {wait.wave}" if wait.wave else wait.environment
    data = wait.to_json()
    after = f", next check at {data['nextCheck']}" if data["nextCheck"] else ", until an event"
    return f"waiting for {wait.waiting_for}: {where}, since {data['since']}{after} ({wait.message})"
