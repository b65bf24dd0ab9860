"""Planning the new tree of an environment folder on the platform repo, folder by folder.

Rendered files replace the cluster-type folders of this render and the previous one (the
provenance lists those); other files and dot-folders are kept. A rendered folder whose tree id
equals the base's is unchanged and costs no listing; only changed folders are compared file by
file, for the change summary. A folder found in the renderer's memo is planned by its tree id,
with none of its bytes rendered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from promoter.errors import GitError
from promoter.gitcmd import Git
from promoter.platform.objects import Change, blob_id, changes, files_tree_id
from promoter.platform.provenance import PROVENANCE, Provenance
from promoter.rendering.memo import FolderMemo
from promoter.rendering.tree import RenderedFolders

_PROMOTER_FOLDER = PROVENANCE.split("/")[0]
Entry = tuple[str, str]  # (mode, object id)
TopEntry = tuple[str, str, str]  # (mode, type, object id)


@dataclass
class TreePlan:
    """The new tree of an environment, compared with the old one.

    ``entries`` lists every file; where ``trees`` names a top-level folder, its files are those
    of that tree and the folder is written whole. With ``base`` and ``touched``, a commit on
    ``base`` writes only the ``touched`` folders and ``inline`` content."""

    entries: Mapping[str, Entry]  # path under gitops path -> (mode, blob id)
    inline: dict[str, bytes]  # new content, by path
    changes: dict[str, Change] = field(default_factory=dict)  # per first path component
    trees: dict[str, str] = field(default_factory=dict)  # top-level folder -> tree id
    base: str | None = None
    touched: frozenset[str] | None = None  # top-level names that differ from base
    remember: dict[str, str] = field(default_factory=dict)  # folder -> digest, once committed

    @property
    def changed(self) -> bool:
        return any(c.total for k, c in self.changes.items() if k != _PROMOTER_FOLDER)

    @property
    def file_count(self) -> int:
        return sum(1 for p in self.entries if not p.startswith("."))

    def explicit(self) -> dict[str, Entry]:
        """The entries not inside a folder of ``trees`` (no git call)."""
        if isinstance(self.entries, Listing):
            return self.entries.explicit
        return {p: e for p, e in self.entries.items() if p.split("/", 1)[0] not in self.trees}


class Listing(Mapping[str, Entry]):
    """Every file of a planned tree: explicit entries, and the files of whole folders listed
    from git when someone asks (committing does not need them)."""

    def __init__(
        self,
        explicit: dict[str, Entry],
        trees: dict[str, str],
        expand: Callable[[dict[str, str]], dict[str, Entry]],
    ) -> None:
        self.explicit = explicit
        self._trees = trees
        self._expand = expand
        self._all: dict[str, Entry] | None = None

    def _full(self) -> dict[str, Entry]:
        if self._all is None:
            self._all = {**self._expand(self._trees), **self.explicit}
        return self._all

    def __getitem__(self, path: str) -> Entry:
        return self._full()[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._full())

    def __len__(self) -> int:
        return len(self._full())


@dataclass
class NewFolders:
    trees: dict[str, str]  # folder -> tree id, where known
    content: dict[str, dict[str, bytes]]  # folder -> its files (path under root -> bytes), when rendered
    blobs: dict[str, dict[str, str]]  # folder -> blob id of each of those files
    loose: dict[str, bytes]  # rendered files at the top level

    def folders(self) -> set[str]:
        return set(self.trees) | set(self.content)

    def differs(self, old: TopEntry | None, name: str) -> bool:
        """Does the top-level ``name`` change (managed folders are replaced by what was rendered)?"""
        if name in self.loose:
            return True
        tree = self.trees.get(name)
        if tree is None:  # not rendered now; or rendered, with no folder at the base to compare
            return old is not None or name in self.content
        return old is None or old[1] != "tree" or old[2] != tree


class TreeReader:
    """Listings of the platform cache's trees, each in one round trip to git."""

    def __init__(self, git: Git) -> None:
        self.git = git

    def top(self, base: str | None, root: str) -> dict[str, TopEntry]:
        """name -> (mode, type, id) of what lies directly under ``root`` at ``base``."""
        if not base:
            return {}
        prefix = f"{root}/" if root else ""
        try:
            listed = self.git.folders(base, [root])[root]
        except GitError:  # no such commit: nothing there
            return {}
        return {e.path[len(prefix) :]: (e.mode, e.type, e.sha) for e in listed}

    def files_under(self, top: Mapping[str, TopEntry], root: str, names: list[str]) -> dict[str, Entry]:
        """Every file under these names of ``top`` (what lies under ``root`` at the base),
        relative to ``root``, in git's order; the folders' trees of each depth in one round trip."""
        prefix = f"{root}/" if root else ""
        wanted = set(names)
        listed = {n: e for n, e in top.items() if n in wanted}
        below: dict[str, dict[str, Entry]] = {n: {} for n, e in listed.items() if e[1] == "tree"}
        for e in self.git.files([(f"{prefix}{n}", listed[n][2]) for n in below]):
            path = e.path[len(prefix) :]
            below[path.partition("/")[0]][path] = (e.mode, e.sha)
        out: dict[str, Entry] = {}
        for name, (mode, kind, sha) in listed.items():
            out.update(below[name] if kind == "tree" else {name: (mode, sha)})
        return out

    def assignment_folders(self, base: str | None, root: str, cluster_types: Iterable[str]) -> set[str]:
        """``<cluster-type>/<folder>`` of each folder inside these cluster types' folders at
        ``base`` (an assignment each, rendered or not by this promoter), in one round trip."""
        names = sorted(cluster_types)
        if not base or not names:
            return set()
        prefix = f"{root}/" if root else ""
        listed = self.git.folders(base, [f"{prefix}{n}" for n in names])
        return {e.path[len(prefix) :] for entries in listed.values() for e in entries if e.type == "tree"}

    def tree_files(self, tree: str, name: str) -> dict[str, Entry]:
        return {e.path: (e.mode, e.sha) for e in self.git.files([(name, tree)])}

    def promoter_folder(self, top: Mapping[str, TopEntry]) -> dict[str, Entry]:
        """The files of ``.promoter/`` at base (the provenance among them), kept file by file."""
        if _PROMOTER_FOLDER not in top or top[_PROMOTER_FOLDER][1] != "tree":
            return {}
        return self.tree_files(top[_PROMOTER_FOLDER][2], _PROMOTER_FOLDER)

    def present(self, objects: list[str]) -> set[str]:
        return self.git.present(objects) if objects else set()


class Planner:
    """Plans one environment folder's new tree against a base commit (see the module doc)."""

    def __init__(self, reader: TreeReader, memo: FolderMemo) -> None:
        self.reader = reader
        self.memo = memo

    def plan(
        self,
        base: str | None,
        root: str,
        files: Mapping[str, bytes],
        cluster_types: tuple[str, ...],
        provenance: Provenance,
        previous: Provenance | None,
        only: tuple[str, ...] | None = None,
    ) -> TreePlan:
        """With ``only`` (a wave), just those cluster-type folders are replaced by the render."""
        top = self.reader.top(base, root)
        managed = _managed(cluster_types, previous, only)
        new = self._new_folders(files, top)
        explicit, trees = _kept(top, managed, new)
        explicit.update(self.reader.promoter_folder(top))
        old_provenance = explicit.get(PROVENANCE)
        touched = {n for n in managed | new.folders() | set(new.loose) if new.differs(top.get(n), n)}
        old_files = self.reader.files_under(top, root, [n for n in touched if n in top])
        new_files = self._place(new, touched, explicit, trees)
        inline = _rendered(new, explicit)
        provenance = replace(provenance, rendered=_record(files, new, top, previous))
        for path, data in _loose(new, provenance, previous, old_provenance).items():
            new_files[path] = explicit[path] = ("100644", blob_id(data))
            inline[path] = data
        if old_provenance is not None:
            old_files[PROVENANCE] = old_provenance
            new_files.setdefault(PROVENANCE, old_provenance)
        later = self._remember(files, new)
        listing = Listing(explicit, trees, lambda t: self._expand(t, base, root, top))
        return TreePlan(
            listing, inline, changes(old_files, new_files), trees, base, frozenset(touched), later
        )

    def _place(
        self, new: NewFolders, touched: set[str], explicit: dict[str, Entry], trees: dict[str, str]
    ) -> dict[str, Entry]:
        """Put each rendered folder into the plan: whole by tree id when unchanged or known from
        the memo, file by file when rendered now. The new files of touched names, for the summary."""
        new_files: dict[str, Entry] = {}
        for name in sorted(new.folders()):
            if name not in touched:  # its tree was computed, and is the base's
                trees[name] = new.trees[name]
            elif name in new.content:
                written = {p: ("100644", sha) for p, sha in new.blobs[name].items()}
                explicit.update(written)
                new_files.update(written)
            else:  # a tree from the memo that differs from the base: written whole
                trees[name] = new.trees[name]
                new_files.update(self.reader.tree_files(new.trees[name], name))
        return new_files

    def _expand(
        self, trees: dict[str, str], base: str | None, root: str, top: Mapping[str, TopEntry]
    ) -> dict[str, Entry]:
        same = [n for n, t in trees.items() if n in top and top[n][2] == t]
        out = self.reader.files_under(top, root, same)
        for name, tree in trees.items():
            if name not in same:
                out.update(self.reader.tree_files(tree, name))
        return out

    def _new_folders(self, files: Mapping[str, bytes], top: Mapping[str, TopEntry]) -> NewFolders:
        """The rendered folders: by tree id from the memo where their bytes were not rendered
        (and the tree is in this cache), else by their bytes, with the tree id computed where
        the base has a folder of that name to compare it with."""
        new = self._from_memo(files) if isinstance(files, RenderedFolders) else _by_folder(files)
        for folder, content in new.content.items():
            new.blobs[folder] = {p: blob_id(d) for p, d in content.items()}
            if folder in top:
                new.trees[folder] = files_tree_id(
                    {p[len(folder) + 1 :]: b for p, b in new.blobs[folder].items()}
                )
        return new

    def _from_memo(self, files: RenderedFolders) -> NewFolders:
        """Each folder by the tree id the memo knows for it, where this cache holds that tree;
        by its rendered files otherwise."""
        new = NewFolders({}, {}, {}, {})
        known = {f: files.known_tree(f) for f in files.folders()}
        present = self.reader.present([t for t in known.values() if t])
        for folder, tree in known.items():
            if tree and tree in present:
                new.trees[folder] = tree
            else:
                new.content[folder] = files.folder_files(folder)
        return new

    def _remember(self, files: Mapping[str, bytes], new: NewFolders) -> dict[str, str]:
        """Record the trees of folders rendered now (their inputs rendered without error); the
        digests of those whose tree id is known only once committed."""
        if not isinstance(files, RenderedFolders):
            return {}
        later = {}
        for folder in new.content:
            digest = files.digest(folder)
            if digest and folder in new.trees:
                self.memo.put(digest, new.trees[folder])
            elif digest:
                later[folder] = digest
        return later


def _by_folder(files: Mapping[str, bytes]) -> NewFolders:
    """The rendered files by their top-level folder; those at the top are loose."""
    new = NewFolders({}, {}, {}, {})
    for path, data in files.items():
        head, sep, _ = path.partition("/")
        if sep:
            new.content.setdefault(head, {})[path] = data
        else:
            new.loose[path] = data
    return new


def _managed(
    cluster_types: tuple[str, ...], previous: Provenance | None, only: tuple[str, ...] | None
) -> set[str]:
    """The cluster-type folders the render replaces: a wave's own, else those of this render and
    of the previous one."""
    if only is not None:
        return set(only)
    return set(cluster_types) | set(previous.cluster_types if previous else ())


def _rendered(new: NewFolders, explicit: dict[str, Entry]) -> dict[str, bytes]:
    """The rendered bytes of the files the commit writes one by one."""
    return {p: d for folder in new.content.values() for p, d in folder.items() if p in explicit}


def _loose(
    new: NewFolders, provenance: Provenance, previous: Provenance | None, old_provenance: Entry | None
) -> dict[str, bytes]:
    """The rendered files at the top, and the provenance unless the tree says what it said (a
    newer record alone is no change)."""
    loose = dict(new.loose)
    if (
        old_provenance is None
        or previous is None
        or replace(previous, rendered={}) != replace(provenance, rendered={})
    ):
        loose[PROVENANCE] = provenance.text()
    return loose


def _record(
    files: Mapping[str, bytes], new: NewFolders, top: Mapping[str, TopEntry], previous: Provenance | None
) -> dict[str, str]:
    """The render memo's entries for the provenance: "<digest> <tree>" for each folder this
    render places whose tree id is known before the commit (found in the memo, or compared with
    the base's folder), and the previous record's for folders it leaves as they were. A folder
    new to the branch is recorded from the next commit on: computing its tree id here would
    cost a first promotion what it saves a cold runner."""
    record = {}
    if previous is not None:
        record = {f: e for f, e in previous.rendered.items() if f in top and e.endswith(" " + top[f][2])}
    if not isinstance(files, RenderedFolders):
        return record
    for folder in new.folders():
        digest = files.digest(folder)
        tree = new.trees.get(folder)
        if digest and tree:
            record[folder] = f"{digest} {tree}"
        else:
            record.pop(folder, None)
    return record


def _kept(
    top: Mapping[str, TopEntry], managed: set[str], new: NewFolders
) -> tuple[dict[str, Entry], dict[str, str]]:
    """What the base has under root that this render does not manage: kept as it is."""
    explicit: dict[str, Entry] = {}
    trees: dict[str, str] = {}
    for name, (mode, kind, sha) in top.items():
        if name in managed or name in new.folders() or name in new.loose:
            continue
        if kind == "tree" and name != _PROMOTER_FOLDER:
            trees[name] = sha
        elif kind != "tree":
            explicit[name] = (mode, sha)
    return explicit, trees
