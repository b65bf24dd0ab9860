"""A thin, fast wrapper around the git CLI.

Everything the promoter does to a repository goes through here: reading objects at a commit
with no checkout, writing trees with ``git fast-import``, compare-and-swap ref updates and
pushes. Failures become GitError with git's own message (masked) and the command.

Option injection: a value that comes from a user (a ref, a branch, a URL, a path) never goes
into ``*args``. ``run`` takes it as an ``operand`` (placed after ``--end-of-options``) or a
``path`` (placed after ``--``), so git never reads it as an option, whatever it starts with.
Refs and branch names are checked with git's own rules (``git check-ref-format``).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from promoter import gitbatch, trace
from promoter.errors import GitError, UsageError
from promoter.gitbatch import BatchReader, TreeEntry, Unavailable
from promoter.gitlayout import ASK_LAYOUT, Layout, parse_layout, plain_layout
from promoter.masking import mask

# git merge-tree --write-tree (the local forge's merges) came in 2.38; --end-of-options in 2.24.
MIN_GIT = (2, 38)
_VERSION = re.compile(r"git version (\d+)\.(\d+)")
_SHA = re.compile(r"[0-9a-f]{4,64}")
_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_subjects: dict[tuple[str, str], str] = {}
# Answers about objects named by full sha never change (an object's id is its content): what
# ``<sha>^{commit}`` or ``^{tree}`` is, and whether one commit is an ancestor of another.
_resolved: dict[tuple[str, str], str] = {}
_ancestry: dict[tuple[str, str, str], bool] = {}
_FIXED = re.compile(rf"(?:{_FULL_SHA.pattern})(?:\^\{{(?:commit|tree)\}})?")
_LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}  # paths are names, not patterns
_ANCESTRY = re.compile(r"(?:[~^][0-9]*)*\Z")  # "~2", "^", "^2~1": a commit's ancestors

IDENTITY = {
    "GIT_AUTHOR_NAME": "promoter",
    "GIT_AUTHOR_EMAIL": "promoter@localhost",
    "GIT_COMMITTER_NAME": "promoter",
    "GIT_COMMITTER_EMAIL": "promoter@localhost",
}


class Git:
    """Runs git against one repository (a working clone or a bare repo)."""

    def __init__(self, path: str | Path, extra_env: Mapping[str, str] | None = None) -> None:
        self.path = Path(path)
        self.env = dict(os.environ)
        self.env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_ASKPASS": "true"})
        for key, value in IDENTITY.items():
            self.env.setdefault(key, value)
        if extra_env:
            self.env.update(extra_env)
        self._extra = extra_env
        # reads by name (refs, files, trees, blobs) go to one long-lived git process
        self._batch = BatchReader(self.path, self.env)
        weakref.finalize(self, self._batch.close)
        self._layout: Layout | None = None

    def layout(self) -> Layout | None:
        """The repository ``path`` is in, once per handle: read from its files when ``path`` is
        plainly the top of a clone or a bare repository (``gitlayout.plain_layout``), else
        asked of git in one process; None outside any."""
        if self._layout is None:
            self._layout = plain_layout(self.path, self.env)
        if self._layout is None:
            proc = self.run("rev-parse", *ASK_LAYOUT, check=False)
            if proc.returncode != 0:
                return None
            self._layout = parse_layout(proc.stdout, self.path)
        return self._layout

    def at_top(self) -> Git:
        """This repository through the top of its working tree (itself when bare)."""
        layout = self.layout()
        if layout is None or layout.top is None or layout.top == self.path:
            return self
        top = Git(layout.top, self._extra)
        top._layout = layout
        return top

    def run(
        self,
        *args: str,
        operands: Sequence[str] = (),
        paths: Sequence[str] = (),
        input: bytes | None = None,
        check: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """``git <args> --end-of-options <operands> -- <paths>``: ``args`` are the promoter's own
        literals; anything a user wrote goes in ``operands`` or ``paths``."""
        cmd = argv(self.path, args, operands, paths)
        run_env = {**self.env, **env} if env else self.env
        started = time.monotonic()
        try:
            proc = subprocess.run(cmd, input=input, capture_output=True, env=run_env, check=False)
        except OSError as err:  # git itself missing
            raise GitError(f"cannot run git: {err}") from err
        _trace(["git", *args, *operands, *paths], proc.returncode, started)
        if check and proc.returncode != 0:
            message = proc.stderr.decode("utf-8", "replace").strip() or f"exit {proc.returncode}"
            raise GitError(mask(f"git {args[0]} failed in {self.path}: {message}"))
        return proc

    def out(self, *args: str, operands: Sequence[str] = (), input: bytes | None = None) -> str:
        return self.run(*args, operands=operands, input=input).stdout.decode("utf-8", "replace").strip()

    def ok(self, *args: str, operands: Sequence[str] = ()) -> bool:
        return self.run(*args, operands=operands, check=False).returncode == 0

    def rev_parse(self, ref: str) -> str | None:
        """The full sha of the object ``ref`` names, or None when there is none (remembered when
        ``ref`` is a full sha, maybe with ``^{commit}`` or ``^{tree}``: a missing object may
        still be fetched). Unlike ``git rev-parse --verify``, a full sha names nothing unless its
        object is here."""
        key = (str(self.path), ref)
        if key in _resolved:
            return _resolved[key]
        sha = self._resolve(ref)
        if sha and _FIXED.fullmatch(ref):
            _resolved[key] = sha
        return sha

    def _resolve(self, ref: str) -> str | None:
        try:
            (answer,) = self._batch.ask([("info", ref)])
            return answer.sha if answer else None
        except Unavailable:
            proc = self.run("rev-parse", "--verify", "--quiet", operands=[ref], check=False)
            return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def ref_values(self, refs: Sequence[str]) -> dict[str, str]:
        """What each of the full ref names ``refs`` points at, for those that exist."""
        if all(ref.startswith("refs/") for ref in refs):  # a full name: git reads no other
            try:
                answers = self._batch.ask([("info", ref) for ref in refs])
                return {ref: a.sha for ref, a in zip(refs, answers, strict=True) if a is not None}
            except Unavailable:
                pass
        return self._listed_refs(refs)

    def _listed_refs(self, refs: Sequence[str]) -> dict[str, str]:
        out = self.run("for-each-ref", "--format=%(objectname)%09%(refname)", operands=refs).stdout
        listed = (line.partition("\t") for line in out.decode().splitlines())
        return {ref: sha for sha, _, ref in listed if ref in refs}

    def subject(self, commit: str) -> str:
        """The first line of ``commit``'s message; read once per process for a full sha (a
        commit never changes), a promotion names its main commit in many places."""
        key = (str(self.path), commit)
        if key in _subjects:
            return _subjects[key]
        subject = self.out("log", "-1", "--format=%s", operands=[commit])
        if _FULL_SHA.fullmatch(commit):  # a ref name moves on
            _subjects[key] = subject
        return subject

    def commit_of(self, ref: str) -> str | None:
        return self.rev_parse(f"{ref}^{{commit}}")

    def tree_of(self, commit: str) -> str:
        tree = self.rev_parse(f"{commit}^{{tree}}")
        if tree is None:
            raise GitError(f"git rev-parse failed in {self.path}: no tree for {commit}")
        return tree

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """Whether ``ancestor`` is ``descendant`` or one of its ancestors (remembered for two
        full shas once git has answered; not when it could not tell)."""
        key = (str(self.path), ancestor, descendant)
        if key in _ancestry:
            return _ancestry[key]
        code = self.run(
            "merge-base", "--is-ancestor", operands=[ancestor, descendant], check=False
        ).returncode
        if code in (0, 1) and _FULL_SHA.fullmatch(ancestor) and _FULL_SHA.fullmatch(descendant):
            _ancestry[key] = code == 0
        return code == 0

    def ls_tree(self, treeish: str, path: str | None = None) -> list[TreeEntry]:
        """Every blob (and submodule) under ``treeish``, recursively, paths relative to root, in
        git's order (``git ls-tree -r --full-tree``)."""
        path = path.strip("/") if path and path not in (".", "") else None
        try:
            return gitbatch.tree_files(self._batch, treeish, path)
        except Unavailable:
            raw = self.run(
                "ls-tree", "-r", "-z", "--full-tree", operands=[treeish], paths=[f"{path}/"] if path else []
            )
            return gitbatch.ls_tree_records(raw.stdout)

    def folders(self, treeish: str, paths: Sequence[str]) -> dict[str, list[TreeEntry]]:
        """The entries directly in each folder of ``paths`` ("" for the top) of ``treeish``,
        with full paths (``git ls-tree`` without ``-r``); none for a path that is no folder."""
        try:
            return gitbatch.folders(self._batch, treeish, paths)
        except Unavailable:
            specs = [f"{p}/" for p in paths if p]
            raw = self.run(
                "ls-tree", "-z", "--full-tree", operands=[treeish], paths=specs, env=_LITERAL
            ).stdout
            out: dict[str, list[TreeEntry]] = {p: [] for p in paths}
            for e in gitbatch.ls_tree_records(raw):
                out.get(e.path.rpartition("/")[0], []).append(e)
            return out

    def files(self, trees: Sequence[tuple[str, str]]) -> list[TreeEntry]:
        """Every blob and submodule under each ``(folder, tree id)``, recursively, paths below
        ``folder`` (``git ls-tree -r`` of each tree)."""
        try:
            return gitbatch.files(self._batch, trees)
        except Unavailable:
            return [
                TreeEntry(e.mode, e.type, e.sha, f"{folder}/{e.path}" if folder else e.path)
                for folder, sha in trees
                for e in gitbatch.ls_tree_records(self.run("ls-tree", "-r", "-z", operands=[sha]).stdout)
            ]

    def present(self, objects: Sequence[str]) -> set[str]:
        """Which of ``objects`` (ids) this repository holds (a partial clone fetches them)."""
        try:
            return {a.sha for a in self._batch.ask([("info", sha) for sha in objects]) if a is not None}
        except Unavailable:
            raw = self.run("cat-file", "--batch-check", input="\n".join(objects).encode() + b"\n").stdout
            return {line.split(" ")[0] for line in raw.decode().splitlines() if not line.endswith(" missing")}

    def read_blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """Contents of many blobs, in one round trip to the reader per 16 KiB of names."""
        wanted = list(dict.fromkeys(shas))
        try:
            answers = self._batch.ask([("contents", sha) for sha in wanted])
        except Unavailable:
            raw = (
                self.run("cat-file", "--batch", input="\n".join(wanted).encode() + b"\n").stdout
                if wanted
                else b""
            )
            answers = gitbatch.batch_records(raw, len(wanted))
        out: dict[str, bytes] = {}
        for sha, answer in zip(wanted, answers, strict=True):
            if answer is None:
                raise GitError(f"object {sha} is missing from {self.path}")
            out[sha] = answer.contents
        return out

    def read_file(self, commit: str, path: str) -> bytes | None:
        """The file at ``path`` in ``commit``; None when there is no such file."""
        try:
            (answer,) = self._batch.ask([("contents", f"{commit}:{path}")])
            return answer.contents if answer is not None and answer.type == "blob" else None
        except Unavailable:
            proc = self.run("cat-file", "blob", operands=[f"{commit}:{path}"], check=False)
            return proc.stdout if proc.returncode == 0 else None

    def note(self, ref: str, obj: str) -> bytes | None:
        """What ``git notes --ref=<ref> show <obj>`` prints; None when ``obj`` has no note. Read
        through the reader: a note is the blob named by its object's id in the notes ref's
        tree, at whatever fan-out git gave it (``ab/cdef...``, ``ab/cd/ef...``)."""
        full = ref if ref.startswith("refs/") else f"refs/notes/{ref}"
        try:
            sha = self.rev_parse(obj)
            return None if sha is None else gitbatch.note(self._batch, full, sha)
        except Unavailable:
            proc = self.run("notes", f"--ref={full}", "show", operands=[obj], check=False)
            return proc.stdout if proc.returncode == 0 else None

    def update_ref(self, ref: str, new: str, old: str | None, message: str = "promoter") -> None:
        """Compare-and-swap: move ``ref`` to ``new`` only if it is still at ``old`` (None: absent)."""
        self.run("update-ref", "-m", message, operands=[ref, new, old or "0" * 40])

    def delete_ref(self, ref: str) -> None:
        self.run("update-ref", "-d", operands=[ref], check=False)


def _trace(words: list[str], code: int, started: float) -> None:
    if trace.enabled():
        trace.note(" ".join(words), f"exit {code}", time.monotonic() - started)


def argv(path: Path, args: Sequence[str], operands: Sequence[str], paths: Sequence[str]) -> list[str]:
    """The one place a git command line is built (see the module docstring)."""
    cmd = ["git", "-C", str(path), *args]
    if operands:
        cmd += ["--end-of-options", *operands]
    if paths:
        cmd += ["--", *paths]
    return cmd


def git_version(text: str | None = None) -> tuple[int, int] | None:
    """(major, minor) of the git on the PATH (or of ``git --version`` output ``text``)."""
    if text is None:
        text = _version_output(os.environ.get("PATH", ""))
        if text is None:
            return None
    match = _VERSION.search(text)
    return (int(match[1]), int(match[2])) if match else None


@lru_cache(maxsize=16)
def _version_output(path: str) -> str | None:
    """``git --version`` of the git that ``path`` (the PATH) finds, asked once per process."""
    try:
        return subprocess.run(["git", "--version"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return None


def require_git(version: tuple[int, int] | None = None) -> None:
    """A GitError naming the git needed when the one on the PATH is missing or too old."""
    found = version if version is not None else git_version()
    needed = ".".join(map(str, MIN_GIT))
    if found is None:
        raise GitError(f"git is not installed (or not on the PATH); promoter needs git {needed} or newer")
    if found < MIN_GIT:
        raise GitError(
            f"git {found[0]}.{found[1]} is too old: promoter needs git {needed} or newer "
            "(for git merge-tree --write-tree)"
        )


_PLAIN_BRANCH = re.compile(r"[A-Za-z0-9._/-]+")


@lru_cache(maxsize=4096)
def valid_branch(name: str) -> bool:
    """Whether git accepts ``name`` as a branch (``git check-ref-format refs/heads/<name>``)."""
    if not name or name.startswith("-") or name == "HEAD" or "@{" in name:
        return False
    if _PLAIN_BRANCH.fullmatch(name):
        return _plain_branch_valid(name)
    proc = subprocess.run(["git", "check-ref-format", f"refs/heads/{name}"], capture_output=True, check=False)
    return proc.returncode == 0


def _plain_branch_valid(name: str) -> bool:
    """git's rules that remain for a name of letters, digits, ".", "_", "-" and "/", without a
    process: no "..", no "." at its end or at a part's start, no empty part, none ".lock"."""
    return (
        ".." not in name
        and not name.endswith(".")
        and all(part and not part.startswith(".") and not part.endswith(".lock") for part in name.split("/"))
    )


def require_revision(text: str, what: str) -> str:
    """``text`` if it may name a commit (see ``valid_revision``); a UsageError naming ``what``
    (the flag or input it came from) if not."""
    if not valid_revision(text):
        raise UsageError(
            f"{what} {text!r}: not a commit sha or a valid branch or tag name (git check-ref-format)"
        )
    return text


def require_branch(text: str, what: str) -> str:
    if not valid_branch(text):
        raise UsageError(f"{what} {text!r}: not a valid branch name (git check-ref-format)")
    return text


def valid_revision(text: str) -> bool:
    """A commit a user may name: a (possibly abbreviated) sha or a branch, tag or ref name; never
    anything git could read as an option or a revision expression with side effects. Either may
    be followed by ``~N`` / ``^N``."""
    base = _ANCESTRY.sub("", text, count=1)
    if base == "HEAD" or _SHA.fullmatch(base):
        return True
    return valid_branch(base.removeprefix("refs/heads/").removeprefix("refs/tags/"))
