"""``promoter demo``: the sample control plane in fresh repos, promoted dev -> qa -> prod on the
local forge, with no network and no account."""

from __future__ import annotations

import os
import tempfile
from contextlib import ExitStack
from pathlib import Path

from promoter.cli import hub_demo
from promoter.clock import RealClock
from promoter.console import Console
from promoter.controlplane.repo import ControlPlane
from promoter.errors import UsageError
from promoter.gitcmd import Git
from promoter.promotion.flows import Orchestrator
from promoter.promotion.options import Options
from promoter.promotion.report import Report
from promoter.runtime import build_runtime


def examples_dir() -> Path:
    package = Path(__file__).resolve().parents[1]  # promoter/
    for candidate in (package.parent / "examples", package / "examples"):
        if (candidate / "control-plane" / "promoter.yaml").exists():
            return candidate
    raise UsageError("the sample control plane (examples/) is not installed with this promoter")


def commit_folder(git: Git, folder: Path, branch: str, message: str, parent: str | None = None) -> str:
    """Commit the files of ``folder`` as ``branch`` without touching any working tree."""
    index = git.path / f".promoter-demo-index-{branch.replace('/', '-')}"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        git.run(f"--work-tree={folder}", "add", "--all", "--force", paths=["."], env=env)
        tree = git.run("write-tree", env=env).stdout.decode().strip()
    finally:
        index.unlink(missing_ok=True)
    args = ["commit-tree", "-m", message] + (["-p", parent] if parent else [])
    sha = git.out(*args, operands=[tree])
    git.run("update-ref", operands=[f"refs/heads/{branch}", sha])
    return sha


def build_repos(root: Path) -> tuple[Path, Path]:
    """The control plane (main + dev/qa/prod branches) and an empty platform repo, in ``root``."""
    examples = examples_dir()
    control_plane, platform = root / "control-plane", root / "platform.git"
    for path, bare in ((control_plane, False), (platform, True)):
        Git(root).run("init", "--quiet", "--initial-branch=main", *(["--bare"] if bare else []), str(path))
    cp = Git(control_plane)
    commit_folder(cp, examples / "control-plane", "main", "Register hello-world and observability")
    for env in ("dev", "qa", "prod"):
        commit_folder(cp, examples / "environments" / env, env, f"{env}: cluster types, policies and config")
    cp.run("checkout", "--quiet", "main")
    readme = root / ".platform-seed"
    readme.mkdir(exist_ok=True)
    (readme / "README.md").write_text("Rendered by promoter. Each folder is a cluster type.\n")
    for env in ("dev", "qa", "prod"):
        commit_folder(Git(platform), readme, env, f"Start the {env} branch")
    return control_plane, platform


def _promote(cp: ControlPlane, console: Console, progress_interval: float) -> Report:
    head = cp.resolve(None)
    runtime = build_runtime(cp, cp.main(head).pipeline, console)
    options = Options(poll_interval=0.2, progress_interval=progress_interval)
    orchestrator = Orchestrator(
        cp, runtime.platform, runtime.forge, RealClock(), console, options, runtime.routes
    )
    return orchestrator.promote(head)


def run_demo(directory: Path | None, progress_interval: float = 1.0) -> Report:
    if directory is None:
        root = Path(tempfile.mkdtemp(prefix="promoter-demo-"))
    else:
        root = directory.resolve()
        if root.exists() and any(root.iterdir()):
            raise UsageError(f"--dir {directory}: not empty; choose a new or empty directory")
        root.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("PROMOTER_CACHE_DIR", str(root / ".cache"))
    console = Console()
    console.say(f"demo: building the sample control plane and platform repo in {root}")
    control_plane_path, platform_path = build_repos(root)
    with ExitStack() as stack:
        if hub_demo.available():
            hub = stack.enter_context(hub_demo.DemoHub(root, examples_dir() / "environments", platform_path))
            gated = root / ".demo-control-plane"
            hub_demo.gated_control_plane(examples_dir() / "control-plane", gated, hub.url)
            commit_folder(Git(control_plane_path), gated, "main", "Gate every environment on the hub", "main")
            Git(control_plane_path).run("reset", "--hard", "--quiet")  # the work tree shows the new main
            console.say(
                f"demo: a hub on {hub.url} with {len(hub.clusters)} simulated clusters; every environment gates on it"
            )
        else:
            console.say("demo: no hub (pip install 'promoter[hub]' to see the hub gate too)")
        report = _promote(ControlPlane(control_plane_path), console, progress_interval)
    console.say("")
    if (root / "hub.sqlite3").exists():
        console.say(
            f"demo: what the clusters reported: promoter hub status --database {root / 'hub.sqlite3'}"
        )
    console.say(f"demo: done. Look around: promoter status --control-plane {control_plane_path}")
    console.say(f"demo: the rendered manifests: git -C {platform_path} log --oneline --graph --all")
    return report
