"""Build control planes and platform repos from dicts of files, with real git."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from promoter.cli.demo import commit_folder
from promoter.gitcmd import Git

Env = tuple[str, dict[str, str]]


def stage(name: str, **fields: str) -> Env:
    """One Pipeline environment; each field's value is written as YAML text (flow style)."""
    return name, fields


def pipeline(*environments: str | Env, platform: str = "{url: ../platform.git}") -> str:
    """The one Pipeline builder of the tests: ``pipeline("dev", stage("qa", merge="manual"))``.

    Each environment is ``    - name: <name>`` followed by one ``      <field>: <value>`` line per
    field, so tests can address lines and patch the text as users write it."""
    lines = [
        "apiVersion: promoter.dev/v1alpha1",
        "kind: Pipeline",
        "metadata: {name: platform}",
        "spec:",
        f"  platformRepo: {platform}",
        "  environments:",
    ]
    for item in environments:
        name, fields = (item, {}) if isinstance(item, str) else item
        lines.append(f"    - name: {name}")
        lines += [f"      {key}: {value}" for key, value in fields.items()]
    return "\n".join(lines) + "\n"


PIPELINE = pipeline("dev", "qa", "prod")

WORKLOAD = """\
apiVersion: promoter.dev/v1alpha1
kind: Workload
metadata: {name: app, labels: {type: application}}
spec:
  workspace: team
  deploymentTargets:
    - {name: t, environment: dev, manifests: {repo: https://example.com/app, branch: main, path: ./dev}}
    - {name: t2, environment: qa, manifests: {repo: https://example.com/app, branch: main, path: ./qa}}
    - {name: t3, environment: prod, manifests: {repo: https://example.com/app, branch: main, path: ./prod}}
"""

ENV = """\
apiVersion: promoter.dev/v1alpha1
kind: ClusterType
metadata: {name: small, labels: {size: small}}
spec: {reconciler: flux}
---
apiVersion: promoter.dev/v1alpha1
kind: SchedulingPolicy
metadata: {name: all}
spec: {}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: defaults, labels: {platform-config: "true"}}
data: {REGION: here}
"""


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


class ControlPlaneFactory:
    """A control-plane repo (main + environment branches) and a bare platform repo."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / "control-plane"
        self.platform = root / "platform.git"
        self.count = 0

    def create(
        self,
        main: dict[str, str] | None = None,
        envs: dict[str, dict[str, str]] | None = None,
        *,
        platform_branches: tuple[str, ...] = (),
    ) -> Path:
        main = {"promoter.yaml": PIPELINE, "workloads/app.yaml": WORKLOAD} if main is None else main
        envs = {e: {"env.yaml": ENV} for e in ("dev", "qa", "prod")} if envs is None else envs
        subprocess.run(["git", "init", "-q", "-b", "main", str(self.path)], check=True)
        if not self.platform.exists():
            subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(self.platform)], check=True)
        self.commit("main", main, "initial main")
        for env, files in envs.items():
            self.commit(env, files, f"{env} values")
        for branch in platform_branches:
            self.commit_platform(
                branch, {"README.md": "platform\n", ".github/CODEOWNERS": "* @org/platform\n"}
            )
        subprocess.run(["git", "-C", str(self.path), "checkout", "-q", "main"], check=True)
        return self.path

    def _write(self, files: dict[str, str | bytes]) -> Path:
        self.count += 1
        folder = self.root / f"src{self.count}"
        folder.mkdir()
        for name, content in files.items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(dedent(content))
        return folder

    def commit(self, branch: str, files: dict[str, str], message: str, *, keep: bool = False) -> str:
        """Commit ``files`` as the whole tree of ``branch`` (or on top of it with ``keep``)."""
        git = Git(self.path)
        parent = git.commit_of(f"refs/heads/{branch}")
        if keep and parent:
            existing = {e.path: git.read_blobs([e.sha])[e.sha] for e in git.ls_tree(parent)}
            files = {**{k: v for k, v in existing.items()}, **files}  # type: ignore[dict-item]
        # a commit to the checked-out branch moves a clean working tree along, as `git commit`
        # leaves it (promote refuses a tree that differs from its branch); edits stay as they are
        head = git.run("symbolic-ref", "--quiet", "HEAD", check=False).stdout.decode().strip()
        synced = head == f"refs/heads/{branch}" and not git.out("status", "--porcelain")
        sha = commit_folder(git, self._write(files), branch, message, parent)  # type: ignore[arg-type]
        if synced:
            git.run("reset", "-q", "--hard")
        return sha

    def commit_platform(self, branch: str, files: dict[str, str]) -> str:
        git = Git(self.platform)
        parent = git.commit_of(f"refs/heads/{branch}")
        return commit_folder(git, self._write(files), branch, f"seed {branch}", parent)  # type: ignore[arg-type]

    def refs(self) -> dict[str, str]:
        """Every ref of both repos (including notes), to assert that nothing moved."""
        out = {}
        for repo in (self.path, self.platform):
            if not repo.exists():
                continue
            text = subprocess.run(
                ["git", "-C", str(repo), "for-each-ref", "--format=%(refname) %(objectname)"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            for line in text.splitlines():
                ref, sha = line.split(" ")
                out[f"{repo.name}:{ref}"] = sha
        return out

    def platform_file(self, branch: str, path: str) -> str | None:
        proc = subprocess.run(
            ["git", "-C", str(self.platform), "show", f"{branch}:{path}"], capture_output=True, text=True
        )
        return proc.stdout if proc.returncode == 0 else None

    def platform_files(self, branch: str) -> list[str]:
        proc = subprocess.run(
            ["git", "-C", str(self.platform), "ls-tree", "-r", "--name-only", branch],
            capture_output=True,
            text=True,
            check=True,
        )
        return proc.stdout.split()
