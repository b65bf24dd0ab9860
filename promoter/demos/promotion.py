"""``promoter demo``: the sample control plane in fresh repos, promoted dev -> qa -> prod on the
local forge, with no network and no account."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

from promoter.clock import RealClock
from promoter.console import Console, is_terminal, terminal_width
from promoter.controlplane.repo import ControlPlane
from promoter.demos import hub as demo_hub
from promoter.errors import UsageError, shorten
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


# The lines of a run that the brief demo keeps: its own, each environment's and each wave's end,
# warnings and anything that needs a person. The rest is progress: on a terminal it shows as the
# one live line, in a log it is left out (``-v`` prints everything, as ``promote`` does).
_MILESTONE = re.compile(
    r"^(demo:|promoting |dry run|warning|error)"
    r"|^[^:\s]+: (success in|FAILED|superseded|already promoted|\d+ waves:|warning:|rolled back)"
    r"|^[^:\s]+: wave [^:]+: (passed|FAILED)"
    r"|: waiting for someone to merge"
)


class DemoConsole(Console):
    """The demo's output: one line per environment or wave step unless ``verbose``; on a
    terminal no line is wider than it."""

    def __init__(self, verbose: bool) -> None:
        super().__init__()
        self.verbose = verbose

    def say(self, line: str) -> None:
        if self.verbose:
            super().say(line)
        elif _MILESTONE.search(line):
            width = terminal_width(self._out())
            super().say(shorten(line, width - 1) if width else line)
        else:
            self.progress(line)

    def progress(self, line: str) -> None:
        if self.verbose or is_terminal(self._out()):
            super().progress(line)
        else:
            self.lines.append(line)


def promoter_command() -> str:
    """How to run this promoter again from the shell the demo ran in: ``promoter`` when that
    is what the PATH finds, else the full path of this one (a virtualenv's bin/ is rarely on PATH)."""
    script = Path(sys.argv[0]).absolute() if Path(sys.argv[0]).name == "promoter" else None
    found = shutil.which("promoter")
    if script is not None and found is not None and Path(found).absolute() == script:
        return "promoter"
    if script is not None and script.exists():
        return _shown(script)
    return f"{sys.executable} -m promoter"


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it is below it (shorter to copy)."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def next_steps(root: Path, control_plane: Path, platform: Path) -> list[str]:
    """The commands to look around after the demo, each on a line of its own under what it
    shows, so that each works as printed (copied whole, whatever the terminal's width)."""
    promoter = promoter_command()
    steps = [
        ("where each environment is", f"{promoter} status --control-plane {_shown(control_plane)}"),
        ("the rendered manifests", f"git -C {_shown(platform)} log --oneline --graph --all"),
    ]
    database = root / "hub.sqlite3"
    if database.exists():
        steps.append(
            (
                "the hub's pages, on http://127.0.0.1:8080, its clusters still reporting (Ctrl-C stops it)",
                f"{promoter} hub serve --database {_shown(database)} --demo-clusters",
            )
        )
    lines = ["", "demo: done. Next:"]
    for what, command in steps:
        lines += [f"  # {what}", f"  {command}"]
    return lines


def run_demo(directory: Path | None, progress_interval: float = 1.0, verbose: bool = True) -> Report:
    return demo_run(directory, progress_interval, verbose)[0]


def demo_run(directory: Path | None, progress_interval: float, verbose: bool) -> tuple[Report, list[str]]:
    """The demo's report, and the next steps to print after its table."""
    if directory is None:
        root = Path(tempfile.mkdtemp(prefix="promoter-demo-"))
    else:
        root = directory.resolve()
        if root.exists() and any(root.iterdir()):
            raise UsageError(f"--dir {directory}: not empty; choose a new or empty directory")
        root.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("PROMOTER_CACHE_DIR", str(root / ".cache"))
    console = DemoConsole(verbose)
    console.say(f"demo: building the sample control plane and platform repo in {_shown(root)}")
    control_plane_path, platform_path = build_repos(root)
    with ExitStack() as stack:
        if demo_hub.available():
            hub = stack.enter_context(demo_hub.DemoHub(root, examples_dir() / "environments", platform_path))
            gated = root / ".demo-control-plane"
            demo_hub.gated_control_plane(examples_dir() / "control-plane", gated, hub.url)
            commit_folder(Git(control_plane_path), gated, "main", "Gate every environment on the hub", "main")
            Git(control_plane_path).run("reset", "--hard", "--quiet")  # the work tree shows the new main
            console.say(
                f"demo: a hub for this run on {hub.url} with {len(hub.clusters)} simulated clusters; every environment gates on it"
            )
        else:
            console.say("demo: no hub (pip install 'promoter[hub]' to see the hub gate too)")
        report = _promote(ControlPlane(control_plane_path), console, progress_interval)
    return report, next_steps(root, control_plane_path, platform_path)
