"""Results of a promotion run, and the text built from them (pure functions)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from promoter.forges.base import PRCheck
from promoter.gates.runner import GateOutcome
from promoter.platform.objects import Change
from promoter.promotion.waiting import Wait

# How an environment ended: the first four count as done (``ok``).
EnvState = Literal["success", "skipped", "noop", "dry-run", "failure", "superseded", "held", "waiting"]
OK_STATES: tuple[EnvState, ...] = ("success", "skipped", "noop", "dry-run")
Flow = Literal["promotion", "scheduling"]
#: How a run ended: everything done, stopped where the promotion waits (``--wait none``), the
#: commit still held where it failed in an earlier run (nothing new happened), or failed now.
RunState = Literal["done", "waiting", "held", "failed"]


@dataclass
class WaveResult:
    """How one wave of an environment ended (an environment without waves has none)."""

    name: str
    cluster_types: list[str]
    state: EnvState
    message: str = ""
    pr_url: str | None = None
    merge_sha: str | None = None
    changes: dict[str, Change] = field(default_factory=dict)
    gates: list[GateOutcome] = field(default_factory=list)
    duration: float = 0.0

    @property
    def ok(self) -> bool:
        return self.state in OK_STATES

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "clusterTypes": self.cluster_types,
            "state": self.state,
            "message": self.message,
            "prUrl": self.pr_url,
            "mergeSha": self.merge_sha,
            "changes": {k: asdict(c) for k, c in sorted(self.changes.items())},
            "gates": [asdict(g) for g in self.gates],
            "duration": self.duration,
        }


@dataclass
class EnvResult:
    environment: str
    state: EnvState
    message: str = ""
    files: int = 0
    changes: dict[str, Change] = field(default_factory=dict)
    pr_url: str | None = None
    promotion_sha: str | None = None
    merge_sha: str | None = None
    gates: list[GateOutcome] = field(default_factory=list)
    duration: float = 0.0
    requests: int = 0
    waves: list[WaveResult] = field(default_factory=list)
    wait: Wait | None = None  # state "waiting": what for, since when
    checks: list[PRCheck] = field(default_factory=list)  # prChecks: the PR's required checks, last seen

    @property
    def ok(self) -> bool:
        return self.state in OK_STATES


@dataclass
class Report:
    flow: Flow
    main_commit: str
    results: list[EnvResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    @property
    def state(self) -> RunState:
        """``failed`` (exit 1) when an environment did not go through in this run; ``held`` when
        the commit only stays held where it failed in an earlier run; ``waiting`` when the run
        stopped where the promotion waits; ``done`` otherwise."""
        if any(not r.ok and r.state not in ("waiting", "held") for r in self.results):
            return "failed"
        if any(r.state == "held" for r in self.results):
            return "held"
        return "waiting" if self.wait else "done"

    @property
    def wait(self) -> Wait | None:
        """What the run stopped for: the approval it asked for, if any (the workflow's approval
        job is for that one), else the first environment's wait."""
        waits = [r.wait for r in self.results if r.wait]
        return next((w for w in waits if w.approval_requested), waits[0] if waits else None)

    def to_json(self) -> dict[str, Any]:
        return {
            "flow": self.flow,
            "mainCommit": self.main_commit,
            "ok": self.ok,
            "state": self.state,
            "waiting": self.wait.to_json() if self.wait else None,
            "environments": [
                {
                    **{
                        _camel(k): v
                        for k, v in asdict(r).items()
                        if k not in ("changes", "gates", "waves", "wait", "checks")
                    },
                    "changes": {k: asdict(c) for k, c in sorted(r.changes.items())},
                    "gates": [asdict(g) for g in r.gates],
                    "waves": [w.to_json() for w in r.waves],
                    "waiting": r.wait.to_json() if r.wait else None,
                    "prChecks": [c.to_json() for c in r.checks],
                }
                for r in self.results
            ],
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=True)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def came_with(main_commit: str) -> str:
    """How a run names the earlier main commit whose promotion put the content there."""
    return f"promoted with main {main_commit[:12]}"


def change_summary(changes: dict[str, Change]) -> str:
    added = sum(c.added for k, c in changes.items() if k != ".promoter")
    changed = sum(c.changed for k, c in changes.items() if k != ".promoter")
    removed = sum(c.removed for k, c in changes.items() if k != ".promoter")
    return f"+{added} ~{changed} -{removed}"


def pr_title(environment: str, main_commit: str, subject: str, wave: str = "") -> str:
    """``Promote abc1234 to prod: subject``; a wave's: ``... to prod, wave canary (1/2): ...``."""
    where = f"{environment}, {wave}" if wave else environment
    return f"Promote {main_commit[:7]} to {where}: {subject}"[:200]


def pr_body(
    *,
    environment: str,
    main_commit: str,
    main_subject: str,
    env_branch: str,
    env_commit: str,
    previous: str | None,
    changes: dict[str, Change],
    run_url: str | None = None,
    superseded: str | None = None,
    waves: list[str] | None = None,
    held: str | None = None,
    change_control: str | None = None,
) -> str:
    """The promotion PR's body: provenance, the previous environment's result, and the diff.
    ``held``: the main commits of the folders, when the scheduling flow renders each with its own."""
    lines = [
        f"Promotion of control-plane commit `{main_commit}` to **{environment}**.",
        "",
        f"- main: `{main_commit[:12]}` {main_subject}",
        f"- environment branch: `{env_branch}` at `{env_commit[:12]}`",
    ]
    if previous:
        lines.append(f"- previous environment: {previous}")
    if superseded:
        lines.append(f"- supersedes the promotion of `{superseded[:12]}`")
    if held:
        lines.append(f"- each folder rendered again with its own main commit: {held}")
    if change_control:
        lines.append(f"- change control: {change_control}")
    if run_url:
        lines.append(f"- run: {run_url}")
    if waves:
        lines += ["", "| wave | cluster types | state | gates |", "| --- | --- | --- | --- |", *waves]
    lines += ["", "| cluster type | added | changed | removed |", "| --- | ---: | ---: | ---: |"]
    for group in sorted(changes):
        if group == ".promoter":
            continue
        c = changes[group]
        lines.append(f"| {group} | {c.added} | {c.changed} | {c.removed} |")
    if all(k == ".promoter" for k in changes):
        lines.append("| (no rendered changes) | 0 | 0 | 0 |")
    return "\n".join(lines) + "\n"


def gate_report(environment: str, merge_sha: str, outcomes: list[Any], verdict: str) -> str:
    """A PR comment with every gate's last observation."""
    lines = [
        f"**{environment}** gates on `{merge_sha[:12]}`: {verdict}",
        "",
        "| gate | state | last observed |",
        "| --- | --- | --- |",
    ]
    for o in outcomes:
        message = str(getattr(o, "message", "")).replace("|", "\\|")
        lines.append(f"| {getattr(o, 'gate', o)} | {getattr(o, 'state', '')} | {message} |")
    return "\n".join(lines) + "\n"


def wave_rows(results: list[WaveResult], coming: list[tuple[str, tuple[str, ...], str]]) -> list[str]:
    """The rows of a PR body's wave table: the waves done, then this one and those to come."""
    rows = []
    for w in results:
        gates = "<br>".join(f"{g.gate}: {g.state}" for g in w.gates) or "-"
        rows.append(f"| {w.name} | {', '.join(w.cluster_types)} | {w.state} | {_cell(gates)} |")
    for name, types, state in coming:
        rows.append(f"| {name} | {', '.join(types)} | {state} | - |")
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
