"""``python -m benchmarks [--sizes S,M,L] [--work DIR]``: generate, measure, print the table.

For each size: a synthetic control plane and platform repo (``benchmarks.generate``), the
other environments' platform branches filled with their full trees, then, each in a process
of its own: the full promotion to dev and the floor, in turns, best of ``--repeat`` (the
machine is shared: the quietest turn is the one that says most about the code), then an
incremental change, a no-op, and the no-op again with a cold cache. The last line sums up the largest size:
``size=L files=<n> total_s=<t> floor_s=<f> ratio=<t/f> peak_mb=<m>``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform as host
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import wave_gap
from benchmarks.generate import SIZES, change_one_cluster_type, fill_platform, generate
from benchmarks.report import check, final_line, github_line, table


def git_environment(work: Path) -> dict[str, str]:
    """Git isolated from the user's configuration, as the tests isolate it."""
    config = work / "gitconfig"
    config.write_text('[init]\n\tdefaultBranch = main\n[protocol "file"]\n\tallow = always\n')
    return {
        "GIT_CONFIG_GLOBAL": str(config),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "Bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
    }


def child(kind: str, root: Path, cache: Path) -> dict[str, Any]:
    env = {**os.environ, "PROMOTER_CACHE_DIR": str(cache)}
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.measure", kind, str(root)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"benchmark {kind} in {root} failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return result


def run_size(name: str, work: Path, repeat: int) -> dict[str, Any]:
    size = SIZES[name]
    root = work / name
    shutil.rmtree(root, ignore_errors=True)
    start = time.perf_counter()
    generated = generate(root, size)
    for env in ("qa", "prod"):
        fill_platform(generated, env)
    out: dict[str, Any] = {"size": name, "expected_files": size.files, "setup_s": time.perf_counter() - start}
    # The full run and the floor, in turns, best of ``repeat``: each full run starts from the
    # same repos (refs put back) and an empty cache.
    initial = {repo: _refs(repo) for repo in (generated.control_plane, generated.platform)}
    fulls, floors = [], []
    for turn in range(repeat):
        if turn:
            for repo, saved in initial.items():
                _restore(repo, saved)
        fulls.append(child("full", root, root / f"cache-{turn}"))
        floors.append(child("floor", root, root / f"cache-{turn}"))
    out["full"] = min(fulls, key=lambda r: float(r["whole_s"]))
    out["floor"] = min(floors, key=lambda r: float(r["total_s"]))
    out["runs"] = {"full_s": [r["whole_s"] for r in fulls], "floor_s": [r["total_s"] for r in floors]}
    warm, cold = root / f"cache-{repeat - 1}", root / "cache-cold"
    change_one_cluster_type(generated, "dev")
    out["incremental"] = child("incremental", root, warm)
    before = _refs(generated.platform)
    out["noop"] = child("noop", root, warm)
    out["noop"]["platform_refs_moved"] = _refs(generated.platform) != before
    out["cold"] = child("cold", root, cold)
    out["cold"]["platform_refs_moved"] = _refs(generated.platform) != before
    out["platform_objects"] = _objects(generated.platform)
    return out


def _restore(repo: Path, saved: dict[str, str]) -> None:
    for ref in set(_refs(repo)) - set(saved):
        subprocess.run(["git", "-C", str(repo), "update-ref", "-d", ref], check=True)
    for ref, sha in saved.items():
        subprocess.run(["git", "-C", str(repo), "update-ref", ref, sha], check=True)


def _refs(repo: Path) -> dict[str, str]:
    from benchmarks.scenarios import refs

    return refs(repo)


def _objects(repo: Path) -> dict[str, int]:
    from benchmarks.scenarios import objects_in

    return objects_in(repo)


def machine() -> str:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    git = subprocess.run(["git", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    return f"{host.machine()} {cpus} CPUs, Python {host.python_version()}, {git}, {host.platform()}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="S,M,L", help="comma-separated sizes: S, M, L")
    parser.add_argument("--work", default=None, help="where to build the repos (default: a temp dir)")
    parser.add_argument("--json", default=None, help="also write every figure to this file")
    parser.add_argument(
        "--repeat", type=int, default=3, help="full runs and floors per size; the best counts"
    )
    args = parser.parse_args(argv)
    names = [s.strip().upper() for s in args.sizes.split(",") if s.strip()]
    unknown = [n for n in names if n not in SIZES]
    if unknown:
        parser.error(f"unknown size {', '.join(unknown)}; known: {', '.join(SIZES)}")
    if args.work:
        Path(args.work).mkdir(parents=True, exist_ok=True)
        return run(names, Path(args.work), args)
    with tempfile.TemporaryDirectory(prefix="promoter-bench-") as work:  # a few hundred MB at L
        return run(names, Path(work), args)


def run(names: list[str], work: Path, args: argparse.Namespace) -> int:
    os.environ.update(git_environment(work))
    print(f"machine: {machine()}")
    print(f"work: {work}")
    print(f"load average before: {_load()}")
    results = []
    for name in names:
        result = run_size(name, work, max(1, args.repeat))
        problems = check(result)
        if problems:
            raise SystemExit(f"size {name}: " + "; ".join(problems))
        results.append(result)
    github = child("github", work / "github", work / "github" / "cache")
    gap = child("wave-gap", work / "wave-gap", work / "wave-gap" / "cache")
    print(f"load average after: {_load()}")
    if args.json:
        figures = {"machine": machine(), "results": results, "github": github, "waveGap": gap}
        Path(args.json).write_text(json.dumps(figures, indent=2))
    print(table(results))
    print(github_line(github))
    print(wave_gap.line(gap))
    late = [k for k in ("local", "github") if gap[f"{k}_s"] >= gap[f"{k}_limit_s"]]
    if late:
        raise SystemExit(f"the gap between waves is over its limit on {', '.join(late)}")
    print(final_line(results[-1]))
    return 0


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    raise SystemExit(main())
