"""The platform repo: a bare local cache of it, fetched from and pushed to its URL with
compare-and-swap.

The platform repo is never checked out, and the cache is a partial clone: fetching a branch
brings its commits and trees, and blobs only when something reads them (``--filter=blob:none``;
a server that cannot filter sends everything, as before). Planning is ``platform.plan``'s,
writing ``platform.writer``'s.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, TypeVar

from promoter.errors import GitError, UsageError
from promoter.gitcmd import Git
from promoter.masking import mask
from promoter.platform.lock import cache_lock, lock_timeout
from promoter.platform.objects import is_sha, join
from promoter.platform.plan import Planner, TreePlan, TreeReader
from promoter.platform.provenance import PROVENANCE, Provenance
from promoter.platform.signing import Signer
from promoter.platform.writer import write_commit
from promoter.rendering.memo import FolderMemo, cache_root

T = TypeVar("T")

# glibc hands freed memory back to the kernel as soon as 128 KiB are free at the top of the
# heap; git, allocating and freeing a buffer per object, then spends most of a 100,000-object
# fast-import or push in brk(). Keeping freed memory for reuse makes those 2-3 times faster.
GIT_TUNING = {"MALLOC_TRIM_THRESHOLD_": str(256 * 1024 * 1024)}


class PlatformRepo:
    """A bare cache of one platform repo, fetched from and pushed to ``url``."""

    def __init__(
        self, url: str, cache: Path | None = None, auth_env: Mapping[str, str] | None = None
    ) -> None:
        self.url = url
        key = hashlib.sha1(url.encode()).hexdigest()[:16]
        self.path = (cache or cache_root()) / "platform" / f"{key}.git"
        self.git = Git(self.path, extra_env={**GIT_TUNING, **(auth_env or {})})
        self._partial = False
        self._reads: dict[tuple[str, str], bytes | None] = {}
        # refs/remotes/origin/<branch> as this process last listed or set it: a fetch of branches
        # all still there runs no git in the cache (objects are never removed from it, so a
        # commit once here stays, whatever another process does to the refs meanwhile)
        self._origin: dict[str, str] = {}
        self._local: Git | None = None  # the remote, when it is a repository on this machine
        self._ensure()
        self.reader = TreeReader(self.git)
        self.signer = Signer(self.git)  # signs what the promoter writes when git config asks

    def _ensure(self) -> None:
        if (self.path / "HEAD").exists():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f"{self.path.name}.{uuid.uuid4().hex[:8]}")
        subprocess.run(["git", "init", "--quiet", "--bare", str(tmp)], check=True, capture_output=True)
        # a new repository's config, written at once rather than by six git config processes
        with open(tmp / "config", "a", encoding="utf-8") as config:
            config.write(_config_text([("gc.auto", "0"), *self._partial_settings()]))
        try:
            tmp.rename(self.path)
        except OSError:  # another process won the race; theirs is as good (_make_partial checks it)
            shutil.rmtree(tmp, ignore_errors=True)
            return
        self._partial = True

    def _partial_settings(self) -> list[tuple[str, str]]:
        """A partial clone of ``url``: fetches leave blobs on the server until something reads
        them, and git fetches a missing blob from ``origin`` when it does."""
        return [
            ("remote.origin.url", self.url),
            ("remote.origin.promisor", "true"),
            ("remote.origin.partialclonefilter", "blob:none"),
            ("core.repositoryformatversion", "1"),
            ("extensions.partialclone", "origin"),
        ]

    @contextmanager
    def locked(
        self, say: Callable[[str], None] | None = None, timeout: float | None = None
    ) -> Iterator[None]:
        """Serialise writers of this cache across processes; a wait is said through ``say``
        and ends after ``timeout`` seconds (default $PROMOTER_LOCK_TIMEOUT, else 10m)."""
        wait = lock_timeout() if timeout is None else timeout
        with cache_lock(self.path / "promoter.lock", f"the platform cache {self.path}", wait, say):
            yield

    def remote_heads(self, branches: list[str]) -> dict[str, str | None]:
        """Current value of each branch on the remote (None when absent), in one round trip."""
        refs = [f"refs/heads/{b}" for b in branches]
        if os.path.isabs(self.url) and os.path.isdir(self.url):  # a local repo: read its refs
            if self._local is None:
                self._local = Git(self.url)
            found = self._local.ref_values(refs)
        else:
            found = {}
            for line in self.git.run("ls-remote", operands=[self.url, *refs]).stdout.decode().splitlines():
                sha, _, ref = line.partition("\t")
                found[ref] = sha
        return {b: found.get(f"refs/heads/{b}") for b in branches}

    def _make_partial(self) -> None:
        """Make a cache that an older promoter made a partial clone of ``url`` (a new one is
        made one from the start)."""
        if self._partial:
            return
        if (
            self.git.run("config", "--get", "remote.origin.url", check=False).stdout.decode().strip()
            != self.url
        ):
            for key, value in self._partial_settings():
                self.git.run("config", operands=[key, value])
        self._partial = True

    def fetch(self, branches: list[str]) -> dict[str, str | None]:
        """Bring the named branches into the cache (commits and trees; blobs when read); their
        values, None when absent."""
        heads = self.remote_heads(branches)
        present = {b: sha for b, sha in heads.items() if sha}
        if any(self._origin.get(b) != sha for b, sha in present.items()):
            self._bring(present)
        return heads

    def _bring(self, heads: dict[str, str]) -> None:
        """Fetch the branches whose heads the cache lacks, and point refs/remotes/origin/ at each."""
        # What the cache's refs point at is here; anything else is fetched (asking git whether an
        # object is here would make a partial clone fetch it, and its whole history with it).
        refs = self._cache_refs()
        here = set(refs.values())
        self._fetch_branches([b for b, sha in heads.items() if sha not in here])
        updates = "".join(
            f"update refs/remotes/origin/{b} {sha}\n"
            for b, sha in heads.items()
            if refs.get(f"refs/remotes/origin/{b}") != sha  # a ref already there stays
        )
        if updates:
            self.git.run("update-ref", "--stdin", input=updates.encode())
        self._origin.update(heads)

    def _cache_refs(self) -> dict[str, str]:
        """Every ref of the cache and what it points at; those of origin noted in ``_origin``."""
        listed = self.git.out("for-each-ref", "--format=%(refname) %(objectname)").splitlines()
        refs = dict(line.split(" ", 1) for line in listed)
        prefix = "refs/remotes/origin/"
        self._origin.update({r.removeprefix(prefix): sha for r, sha in refs.items() if r.startswith(prefix)})
        return refs

    def _fetch_branches(self, branches: list[str]) -> None:
        """Fetch ``branches`` into refs/remotes/origin/, their commits and trees (blobs when read)."""
        if not branches:
            return
        self._make_partial()
        specs = [f"+refs/heads/{b}:refs/remotes/origin/{b}" for b in branches]
        self.git.run(
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--filter=blob:none",
            operands=["origin", *specs],
        )

    def remember(self, branch: str, sha: str | None) -> None:
        """Point refs/remotes/origin/``branch`` at ``sha`` (None deletes it), as a push left it."""
        if sha:
            self.git.run("update-ref", operands=[f"refs/remotes/origin/{branch}", sha])
            self._origin[branch] = sha
        else:
            self.git.delete_ref(f"refs/remotes/origin/{branch}")
            self._origin.pop(branch, None)

    def read(self, commit: str, path: str) -> bytes | None:
        """A file at a commit; read once per run (what a commit holds never changes)."""
        key = (commit, path)
        if not is_sha(commit):  # a ref name moves: read it afresh
            return self.git.read_file(commit, path)
        if key not in self._reads:
            self._reads[key] = self.git.read_file(commit, path)
        return self._reads[key]

    def listing(self, commit: str | None, root: str) -> dict[str, tuple[str, str]]:
        """path relative to ``root`` -> (mode, blob id), for every file under root."""
        if not commit:
            return {}
        prefix = f"{root}/" if root else ""
        return {e.path[len(prefix) :]: (e.mode, e.sha) for e in self.git.ls_tree(commit, root or None)}

    def merge(self, base: str, head: str, message: str) -> str:
        """A real merge of ``head`` into ``base`` (as a forge would); GitError on conflict."""
        proc = self.git.run("merge-tree", "--write-tree", "--no-messages", operands=[base, head], check=False)
        if proc.returncode != 0:
            raise GitError(
                f"merging {head[:12]} into {base[:12]} conflicts; resolve it or rerun the promotion"
            )
        tree = proc.stdout.decode().split()[0]
        return self.signer.sign(
            self.git.out("commit-tree", "-p", base, "-p", head, "-m", message, operands=[tree])
        )

    def push(self, updates: Mapping[str, tuple[str | None, str | None]]) -> None:
        """Atomically set ``branch -> (old, new)`` on the remote, each only if still at old.

        ``new`` None deletes the branch; ``old`` None requires it to be absent.
        """
        leases = [
            f"--force-with-lease=refs/heads/{branch}:{old or ''}" for branch, (old, _) in updates.items()
        ]
        specs = [f"{new or ''}:refs/heads/{branch}" for branch, (_, new) in updates.items()]
        proc = self.git.run(
            "push", "--quiet", "--atomic", "--porcelain", *leases, operands=[self.url, *specs], check=False
        )
        if proc.returncode != 0:
            reason = _refusal(proc.stdout + proc.stderr)
            raise GitError(mask(f"push of {', '.join(updates)} to {self.url} was refused: {reason}"))
        for branch, (_, new) in updates.items():
            self.remember(branch, new)

    def start_branch(self, branch: str) -> str:
        """Make ``branch`` on the remote, where it does not exist yet: an empty first commit, so
        that a promotion built on it can be merged into it by a person (``git merge`` needs a
        branch to merge into, and histories that meet). The branch's head."""
        empty = self.git.out("mktree", input=b"")
        message = f"Start {branch}: the promoter renders it here (its first promotion comes next)"
        sha = self.finish(self.git.out("commit-tree", "-m", message, operands=[empty]))
        try:
            self.push({branch: (None, sha)})
        except GitError:
            made = self.fetch([branch])[branch]  # another run made it first
            if made is None:
                raise
            return made
        return sha

    def provenance(self, commit: str, root: str) -> Provenance | None:
        """The provenance of the environment folder ``root`` at ``commit`` (None when none). The
        render memo entries it records, for trees this cache holds, go into the memo: a runner
        with an empty cache then renders only folders whose inputs changed."""
        found = Provenance.parse(self.read(commit, join(root, PROVENANCE)))
        entries = found.memo_entries() if found else {}
        if entries:
            memo, present = FolderMemo.default(), self.reader.present(sorted(set(entries.values())))
            for digest, tree in entries.items():
                if tree in present:
                    memo.put(digest, tree)
        return found

    def plan(
        self,
        base: str | None,
        root: str,
        files: Mapping[str, bytes],
        cluster_types: tuple[str, ...],
        provenance: Provenance,
        only: tuple[str, ...] | None = None,
    ) -> TreePlan:
        """The new tree under ``root`` on ``base`` (see ``platform.plan``); with ``only``, the
        render replaces just those cluster-type folders (a wave)."""
        previous = self.provenance(base, root) if base else None
        return Planner(self.reader, FolderMemo.default()).plan(
            base, root, files, cluster_types, provenance, previous, only
        )

    def commit(self, plan: TreePlan, root: str, parents: list[str], message: str) -> str:
        """Write the planned tree as a commit (see ``platform.writer``); its sha. The trees of
        folders that were new are known now: the renderer's memo learns them."""
        sha = write_commit(self.git, plan, root, parents, message)
        if plan.remember:
            written = self.reader.top(sha, root)
            memo = FolderMemo.default()
            for folder, digest in plan.remember.items():
                if written.get(folder, ("", "", ""))[1] == "tree":
                    memo.put(digest, written[folder][2])
        return self.finish(sha)

    def sign_with(self, signer: Literal["git", "github"]) -> None:
        """Who signs the commits this repo writes (``spec.signatures.commits``): git, as git
        config asks; GitHub only for a platform repo on GitHub (``GitHubPlatformRepo``)."""
        if signer != "git":
            raise UsageError(f"{self.url}: only GitHub signs commits it makes; use signatures.commits: git")

    def finish(self, sha: str) -> str:
        """A commit the promoter wrote, made as it is pushed: signed when git config asks for it
        (``platform.signing``); its sha."""
        return self.signer.sign(sha)

    def remote_call(self, name: str, fn: Callable[[], T]) -> T:
        """``fn``, a talk with the remote beyond branches (a notes ref), as this repo's own
        fetches and pushes are made: on GitHub with a fresh token and the retry policy."""
        return fn()


def _refusal(output: bytes) -> str:
    """Why git refused a push: the line of its output naming a rejected or stale ref or an error,
    else its last line."""
    detail = output.decode("utf-8", "replace").strip().splitlines()
    reason = next(
        (ln for ln in detail if "rejected" in ln or "stale" in ln or "error" in ln),
        detail[-1] if detail else "",
    )
    return reason.strip()


def _config_text(settings: list[tuple[str, str]]) -> str:
    """``settings`` (``section.key`` or ``section.sub.key``, value) as git config file text, by
    section, values quoted and escaped as git reads them; a ``core`` section here overrides what
    ``git init`` wrote above it. No config file holds a NUL: a ValueError, as git's argv gives."""
    sections: dict[str, list[str]] = {}
    for name, value in settings:
        if "\0" in value:
            raise ValueError(f"embedded null byte in the value of {name}")
        section, _, key = name.rpartition(".")
        head, _, sub = section.partition(".")
        quoted = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        sections.setdefault(f'[{head} "{sub}"]' if sub else f"[{head}]", []).append(f'\t{key} = "{quoted}"')
    return "".join(f"{head}\n" + "".join(f"{line}\n" for line in lines) for head, lines in sections.items())
