"""The benchmark's table and final line, and the checks that what it measured is right."""

from __future__ import annotations

from typing import Any

from benchmarks.phases import PHASES


def total(result: dict[str, Any]) -> float:
    return float(result["full"]["whole_s"])


def ratio(result: dict[str, Any]) -> float:
    return total(result) / float(result["floor"]["total_s"])


def peak(result: dict[str, Any]) -> float:
    return float(result["full"]["peak_mb"])


def check(result: dict[str, Any]) -> list[str]:
    """What must hold for the figures to mean anything."""
    problems = []
    full, inc, noop, cold = (result[k] for k in ("full", "incremental", "noop", "cold"))
    if full["report"]["state"] != "success":
        problems.append(f"full run: {full['report']['state']}: {full['report']['message']}")
    if full["report"]["files"] != result["expected_files"]:
        problems.append(
            f"full run rendered {full['report']['files']} files, expected {result['expected_files']}"
        )
    if result["floor"]["files"] != result["expected_files"]:
        problems.append(f"floor rendered {result['floor']['files']} files")
    if inc["report"]["state"] != "success" or inc["report"]["changed"] == 0:
        problems.append(f"incremental run: {inc['report']}")
    for name, run in (("no-op", noop), ("cold no-op", cold)):
        if run["report"]["state"] != "noop" or run["platform_refs_moved"]:
            problems.append(f"{name} run: {run['report']}, platform refs moved: {run['platform_refs_moved']}")
    return problems


def table(results: list[dict[str, Any]]) -> str:
    head = ["size", "files", *PHASES, "other", "total", "floor", "ratio", "cpu_s", "peak_mb"]
    rows = [head]
    for r in results:
        full = r["full"]
        rows.append(
            [
                r["size"],
                str(full["report"]["files"]),
                *(f"{full['phases'][p]:.2f}" for p in PHASES),
                f"{full['other_s']:.2f}",
                f"{total(r):.2f}",
                f"{r['floor']['total_s']:.2f}",
                f"{ratio(r):.2f}",
                f"{full['cpu_s']:.2f}",
                f"{peak(r):.0f}",
            ]
        )
    out = [_columns(rows), ""]
    rows = [
        [
            "size",
            "floor render",
            "floor fast-import",
            "incremental",
            "% of full",
            "changed",
            "no-op",
            "cold no-op",
            "cold cache KiB",
            "remote KiB",
        ]
    ]
    for r in results:
        inc, noop, cold = r["incremental"], r["noop"], r["cold"]
        rows.append(
            [
                r["size"],
                f"{r['floor']['render_s']:.2f}",
                f"{r['floor']['fast_import_s']:.2f}",
                f"{inc['whole_s']:.2f}",
                f"{100 * inc['whole_s'] / total(r):.1f}%",
                str(inc["report"]["changed"]),
                f"{noop['whole_s']:.2f}",
                f"{cold['whole_s']:.2f}",
                str(cold["cache_objects"]["kib"]),
                str(r["platform_objects"]["kib"]),
            ]
        )
    out.append(_columns(rows))
    out.append("")
    for r in results:  # every turn, so that the noise of a shared machine shows
        fulls = " ".join(f"{t:.2f}" for t in r["runs"]["full_s"])
        floors = " ".join(f"{t:.2f}" for t in r["runs"]["floor_s"])
        out.append(f"{r['size']}: full runs {fulls} s; floors {floors} s; the best of each counts")
    return "\n".join(out)


def _columns(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in rows)


def github_line(github: dict[str, Any]) -> str:
    per_env = " ".join(f"{env}={n}" for env, n in github["requests"].items())
    return f"GitHub API requests per environment promotion (fake GitHub, merge: auto): {per_env}"


def final_line(result: dict[str, Any]) -> str:
    return (
        f"size={result['size']} files={result['full']['report']['files']} total_s={total(result):.2f} "
        f"floor_s={result['floor']['total_s']:.2f} ratio={ratio(result):.2f} peak_mb={peak(result):.0f}"
    )
