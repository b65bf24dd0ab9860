"""The platform repo: a bare local cache of it, trees written with ``git fast-import``,
pushes with compare-and-swap.

The platform repo is never checked out. Reading uses ``ls-tree``/``cat-file``; writing streams
every entry of the new tree to ``git fast-import`` in one process (unchanged files by their
blob id, new content inline), so a 100,000-file environment costs about what git itself costs.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from promoter.errors import GitError
from promoter.gitcmd import IDENTITY, Git
from promoter.masking import mask

PROVENANCE = ".promoter/promotion.yaml"
ZERO = "0" * 40


def blob_id(data: bytes) -> str:
    """The sha git gives a blob with these bytes (no git call)."""
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def cache_root() -> Path:
    base = os.environ.get("PROMOTER_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "promoter"
    )
    return Path(base)


@dataclass
class Change:
    added: int = 0
    changed: int = 0
    removed: int = 0

    @property
    def total(self) -> int:
        return self.added + self.changed + self.removed


@dataclass
class TreePlan:
    """The new tree of an environment, compared with the old one."""

    entries: dict[str, tuple[str, str]]  # path under gitops path -> (mode, blob id)
    inline: dict[str, bytes]  # new content, by path
    changes: dict[str, Change] = field(default_factory=dict)  # per first path component

    @property
    def changed(self) -> bool:
        return any(c.total for k, c in self.changes.items() if k != ".promoter")

    @property
    def file_count(self) -> int:
        return sum(1 for p in self.entries if not p.startswith("."))


def provenance_text(
    *,
    pipeline: str,
    environment: str,
    main_commit: str,
    env_branch: str,
    env_commit: str,
    cluster_types: tuple[str, ...],
    files: int,
) -> bytes:
    body = {
        "apiVersion": "promoter.dev/v1alpha1",
        "kind": "Promotion",
        "pipeline": pipeline,
        "environment": environment,
        "mainCommit": main_commit,
        "environmentBranch": env_branch,
        "environmentCommit": env_commit,
        "clusterTypes": list(cluster_types),
        "files": files,
    }
    header = "# Written by promoter: the control-plane commits this tree was rendered from.\n"
    return (header + yaml.safe_dump(body, sort_keys=False)).encode()


def parse_provenance(data: bytes | None) -> dict[str, object]:
    if not data:
        return {}
    try:
        value = yaml.safe_load(data)
    except yaml.YAMLError:
        return {}
    return value if isinstance(value, dict) else {}


class PlatformRepo:
    """A bare cache of one platform repo, fetched from and pushed to ``url``."""

    def __init__(
        self, url: str, cache: Path | None = None, auth_env: Mapping[str, str] | None = None
    ) -> None:
        self.url = url
        key = hashlib.sha1(url.encode()).hexdigest()[:16]
        self.path = (cache or cache_root()) / "platform" / f"{key}.git"
        self.git = Git(self.path, extra_env=auth_env)
        self._ensure()

    def _ensure(self) -> None:
        if (self.path / "HEAD").exists():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f"{self.path.name}.{uuid.uuid4().hex[:8]}")
        subprocess.run(["git", "init", "--quiet", "--bare", str(tmp)], check=True, capture_output=True)
        Git(tmp).run("config", "gc.auto", "0")
        try:
            tmp.rename(self.path)
        except OSError:  # another process won the race; theirs is as good
            subprocess.run(["rm", "-rf", str(tmp)], check=False)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Serialise writers of this cache across processes."""
        with open(self.path / "promoter.lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # ------------------------------------------------------------ reading

    def remote_heads(self, branches: list[str]) -> dict[str, str | None]:
        """Current value of each branch on the remote (None when absent), in one round trip."""
        refs = [f"refs/heads/{b}" for b in branches]
        out = self.git.run("ls-remote", "--", self.url, *refs).stdout.decode()
        found = {}
        for line in out.splitlines():
            sha, _, ref = line.partition("\t")
            found[ref] = sha
        return {b: found.get(f"refs/heads/{b}") for b in branches}

    def fetch(self, branches: list[str]) -> dict[str, str | None]:
        """Bring the named branches into the cache; their values, None when absent."""
        heads = self.remote_heads(branches)
        missing = [
            b for b, sha in heads.items() if sha and not self.git.ok("cat-file", "-e", f"{sha}^{{commit}}")
        ]
        if missing:
            specs = [f"+refs/heads/{b}:refs/remotes/origin/{b}" for b in missing]
            self.git.run("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", self.url, *specs)
        for branch, sha in heads.items():
            if sha:
                self.git.run("update-ref", f"refs/remotes/origin/{branch}", sha)
        return heads

    def read(self, commit: str, path: str) -> bytes | None:
        return self.git.read_file(commit, path)

    def listing(self, commit: str | None, root: str) -> dict[str, tuple[str, str]]:
        """path relative to ``root`` -> (mode, blob id), for every file under root."""
        if not commit:
            return {}
        prefix = f"{root}/" if root else ""
        return {e.path[len(prefix) :]: (e.mode, e.sha) for e in self.git.ls_tree(commit, root or None)}

    # ------------------------------------------------------------ writing

    def plan(
        self,
        base: str | None,
        root: str,
        files: Mapping[str, bytes],
        cluster_types: tuple[str, ...],
        provenance: bytes,
    ) -> TreePlan:
        """The new tree under ``root``: rendered files replace the cluster-type folders of this
        and the previous render; other files and dot-folders are kept."""
        old = self.listing(base, root)
        previous = parse_provenance(self.read(base, _join(root, PROVENANCE))) if base else {}
        listed = previous.get("clusterTypes")
        managed = set(cluster_types) | {
            c for c in (listed if isinstance(listed, list) else []) if isinstance(c, str)
        }
        entries = {p: v for p, v in old.items() if p.split("/", 1)[0] not in managed and p != PROVENANCE}
        inline: dict[str, bytes] = {}
        for path, data in {**files, PROVENANCE: provenance}.items():
            sha = blob_id(data)
            entries[path] = ("100644", sha)
            if old.get(path, ("", ""))[1] != sha:
                inline[path] = data
        return TreePlan(entries, inline, _changes(old, entries))

    def commit(self, plan: TreePlan, root: str, parents: list[str], message: str) -> str:
        """Write the planned tree as a commit with ``parents`` (the first is the base); its sha."""
        ref = f"refs/promoter/tmp/{uuid.uuid4().hex}"
        stamp = f"{int(time.time())} +0000"
        who = f"{IDENTITY['GIT_COMMITTER_NAME']} <{IDENTITY['GIT_COMMITTER_EMAIL']}>"
        msg = message.encode()
        chunks: list[bytes] = [
            f"commit {ref}\nauthor {who} {stamp}\ncommitter {who} {stamp}\n".encode(),
            b"data %d\n" % len(msg),
            msg,
            b"\n",
        ]
        if parents:
            chunks.append(f"from {parents[0]}\n".encode())
            chunks.extend(f"merge {p}\n".encode() for p in parents[1:])
            chunks.append(f"D {root}\n".encode() if root else b"deleteall\n")
        for path in sorted(plan.entries):
            mode, sha = plan.entries[path]
            target = _fi_path(_join(root, path))
            data = plan.inline.get(path)
            if data is None:
                chunks.append(f"M {mode} {sha} {target}\n".encode())
            else:
                chunks.append(
                    f"M {mode} inline {target}\n".encode() + b"data %d\n" % len(data) + data + b"\n"
                )
        stream = b"".join(chunks)
        self.git.run("fast-import", "--quiet", "--date-format=raw", input=stream)
        sha = self.git.out("rev-parse", ref)
        self.git.delete_ref(ref)
        return sha

    def merge(self, base: str, head: str, message: str) -> str:
        """A real merge of ``head`` into ``base`` (as a forge would); GitError on conflict."""
        proc = self.git.run("merge-tree", "--write-tree", "--no-messages", base, head, check=False)
        if proc.returncode != 0:
            raise GitError(
                f"merging {head[:12]} into {base[:12]} conflicts; resolve it or rerun the promotion"
            )
        tree = proc.stdout.decode().split()[0]
        return self.git.out("commit-tree", tree, "-p", base, "-p", head, "-m", message)

    def push(self, updates: Mapping[str, tuple[str | None, str | None]]) -> None:
        """Atomically set ``branch -> (old, new)`` on the remote, each only if still at old.

        ``new`` None deletes the branch; ``old`` None requires it to be absent.
        """
        args = ["push", "--quiet", "--atomic", "--porcelain"]
        specs = []
        for branch, (old, new) in updates.items():
            args.append(f"--force-with-lease=refs/heads/{branch}:{old or ''}")
            specs.append(f"{new or ''}:refs/heads/{branch}")
        proc = self.git.run(*args, "--", self.url, *specs, check=False)
        if proc.returncode != 0:
            detail = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip().splitlines()
            reason = next(
                (ln for ln in detail if "rejected" in ln or "stale" in ln or "error" in ln),
                detail[-1] if detail else "",
            )
            raise GitError(mask(f"push of {', '.join(updates)} to {self.url} was refused: {reason.strip()}"))
        for branch, (_, new) in updates.items():
            if new:
                self.git.run("update-ref", f"refs/remotes/origin/{branch}", new)
            else:
                self.git.delete_ref(f"refs/remotes/origin/{branch}")


def _changes(old: Mapping[str, tuple[str, str]], new: Mapping[str, tuple[str, str]]) -> dict[str, Change]:
    changes: dict[str, Change] = {}
    for path in old.keys() | new.keys():
        group = path.split("/", 1)[0] if "/" in path else "."
        if path not in new:
            changes.setdefault(group, Change()).removed += 1
        elif path not in old:
            changes.setdefault(group, Change()).added += 1
        elif old[path] != new[path]:
            changes.setdefault(group, Change()).changed += 1
    return changes


def _join(root: str, path: str) -> str:
    return f"{root}/{path}" if root else path


def _fi_path(path: str) -> str:
    """A path as git fast-import reads it: C-style quoted when it needs to be."""
    if not any(c in path for c in '"\\\n') and not path.startswith('"'):
        return path
    escaped = path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'
