"""Build control planes and platform repos from dicts of files, with real git."""

from __future__ import annotations

import os
import subprocess
import textwrap
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from promoter.gitcmd import IDENTITY, Git
from promoter.platform.objects import fast_import_path

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


class Commit:
    """One commit for ``import_commits``: ``files`` (text is dedented) as the whole tree of
    ``branch``, or on top of its tree with ``keep``."""

    def __init__(
        self, branch: str, files: Mapping[str, str | bytes], message: str, keep: bool = False
    ) -> None:
        self.branch, self.files, self.message, self.keep = branch, files, message, keep


def _data(raw: bytes) -> bytes:
    return b"data %d\n%s\n" % (len(raw), raw)


def import_commits(repo: Path, commits: Sequence[Commit]) -> list[str]:
    """Make ``commits`` with one ``git fast-import`` (no working tree, no index): each a child
    of its branch's tip, which it moves; their shas. A test builds repos of many branches, and
    four git processes per commit (add, write-tree, commit-tree, update-ref) made that the
    larger part of many tests' time."""
    if not commits:
        return []
    listed = _branches(repo)
    now = f"{int(time.time())} +0000"
    who = {k: os.environ.get(k, v) for k, v in IDENTITY.items()}
    author = f"{who['GIT_AUTHOR_NAME']} <{who['GIT_AUTHOR_EMAIL']}> {now}"
    committer = f"{who['GIT_COMMITTER_NAME']} <{who['GIT_COMMITTER_EMAIL']}> {now}"
    stream, started = bytearray(), set()
    for mark, commit in enumerate(commits, 1):
        ref = f"refs/heads/{commit.branch}"
        stream += f"commit {ref}\nmark :{mark}\nauthor {author}\ncommitter {committer}\n".encode()
        stream += _data(commit.message.encode() + b"\n")  # as `git commit -m` ends it
        if ref in listed and ref not in started:
            stream += f"from {ref}^0\n".encode()
        started.add(ref)
        if not commit.keep:
            stream += b"deleteall\n"
        for path, content in commit.files.items():
            raw = content if isinstance(content, bytes) else dedent(content).encode()
            stream += f"M 100644 inline {fast_import_path(path)}\n".encode() + _data(raw)
        stream += b"\n"
    stream += b"".join(b"get-mark :%d\n" % mark for mark in range(1, len(commits) + 1))
    done = subprocess.run(
        ["git", "-C", str(repo), "fast-import", "--quiet", "--force"],
        input=bytes(stream),
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode().split()


def _branches(repo: Path) -> set[str]:
    """The branches of ``repo``, read from its files without a git process: the tests make
    thousands of repositories."""
    return {ref for ref in read_refs(repo) if ref.startswith("refs/heads/")}


def read_refs(repo: Path) -> dict[str, str]:
    """Every ref under ``refs/`` of ``repo`` (a working clone or a bare repo) and the sha it
    points at, as ``git for-each-ref`` lists them, read from the ref files as git reads them
    (a loose ref over a packed one; a symbolic ref as the ref it names), without a git process."""
    git_dir = repo / ".git" if (repo / ".git").exists() else repo
    if not (git_dir / "refs").is_dir():  # a .git file (a worktree) or a ref store of another kind
        listed = Git(repo).out("for-each-ref", "--format=%(refname) %(objectname)")
        return dict(line.split(" ", 1) for line in listed.splitlines())
    found: dict[str, str] = {}
    packed = git_dir / "packed-refs"
    if packed.exists():
        for line in packed.read_text().splitlines():
            sha, _, ref = line.partition(" ")
            if ref.startswith("refs/"):  # not the header, not a peeled "^sha" line
                found[ref] = sha
    texts = {
        p.relative_to(git_dir).as_posix(): p.read_text().strip()
        for p in (git_dir / "refs").rglob("*")
        if p.is_file() and not p.name.endswith(".lock")
    }
    for ref, text in texts.items():
        seen = {ref}
        while text.startswith("ref: "):  # symbolic: what its target points at, if anything
            target = text[5:].strip()
            if target in seen:
                break
            seen.add(target)
            text = texts.get(target) or found.get(target, "")
        if text and not text.startswith("ref: "):
            found[ref] = text
    return dict(sorted(found.items()))


class ControlPlaneFactory:
    """A control-plane repo (main + environment branches) and a bare platform repo."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / "control-plane"
        self.platform = root / "platform.git"

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
        commits = [Commit("main", main, "initial main")]
        commits += [Commit(env, files, f"{env} values") for env, files in envs.items()]
        import_commits(self.path, commits)
        seed = {"README.md": "platform\n", ".github/CODEOWNERS": "* @org/platform\n"}
        import_commits(self.platform, [Commit(b, seed, f"seed {b}") for b in platform_branches])
        subprocess.run(["git", "-C", str(self.path), "checkout", "-q", "main"], check=True)
        return self.path

    def commit(self, branch: str, files: dict[str, str], message: str, *, keep: bool = False) -> str:
        """Commit ``files`` as the whole tree of ``branch`` (or on top of it with ``keep``)."""
        # a commit to the checked-out branch moves a clean working tree along, as `git commit`
        # leaves it (promote refuses a tree that differs from its branch); edits stay as they are
        head = (self.path / ".git" / "HEAD").read_text().strip()
        synced = head == f"ref: refs/heads/{branch}" and not Git(self.path).out("status", "--porcelain")
        (sha,) = import_commits(self.path, [Commit(branch, files, message, keep)])
        if synced:
            Git(self.path).run("reset", "-q", "--hard")
        return sha

    def with_origin(self) -> Path:
        """A bare ``origin`` for the control plane (``<root>/control-plane.git``) holding every
        branch, as a team's shared control plane does; its path."""
        origin = self.root / "control-plane.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
        git = Git(self.path)
        git.run("remote", "add", operands=["origin", origin.as_uri()])
        git.run("push", "-q", operands=["origin", "refs/heads/*:refs/heads/*"])
        return origin

    def clone(self, name: str, source: Path | None = None) -> Path:
        """A teammate's fresh ``git clone`` of the control plane's origin (or of ``source``),
        beside the first (a relative ``platformRepo.url`` means the same repo from both)."""
        path = self.root / name
        origin = source or self.root / "control-plane.git"
        subprocess.run(["git", "clone", "-q", origin.as_uri(), str(path)], check=True)
        return path

    def commit_platform(self, branch: str, files: dict[str, str]) -> str:
        (sha,) = import_commits(self.platform, [Commit(branch, files, f"seed {branch}", keep=False)])
        return sha

    def refs(self) -> dict[str, str]:
        """Every ref of both repos (including notes), to assert that nothing moved."""
        out = {}
        for repo in (self.path, self.platform):
            if repo.exists():
                out.update({f"{repo.name}:{ref}": sha for ref, sha in read_refs(repo).items()})
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
