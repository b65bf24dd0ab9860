"""The platform repo: a bare local cache of it, trees written with ``git fast-import``,
pushes with compare-and-swap.

The platform repo is never checked out, and the cache is a partial clone: fetching a branch
brings its commits and trees, and blobs only when something reads them (``--filter=blob:none``;
a server that cannot filter sends everything, as before). Plans work folder by folder: a
cluster-type folder whose tree id equals the base's is left alone, so a change to one cluster
type touches one folder, whatever the size of the environment. Writing streams the folders that
changed to ``git fast-import`` in one process; a folder whose inputs rendered before is written
by its tree id (``FolderMemo``), with no blob of it read or rendered.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import subprocess
import time
import uuid
from abc import abstractmethod
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from promoter.errors import GitError
from promoter.gitcmd import IDENTITY, Git
from promoter.masking import mask

_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the same, faster
PROVENANCE = ".promoter/promotion.yaml"
ZERO = "0" * 40
TREE_MODE = "040000"
# glibc hands freed memory back to the kernel as soon as 128 KiB are free at the top of the
# heap; git, allocating and freeing a buffer per object, then spends most of a 100,000-object
# fast-import or push in brk(). Keeping freed memory for reuse makes those 2-3 times faster.
GIT_TUNING = {"MALLOC_TRIM_THRESHOLD_": str(256 * 1024 * 1024)}
# fast-import tries each blob as a delta of the blob before it in the stream: for a tree of
# unrelated small files that costs a third of its time and saves nothing.
FAST_IMPORT_OPTIONS = ("--depth=0",)
# From this many new files, a commit writes its blobs in two processes first (see _write_blobs).
PARALLEL_BLOBS = 20_000


def blob_id(data: bytes) -> str:
    """The sha git gives a blob with these bytes (no git call)."""
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def tree_id(entries: Mapping[str, tuple[str, str]]) -> str:
    """The id git gives a tree with these entries (name -> (mode, id)); no git call."""
    items = sorted(entries.items(), key=lambda e: e[0].encode() + (b"/" if e[1][0] == TREE_MODE else b""))
    body = b"".join(
        b"%s %s\0%s" % (mode.lstrip("0").encode(), name.encode(), bytes.fromhex(sha))
        for name, (mode, sha) in items
    )
    return hashlib.sha1(b"tree %d\0%s" % (len(body), body)).hexdigest()


def files_tree_id(blobs: Mapping[str, str]) -> str:
    """The id of the tree holding these regular files (path -> blob id), folders included."""
    entries: dict[str, tuple[str, str]] = {}
    folders: dict[str, dict[str, str]] = {}
    for path, sha in blobs.items():
        head, sep, rest = path.partition("/")
        if sep:
            folders.setdefault(head, {})[rest] = sha
        else:
            entries[head] = ("100644", sha)
    for name, inside in folders.items():
        entries[name] = (TREE_MODE, files_tree_id(inside))
    return tree_id(entries)


_HEX = re.compile(r"[0-9a-f]{40}")
_LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}  # paths are names, not patterns


class FolderMemo:
    """Which tree each set of rendering inputs gave before: ``<cache>/rendered/<digest>`` holds
    the id of the folder's tree. An entry is written only once the folder rendered without error,
    so a render may skip a folder whose digest is here (rendering is deterministic)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def default(cls) -> FolderMemo:
        return cls(cache_root() / "rendered")

    def _file(self, digest: str) -> Path:
        return self.root / digest[:2] / digest

    def get(self, digest: str) -> str | None:
        try:
            value = self._file(digest).read_text().strip()
        except OSError:
            return None
        return value if _HEX.fullmatch(value) else None

    def put(self, digest: str, tree: str) -> None:
        target = self._file(digest)
        if self.get(digest) == tree:
            return
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f"{target.name}.{uuid.uuid4().hex[:8]}")
            tmp.write_text(tree + "\n")
            tmp.replace(target)
        except OSError:  # a memo is an optimisation: a read-only cache just renders again
            return


class RenderedFolders(Mapping[str, bytes]):
    """Rendered files that know their top-level folders (cluster types). ``plan`` uses a
    folder's tree from the memo, when the render did not need to produce its bytes."""

    @abstractmethod
    def folders(self) -> list[str]:
        """The top-level folders, in order."""

    @abstractmethod
    def digest(self, folder: str) -> str | None:
        """The digest of everything the folder was rendered from, if known."""

    @abstractmethod
    def known_tree(self, folder: str) -> str | None:
        """The folder's tree from the memo, when its bytes were not rendered (yet)."""

    @abstractmethod
    def folder_files(self, folder: str) -> dict[str, bytes]:
        """The folder's files (paths relative to the environment root), rendered if need be."""


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
    """The new tree of an environment, compared with the old one.

    ``entries`` lists every file; where ``trees`` names a top-level folder, its files are those
    of that tree and the folder is written whole. With ``base`` and ``touched`` (from ``plan``),
    a commit on ``base`` writes only the ``touched`` folders and ``inline`` content."""

    entries: Mapping[str, tuple[str, str]]  # path under gitops path -> (mode, blob id)
    inline: dict[str, bytes]  # new content, by path
    changes: dict[str, Change] = field(default_factory=dict)  # per first path component
    trees: dict[str, str] = field(default_factory=dict)  # top-level folder -> tree id
    base: str | None = None
    touched: frozenset[str] | None = None  # top-level names that differ from base
    remember: dict[str, str] = field(default_factory=dict)  # folder -> digest, once committed

    @property
    def changed(self) -> bool:
        return any(c.total for k, c in self.changes.items() if k != ".promoter")

    @property
    def file_count(self) -> int:
        return sum(1 for p in self.entries if not p.startswith("."))

    def explicit(self) -> dict[str, tuple[str, str]]:
        """The entries not inside a folder of ``trees`` (no git call)."""
        if isinstance(self.entries, _Listing):
            return self.entries.explicit
        return {p: e for p, e in self.entries.items() if p.split("/", 1)[0] not in self.trees}


class _Listing(Mapping[str, tuple[str, str]]):
    """Every file of a planned tree: explicit entries, and the files of whole folders listed
    from git when someone asks (committing does not need them)."""

    def __init__(
        self,
        explicit: dict[str, tuple[str, str]],
        trees: dict[str, str],
        expand: Callable[[dict[str, str]], dict[str, tuple[str, str]]],
    ) -> None:
        self.explicit = explicit
        self._trees = trees
        self._expand = expand
        self._all: dict[str, tuple[str, str]] | None = None

    def _full(self) -> dict[str, tuple[str, str]]:
        if self._all is None:
            self._all = {**self._expand(self._trees), **self.explicit}
        return self._all

    def __getitem__(self, path: str) -> tuple[str, str]:
        return self._full()[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._full())

    def __len__(self) -> int:
        return len(self._full())


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
        value = yaml.load(data, Loader=_SafeLoader)
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
        self.git = Git(self.path, extra_env={**GIT_TUNING, **(auth_env or {})})
        self._partial = False
        self._reads: dict[tuple[str, str], bytes | None] = {}
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
        if os.path.isabs(self.url) and os.path.isdir(self.url):  # a local repo: read its refs
            out = (
                Git(self.url).run("for-each-ref", "--format=%(objectname)%09%(refname)", operands=refs).stdout
            )
        else:
            out = self.git.run("ls-remote", operands=[self.url, *refs]).stdout
        found = {}
        for line in out.decode().splitlines():
            sha, _, ref = line.partition("\t")
            found[ref] = sha
        return {b: found.get(f"refs/heads/{b}") for b in branches}

    def _make_partial(self) -> None:
        """Make the cache a partial clone of ``url``: fetches leave blobs on the server until
        something reads them, and git fetches a missing blob from ``origin`` when it does."""
        if self._partial:
            return
        if (
            self.git.run("config", "--get", "remote.origin.url", check=False).stdout.decode().strip()
            != self.url
        ):
            for key, value in (
                ("remote.origin.url", self.url),
                ("remote.origin.promisor", "true"),
                ("remote.origin.partialclonefilter", "blob:none"),
                ("core.repositoryformatversion", "1"),
                ("extensions.partialclone", "origin"),
            ):
                self.git.run("config", operands=[key, value])
        self._partial = True

    def fetch(self, branches: list[str]) -> dict[str, str | None]:
        """Bring the named branches into the cache (commits and trees; blobs when read); their
        values, None when absent."""
        heads = self.remote_heads(branches)
        # What the cache's refs point at is here; anything else is fetched (asking git whether an
        # object is here would make a partial clone fetch it, and its whole history with it).
        here = set(self.git.out("for-each-ref", "--format=%(objectname)").split())
        missing = [b for b, sha in heads.items() if sha and sha not in here]
        if missing:
            self._make_partial()
            specs = [f"+refs/heads/{b}:refs/remotes/origin/{b}" for b in missing]
            self.git.run(
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                "--filter=blob:none",
                operands=["origin", *specs],
            )
        updates = "".join(f"update refs/remotes/origin/{b} {sha}\n" for b, sha in heads.items() if sha)
        if updates:
            self.git.run("update-ref", "--stdin", input=updates.encode())
        return heads

    def provenance(self, commit: str, root: str) -> dict[str, object]:
        """The provenance of the environment folder ``root`` at ``commit`` ({} when none)."""
        return parse_provenance(self.read(commit, _join(root, PROVENANCE)))

    def read(self, commit: str, path: str) -> bytes | None:
        """A file at a commit; read once per run (what a commit holds never changes)."""
        key = (commit, path)
        if not _HEX.fullmatch(commit):  # a ref name moves: read it afresh
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
        and the previous render; other files and dot-folders are kept.

        Folder by folder: a rendered folder whose tree id equals the base's is unchanged and
        costs no listing; only changed folders are compared file by file, for the summary."""
        top = self._top(base, root)
        previous = self.provenance(base, root) if base else {}
        listed = previous.get("clusterTypes")
        managed = set(cluster_types) | {
            c for c in (listed if isinstance(listed, list) else []) if isinstance(c, str)
        }
        new = self._new_folders(files, top)
        explicit: dict[str, tuple[str, str]] = {}
        inline: dict[str, bytes] = {}
        trees: dict[str, str] = {}
        for name, (mode, kind, sha) in top.items():  # kept as they are
            if name in managed or name in new.folders() or name in new.loose:
                continue
            if kind == "tree" and name != PROVENANCE.split("/")[0]:
                trees[name] = sha
            elif kind != "tree":
                explicit[name] = (mode, sha)
        explicit.update(self._promoter_folder(base, root, top))
        old_provenance = explicit.get(PROVENANCE)
        touched = {n for n in managed | new.folders() | set(new.loose) if _differs(top.get(n), new, n)}
        old_files = self._files_under(base, root, [n for n in touched if n in top])
        new_files: dict[str, tuple[str, str]] = {}  # of the touched names, for the summary
        for name in sorted(new.folders()):
            if name not in touched:  # its tree was computed, and is the base's
                trees[name] = new.trees[name]
            elif name in new.content:
                written = {p: ("100644", sha) for p, sha in new.blobs[name].items()}
                explicit.update(written)
                new_files.update(written)
                inline.update(new.content[name])
            else:  # a tree from the memo that differs from the base: written whole
                trees[name] = new.trees[name]
                new_files.update(self._tree_files(new.trees[name], name))
        for path, data in {**new.loose, PROVENANCE: provenance}.items():
            new_files[path] = explicit[path] = ("100644", blob_id(data))
            inline[path] = data
        if old_provenance is not None:
            old_files[PROVENANCE] = old_provenance
        changes = _changes(old_files, new_files)
        later = self._remember(files, new)
        listing = _Listing(explicit, trees, lambda t: self._expand(t, base, root, top))
        return TreePlan(listing, inline, changes, trees, base, frozenset(touched), later)

    def _top(self, base: str | None, root: str) -> dict[str, tuple[str, str, str]]:
        """name -> (mode, type, id) of what lies directly under ``root`` at ``base``."""
        if not base:
            return {}
        paths = [f"{root}/"] if root else []
        raw = self.git.run("ls-tree", "-z", operands=[base], paths=paths, check=False, env=_LITERAL).stdout
        out = {}
        prefix = f"{root}/" if root else ""
        for record in raw.split(b"\0"):
            if record:
                meta, _, name = record.partition(b"\t")
                mode, kind, sha = meta.decode().split(" ")
                out[name.decode("utf-8", "surrogateescape")[len(prefix) :]] = (mode, kind, sha)
        return out

    def _files_under(self, base: str | None, root: str, names: list[str]) -> dict[str, tuple[str, str]]:
        """Every file under these top-level names at ``base``, relative to ``root``, in one call."""
        if not base or not names:
            return {}
        prefix = f"{root}/" if root else ""
        paths = (f"{prefix}{n}" for n in sorted(names))
        raw = self.git.run(
            "ls-tree", "-r", "-z", "--full-tree", operands=[base], paths=list(paths), env=_LITERAL
        ).stdout
        return {path[len(prefix) :]: (mode, sha) for mode, sha, path in _ls_records(raw)}

    def _tree_files(self, tree: str, name: str) -> dict[str, tuple[str, str]]:
        raw = self.git.run("ls-tree", "-r", "-z", operands=[tree]).stdout
        return {f"{name}/{path}": (mode, sha) for mode, sha, path in _ls_records(raw)}

    def _promoter_folder(
        self, base: str | None, root: str, top: Mapping[str, tuple[str, str, str]]
    ) -> dict[str, tuple[str, str]]:
        """The files of ``.promoter/`` at base (the provenance among them), kept file by file."""
        folder = PROVENANCE.split("/")[0]
        if folder not in top or top[folder][1] != "tree":
            return {}
        return self._tree_files(top[folder][2], folder)

    def _expand(
        self, trees: dict[str, str], base: str | None, root: str, top: Mapping[str, tuple[str, str, str]]
    ) -> dict[str, tuple[str, str]]:
        same = [n for n, t in trees.items() if n in top and top[n][2] == t]
        out = self._files_under(base, root, same)
        for name, tree in trees.items():
            if name not in same:
                out.update(self._tree_files(tree, name))
        return out

    def _new_folders(
        self, files: Mapping[str, bytes], top: Mapping[str, tuple[str, str, str]]
    ) -> _NewFolders:
        """The rendered folders: by tree id from the memo where their bytes were not rendered
        (and the tree is in this cache), else by their bytes, with the tree id computed where
        the base has a folder of that name to compare it with."""
        new = _NewFolders({}, {}, {}, {})
        if isinstance(files, RenderedFolders):
            known = {f: files.known_tree(f) for f in files.folders()}
            present = self._present([t for t in known.values() if t])
            for folder, tree in known.items():
                if tree and tree in present:
                    new.trees[folder] = tree
                else:
                    new.content[folder] = files.folder_files(folder)
        else:
            for path, data in files.items():
                head, sep, _ = path.partition("/")
                if sep:
                    new.content.setdefault(head, {})[path] = data
                else:
                    new.loose[path] = data
        for folder, content in new.content.items():
            new.blobs[folder] = {p: blob_id(d) for p, d in content.items()}
            if folder in top:
                new.trees[folder] = files_tree_id(
                    {p[len(folder) + 1 :]: b for p, b in new.blobs[folder].items()}
                )
        return new

    def _present(self, objects: list[str]) -> set[str]:
        if not objects:
            return set()
        raw = self.git.run("cat-file", "--batch-check", input="\n".join(objects).encode() + b"\n").stdout
        return {line.split(" ")[0] for line in raw.decode().splitlines() if not line.endswith(" missing")}

    def _remember(self, files: Mapping[str, bytes], new: _NewFolders) -> dict[str, str]:
        """Record the trees of folders rendered now (their inputs rendered without error); the
        digests of those whose tree id is known only once committed."""
        if not isinstance(files, RenderedFolders):
            return {}
        memo = FolderMemo.default()
        later = {}
        for folder in new.content:
            digest = files.digest(folder)
            if digest and folder in new.trees:
                memo.put(digest, new.trees[folder])
            elif digest:
                later[folder] = digest
        return later

    def commit(self, plan: TreePlan, root: str, parents: list[str], message: str) -> str:
        """Write the planned tree as a commit with ``parents`` (the first is the base); its sha.

        On the base it was planned against, only the touched folders and new content are
        written; otherwise the whole tree under ``root`` (whole folders by tree id)."""
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
        explicit = plan.explicit()
        trees = plan.trees
        on_base = plan.touched is not None and bool(parents) and parents[0] == plan.base
        if parents:
            chunks.append(f"from {parents[0]}\n".encode())
            chunks.extend(f"merge {p}\n".encode() for p in parents[1:])
            if on_base:
                assert plan.touched is not None
                chunks.extend(f"D {_fi_path(_join(root, n))}\n".encode() for n in sorted(plan.touched))
                trees = {n: t for n, t in trees.items() if n in plan.touched}
                explicit = {
                    p: e
                    for p, e in explicit.items()
                    if p in plan.inline or p.split("/", 1)[0] in plan.touched
                }
            else:
                chunks.append(f"D {root}\n".encode() if root else b"deleteall\n")
        inline = {p: plan.inline[p] for p in explicit if p in plan.inline}
        if len(inline) >= PARALLEL_BLOBS and _cpus() >= 2:
            self._write_blobs(list(inline.values()))
            inline = {}  # written: the commit names them by id
        for name in sorted(trees):
            chunks.append(f"M {TREE_MODE} {trees[name]} {_fi_path(_join(root, name))}\n".encode())
        for path in sorted(explicit):
            mode, sha = explicit[path]
            target = _fi_path(_join(root, path))
            data = inline.get(path)
            if data is None:
                chunks.append(f"M {mode} {sha} {target}\n".encode())
            else:
                chunks.append(
                    f"M {mode} inline {target}\n".encode() + b"data %d\n" % len(data) + data + b"\n"
                )
        stream = b"".join(chunks)
        self.git.run("fast-import", "--quiet", "--date-format=raw", *FAST_IMPORT_OPTIONS, input=stream)
        sha = self.git.out("rev-parse", "--verify", operands=[ref])
        self.git.delete_ref(ref)
        if plan.remember:  # the trees of folders that were new: git knows their ids now
            written = self._top(sha, root)
            memo = FolderMemo.default()
            for folder, digest in plan.remember.items():
                if written.get(folder, ("", "", ""))[1] == "tree":
                    memo.put(digest, written[folder][2])
        return sha

    def _write_blobs(self, contents: list[bytes]) -> None:
        """Write many blobs with two fast-import processes at once: compressing them is most of
        a big commit's cost, and it is the part that splits."""
        half = len(contents) // 2
        streams = [
            b"".join(b"blob\ndata %d\n%s\n" % (len(data), data) for data in part)
            for part in (contents[:half], contents[half:])
        ]

        def write(stream: bytes) -> None:
            self.git.run("fast-import", "--quiet", *FAST_IMPORT_OPTIONS, input=stream)

        with ThreadPoolExecutor(2) as pool:
            list(pool.map(write, streams))

    def merge(self, base: str, head: str, message: str) -> str:
        """A real merge of ``head`` into ``base`` (as a forge would); GitError on conflict."""
        proc = self.git.run("merge-tree", "--write-tree", "--no-messages", operands=[base, head], check=False)
        if proc.returncode != 0:
            raise GitError(
                f"merging {head[:12]} into {base[:12]} conflicts; resolve it or rerun the promotion"
            )
        tree = proc.stdout.decode().split()[0]
        return self.git.out("commit-tree", "-p", base, "-p", head, "-m", message, operands=[tree])

    def push(self, updates: Mapping[str, tuple[str | None, str | None]]) -> None:
        """Atomically set ``branch -> (old, new)`` on the remote, each only if still at old.

        ``new`` None deletes the branch; ``old`` None requires it to be absent.
        """
        args = ["push", "--quiet", "--atomic", "--porcelain"]
        specs = []
        for branch, (old, new) in updates.items():
            args.append(f"--force-with-lease=refs/heads/{branch}:{old or ''}")
            specs.append(f"{new or ''}:refs/heads/{branch}")
        proc = self.git.run(*args, operands=[self.url, *specs], check=False)
        if proc.returncode != 0:
            detail = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip().splitlines()
            reason = next(
                (ln for ln in detail if "rejected" in ln or "stale" in ln or "error" in ln),
                detail[-1] if detail else "",
            )
            raise GitError(mask(f"push of {', '.join(updates)} to {self.url} was refused: {reason.strip()}"))
        for branch, (_, new) in updates.items():
            if new:
                self.git.run("update-ref", operands=[f"refs/remotes/origin/{branch}", new])
            else:
                self.git.delete_ref(f"refs/remotes/origin/{branch}")


@dataclass
class _NewFolders:
    trees: dict[str, str]  # folder -> tree id, where known
    content: dict[str, dict[str, bytes]]  # folder -> its files (path under root -> bytes), when rendered
    blobs: dict[str, dict[str, str]]  # folder -> blob id of each of those files
    loose: dict[str, bytes]  # rendered files at the top level

    def folders(self) -> set[str]:
        return set(self.trees) | set(self.content)


def _differs(old: tuple[str, str, str] | None, new: _NewFolders, name: str) -> bool:
    """Does the top-level ``name`` change (managed folders are replaced by what was rendered)?"""
    if name in new.loose:
        return True
    tree = new.trees.get(name)
    if tree is None:  # not rendered now; or rendered, with no folder at the base to compare
        return old is not None or name in new.content
    return old is None or old[1] != "tree" or old[2] != tree


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _ls_records(raw: bytes) -> Iterator[tuple[str, str, str]]:
    """(mode, id, path) of each record of ``ls-tree -z`` output."""
    for record in raw.split(b"\0"):
        if record:
            meta, _, name = record.partition(b"\t")
            mode, _, sha = meta.decode().split(" ")
            yield mode, sha, name.decode("utf-8", "surrogateescape")


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
