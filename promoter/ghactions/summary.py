"""The step summary of a promote run (pure): a table of the environments and a mermaid
diagram of how far the main commit got, as GitHub renders markdown."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from promoter.clock import format_duration
from promoter.masking import mask
from promoter.promotion.report import EnvResult, Report, WaveResult
from promoter.promotion.waiting import markdown_of

_ICON = {
    "success": "✅",
    "skipped": "⏭️",
    "noop": "➖",
    "dry-run": "📝",
    "failure": "❌",
    "held": "⛔",
    "superseded": "↪️",
    "waiting": "⏳",
}


def cell(text: str) -> str:
    """Text that stays inside one markdown table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def _pr_cell(url: str | None) -> str:
    if not url:
        return "-"
    match = re.search(r"/pull/(\d+)$", url)
    if url.startswith(("https://", "http://")):
        return f"[#{match.group(1)}]({url})" if match else f"[PR]({url})"
    return f"`{cell(url)}`"


def _gates_cell(r: EnvResult) -> str:
    return "<br>".join(cell(f"{g.gate}: {g.state}") for g in r.gates) or "-"


def _wave_row(environment: str, w: WaveResult) -> str:
    """A row under its environment's: ``↳ prod wave canary (edge)``."""
    merge = f"`{w.merge_sha[:12]}`" if w.merge_sha else "-"
    gates = "<br>".join(cell(f"{g.gate}: {g.state}") for g in w.gates) or "-"
    name = cell(f"↳ {environment} wave {w.name} ({', '.join(w.cluster_types)})")
    return (
        f"| {name} | {_ICON.get(w.state, '')} {cell(w.state)} | {_pr_cell(w.pr_url)} "
        f"| {merge} | {gates} | {format_duration(w.duration)} |"
    )


_CHECK_ICON = {"success": "✅", "failure": "❌", "pending": "⏳"}


def _checks_lines(report: Report) -> list[str]:
    """``prChecks``: each environment's required PR checks, as last seen, with their links."""
    lines = []
    for r in report.results:
        if not r.checks:
            continue
        shown = [
            f"{_CHECK_ICON[c.state]} "
            + (f"[{cell(c.name)}]({c.url})" if c.url else cell(c.name))
            + f" {cell(c.detail)}"
            for c in r.checks
        ]
        lines.append(f"- **{cell(r.environment)}** PR checks: {', '.join(shown)}")
    return ["", *lines] if lines else []


def mermaid_label(text: str) -> str:
    return text.replace('"', "#quot;").replace("\n", " ")


def mermaid(
    report: Report, environments: Sequence[str], follows: Mapping[str, Sequence[str]] | None = None
) -> str:
    """A left-to-right chart: the main commit, then each environment coloured by its result,
    after the one before it or, with ``follows`` (a graph Pipeline), after those it follows."""
    results = {r.environment: r for r in report.results}
    # the scheduling flow touches one environment: the others are not part of it
    whole = report.flow == "promotion" and environments
    names = list(environments) if whole else [r.environment for r in report.results]
    lines = ["```mermaid", "flowchart LR", f'  commit["main {report.main_commit[:7]}"]']
    nodes = {name: f"env{i}" for i, name in enumerate(names)}
    graph = follows if whole else None
    for i, name in enumerate(names):
        edges = [f"  {b} --> env{i}" for b in _before(i, name, nodes, graph)]
        lines += _mermaid_node(i, name, results.get(name), edges)
    lines += [
        "  classDef ok fill:#dafbe1,stroke:#1a7f37,color:#1f2328",
        "  classDef bad fill:#ffebe9,stroke:#cf222e,color:#1f2328",
        "  classDef idle fill:#f6f8fa,stroke:#8c959f,color:#57606a",
        "  classDef wait fill:#fff8c5,stroke:#9a6700,color:#1f2328",
        "```",
    ]
    return "\n".join(lines)


def _before(
    i: int, name: str, nodes: Mapping[str, str], follows: Mapping[str, Sequence[str]] | None
) -> list[str]:
    """The nodes the ``i``-th environment comes after: those it follows (a graph), else the one
    before it; the commit for the first."""
    if follows is not None:
        return [nodes[u] for u in follows.get(name, ()) if u in nodes] or ["commit"]
    return [f"env{i - 1}" if i else "commit"]


def _mermaid_node(i: int, name: str, r: EnvResult | None, edges: list[str]) -> list[str]:
    """The ``i``-th environment's node (a box of waves, for one rolled out in waves) and edges."""
    if r is not None and r.waves:
        return [*_mermaid_waves(f"env{i}", r), *edges]
    state = r.state if r else "not run"
    return [
        f'  env{i}["{mermaid_label(name)}<br>{mermaid_label(state)}"]',
        *edges,
        f"  class env{i} {_mermaid_class(state)}",
    ]


def _mermaid_waves(node: str, r: EnvResult) -> list[str]:
    """An environment rolled out in waves: a box of its waves, in order, each coloured."""
    lines = [
        f'  subgraph {node}["{mermaid_label(r.environment)}: {mermaid_label(r.state)}"]',
        "    direction LR",
    ]
    for j, w in enumerate(r.waves):
        types = mermaid_label(", ".join(w.cluster_types))
        lines.append(f'    {node}w{j}["{mermaid_label(w.name)}: {types}<br>{mermaid_label(w.state)}"]')
        if j:
            lines.append(f"    {node}w{j - 1} --> {node}w{j}")
    lines.append("  end")
    lines += [f"  class {node}w{j} {_mermaid_class(w.state)}" for j, w in enumerate(r.waves)]
    return lines


def _mermaid_class(state: str) -> str:
    if state in ("success", "skipped", "noop", "dry-run"):
        return "ok"
    if state == "waiting":
        return "wait"
    return "idle" if state == "not run" else "bad"


def _result_row(r: EnvResult) -> str:
    merge = f"`{r.merge_sha[:12]}`" if r.merge_sha else "-"
    return (
        f"| {cell(r.environment)} | {_ICON.get(r.state, '')} {cell(r.state)} | {_pr_cell(r.pr_url)} "
        f"| {merge} | {_gates_cell(r) if not r.waves else '-'} | {format_duration(r.duration)} |"
    )


def _notes(report: Report) -> list[str]:
    """What each environment that did not succeed says, under the table."""
    notes = [r for r in report.results if r.message and not r.ok]
    if not notes:
        return []
    return [
        "",
        *(
            f"- **{cell(r.environment)}**: {cell(r.message.removeprefix(r.environment + ': '))}"
            for r in notes
        ),
    ]


def summary_markdown(
    report: Report, environments: Sequence[str] = (), follows: Mapping[str, Sequence[str]] | None = None
) -> str:
    """The step summary of a promote run: a table of environments and a diagram (of the graph
    the environments form, with ``follows``)."""
    flow = "Promotion" if report.flow == "promotion" else "Scheduling"
    verdict = {
        "done": "done",
        "waiting": "waiting",
        "held": "held since an earlier run",
        "failed": "did not go through",
    }[report.state]
    lines = [
        f"## {flow} of `{report.main_commit[:12]}`: {verdict}",
        "",
        *markdown_of(report.wait),
        "| environment | result | PR | merge commit | gates | duration |",
        "| --- | --- | --- | --- | --- | ---: |",
    ]
    for r in report.results:
        lines += [_result_row(r), *(_wave_row(r.environment, w) for w in r.waves)]
    lines += _checks_lines(report) + _notes(report)
    lines += ["", mermaid(report, environments, follows), ""]
    return mask("\n".join(lines))
