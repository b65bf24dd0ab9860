"""The control-plane repo: resolving main and environment branches, loading their objects.

Works from a full clone, a bare repo, or the shallow single-branch clone that
``actions/checkout`` makes: a branch or commit that is missing locally is fetched from
``origin`` (depth 1 is enough to read objects), and ``origin/<branch>`` is read where the
local branch does not exist.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from promoter.controlplane.documents import PIPELINE_FILE
from promoter.controlplane.loading import load_environment, load_main
from promoter.controlplane.worktree import Snapshot, snapshot
from promoter.errors import ConfigError, UsageError
from promoter.gitcmd import Git, require_branch, require_revision
from promoter.model import Environment, EnvironmentObjects, MainObjects


class ControlPlane:
    def __init__(self, path: str | Path, main_branch: str = "main", *, label: str | None = None) -> None:
        """``path``: the repo or any folder of its working tree (the repo's top is used, so a
        relative ``platformRepo.url`` means the same from anywhere); ``label``: how messages
        name it (default ``--control-plane PATH``)."""
        label = label or f"--control-plane {path}"
        self.path = Path(path)
        if not self.path.is_dir():
            raise UsageError(f"{label}: no such directory")
        self.git = Git(self.path)
        layout = self.git.layout()
        if layout is None:
            raise UsageError(f"{label}: not a git repository")
        if not layout.bare:
            if layout.top is None:  # a folder inside .git: git's own error
                self.git.out("rev-parse", "--show-toplevel")
            self.git = self.git.at_top()
            self.path = self.git.path
        self.main_branch = require_branch(main_branch, "--main-branch")
        self._main: dict[str, MainObjects] = {}
        self.pinned: dict[str, str] = {}  # branch -> commit read instead of its head (a snapshot)
        self.snapshot: Snapshot | None = None

    def read_edits(self, *, staged: bool) -> Snapshot | None:
        """Read the checked-out branch from the working tree (or the index, ``staged``) where
        control-plane files differ from its head; the snapshot, or None when nothing differs."""
        self.snapshot = snapshot(self.git, staged=staged)
        if self.snapshot is not None:
            self.pinned[self.snapshot.branch] = self.snapshot.commit
        return self.snapshot

    @cached_property
    def has_origin(self) -> bool:
        return self.git.ok("remote", "get-url", "origin")

    def _fetch(self, ref: str) -> bool:
        if not self.has_origin:
            return False
        return self.git.ok("fetch", "--quiet", "--no-tags", "--depth=1", operands=["origin", ref])

    def branch_head(self, branch: str) -> str | None:
        """The commit of ``branch``: its snapshot, else local, else origin's, else fetched."""
        if branch in self.pinned:
            return self.pinned[branch]
        for ref in (f"refs/heads/{branch}", f"refs/remotes/origin/{branch}"):
            sha = self.git.commit_of(ref)
            if sha:
                return sha
        if self._fetch(f"+refs/heads/{branch}:refs/remotes/origin/{branch}"):
            return self.git.commit_of(f"refs/remotes/origin/{branch}")
        return None

    def resolve(self, ref: str | None) -> str:
        """A full commit sha for ``ref`` (default: the main branch)."""
        if ref is None:
            sha = self.branch_head(self.main_branch)
            if sha is None:
                raise UsageError(
                    f"the control plane has no branch {self.main_branch!r} (nor origin/{self.main_branch})"
                    + self._what_it_is()
                )
            return sha
        require_revision(ref, "--commit")
        sha = self.git.commit_of(ref) or self.branch_head(ref)
        if sha is None and self._fetch(ref):
            sha = self.git.commit_of(ref)
        if sha is None:
            raise UsageError(f"--commit {ref}: no such commit or branch in {self.path}")
        return sha

    def _platform_branches(self, branches: list[str]) -> str:
        """What makes the repo a platform repo, said: its promotion branches, else its rendered
        branches; empty when it has neither."""
        promotions = [b for b in branches if b.startswith("promoter/")]
        if promotions:
            return f"promotion branches {', '.join(promotions[:3])}"
        rendered = self._holding(branches, ".promoter/promotion.yaml")
        return f"rendered branches {', '.join(rendered[:3])}" if rendered else ""

    def _holding(self, branches: list[str], path: str) -> list[str]:
        """The ``branches`` whose head holds file ``path``."""
        return [b for b in branches if self.git.read_file(f"refs/heads/{b}", path)]

    def _what_it_is(self) -> str:
        """A hint for a repo without the main branch: a platform repo given as the control plane,
        or the Pipeline on a branch of another name."""
        listing = self.git.run(
            "for-each-ref", "--format=%(refname:short)", operands=["refs/heads"], check=False
        )
        branches = listing.stdout.decode("utf-8", "replace").split()[:100]  # the error path: bounded
        found = self._platform_branches(branches)
        if found:
            return (
                f"; {self.path} is a platform repo ({found}), where the promoter pushes: "
                "--control-plane names the repo with the Pipeline (promoter.yaml on main)"
            )
        pipelines = self._holding(branches, "promoter.yaml")
        if pipelines:
            return f"; its Pipeline (promoter.yaml) is on {pipelines[0]}: --main-branch {pipelines[0]}"
        return ""

    def main(self, commit: str) -> MainObjects:
        if commit not in self._main:
            self._main[commit] = load_main(self.git, commit)
        return self._main[commit]

    def env_head(self, env: Environment) -> str:
        sha = self.branch_head(env.branch)
        if sha is None:
            raise ConfigError(
                f"environment {env.name!r}: branch {env.branch!r} does not exist in the control-plane repo",
                file=PIPELINE_FILE,
                line=env.source.line,
            )
        return sha

    def environment(self, env: Environment, commit: str | None = None) -> EnvironmentObjects:
        return load_environment(self.git, env.branch, commit or self.env_head(env))

    @cached_property
    def origin_url(self) -> str | None:
        if not self.has_origin:
            return None
        return self.git.out("remote", "get-url", operands=["origin"]) or None
