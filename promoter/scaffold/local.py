"""``promoter init --local DIR``: a first day without GitHub. The same starter control plane
``init --skeleton`` writes, committed as a real control-plane repo (``DIR/control-plane``: main
and one branch per environment) beside a bare platform repo (``DIR/platform.git``) whose
environment branches exist, so a person can merge a promotion by hand; ready for ``promote`` on
the local forge (docs/getting-started.md). Moving to GitHub is pushing both and writing the
workflows (docs/getting-started.md#moving-to-github)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from promoter.errors import UsageError
from promoter.gitcmd import Git
from promoter.scaffold import skeleton
from promoter.scaffold.workflows import Follows

CONTROL_PLANE, PLATFORM = "control-plane", "platform.git"
#: The platform repo's first file, on every environment branch.
README = "Rendered by promoter: one folder per cluster type, one branch per environment.\n"
#: A soak short enough to watch on a first day (the GitHub skeleton's is 5m).
SOAK = "5s"
#: Who commits the starter files where git has no user configured.
AUTHOR = {"GIT_AUTHOR_NAME": "promoter init", "GIT_AUTHOR_EMAIL": "promoter@localhost"}


def make(root: Path, environments: tuple[str, ...], follows: Follows, main: str) -> tuple[Path, Path]:
    """Both repos under ``root`` (which must be missing or empty); their paths."""
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise UsageError(f"--local {root}: exists and is not an empty folder; nothing made")
    try:
        return _make(root, environments, follows, main)
    except BaseException:
        shutil.rmtree(root / CONTROL_PLANE, ignore_errors=True)  # nothing half-made
        shutil.rmtree(root / PLATFORM, ignore_errors=True)
        raise


def _make(root: Path, environments: tuple[str, ...], follows: Follows, main: str) -> tuple[Path, Path]:
    control, platform = root / CONTROL_PLANE, root / PLATFORM
    control.mkdir(parents=True)
    cp = Git(control)
    cp.run("init", "--quiet", f"--initial-branch={main}")
    who = _author(cp)
    url = os.path.relpath(platform, control)
    files = skeleton.for_main(environments, url, follows, soak=SOAK)
    _commit(cp, main, files, "Pipeline, a workload and a config schema (promoter init --local)", who)
    for env in environments:
        files = skeleton.for_environment(env)
        _commit(cp, env, files, f"{env}: a cluster type, scheduling and config (promoter init --local)", who)
    cp.run("reset", "--quiet", "--hard")  # HEAD is main already: its files into the working tree
    bare = Git(root)
    bare.run("init", "--quiet", "--bare", f"--initial-branch={main}", operands=[str(platform)])
    seed = _commit(Git(platform), main, {"README.md": README}, "Start the platform repo", who)
    for env in environments:
        Git(platform).run("update-ref", operands=[f"refs/heads/{env}", seed])
    return control, platform


def _author(git: Git) -> Mapping[str, str]:
    """The user's git identity where configured, else promoter's."""
    if git.run("config", "user.email", check=False).returncode == 0:
        return {}
    return {
        **AUTHOR,
        "GIT_COMMITTER_NAME": AUTHOR["GIT_AUTHOR_NAME"],
        "GIT_COMMITTER_EMAIL": AUTHOR["GIT_AUTHOR_EMAIL"],
    }


def _commit(git: Git, branch: str, files: Mapping[str, str], message: str, who: Mapping[str, str]) -> str:
    """``files`` as the whole tree of a new ``branch`` (a root commit), through a temporary index."""
    with tempfile.TemporaryDirectory(prefix="promoter-init-") as temp:
        index = {"GIT_INDEX_FILE": str(Path(temp) / "index")}
        for path, text in files.items():
            blob = git.out("hash-object", "-w", "--stdin", input=text.encode())
            git.run(
                "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=index
            )  # our own paths
        tree = git.run("write-tree", env=index).stdout.decode().strip()
    sha = (
        git.run("commit-tree", "-F", "-", operands=[tree], input=message.encode(), env=who)
        .stdout.decode()
        .strip()
    )
    git.run("update-ref", operands=[f"refs/heads/{branch}", sha])
    return sha
