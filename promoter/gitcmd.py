"""A thin, fast wrapper around the git CLI.

Everything the promoter does to a repository goes through here: reading objects at a commit
with no checkout, writing trees with ``git fast-import``, compare-and-swap ref updates and
pushes. Failures become GitError with git's own message (masked) and the command.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from promoter.errors import GitError
from promoter.masking import mask

IDENTITY = {
    "GIT_AUTHOR_NAME": "promoter",
    "GIT_AUTHOR_EMAIL": "promoter@localhost",
    "GIT_COMMITTER_NAME": "promoter",
    "GIT_COMMITTER_EMAIL": "promoter@localhost",
}


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    type: str
    sha: str
    path: str


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

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        cmd = ["git", "-C", str(self.path), *args]
        run_env = {**self.env, **env} if env else self.env
        try:
            proc = subprocess.run(cmd, input=input, capture_output=True, env=run_env, check=False)
        except OSError as err:  # git itself missing
            raise GitError(f"cannot run git: {err}") from err
        if check and proc.returncode != 0:
            message = proc.stderr.decode("utf-8", "replace").strip() or f"exit {proc.returncode}"
            raise GitError(mask(f"git {args[0]} failed in {self.path}: {message}"))
        return proc

    def out(self, *args: str, input: bytes | None = None) -> str:
        return self.run(*args, input=input).stdout.decode("utf-8", "replace").strip()

    def ok(self, *args: str) -> bool:
        return self.run(*args, check=False).returncode == 0

    def rev_parse(self, ref: str) -> str | None:
        """The full sha ``ref`` names, or None."""
        proc = self.run("rev-parse", "--verify", "--quiet", "--end-of-options", ref, check=False)
        if proc.returncode != 0:
            return None
        return proc.stdout.decode().strip() or None

    def commit_of(self, ref: str) -> str | None:
        return self.rev_parse(f"{ref}^{{commit}}")

    def tree_of(self, commit: str) -> str:
        return self.out("rev-parse", f"{commit}^{{tree}}")

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return self.ok("merge-base", "--is-ancestor", ancestor, descendant)

    def ls_tree(self, treeish: str, path: str | None = None) -> list[TreeEntry]:
        """Every blob (and submodule) under ``treeish``, recursively, paths relative to root."""
        args = ["ls-tree", "-r", "-z", "--full-tree", treeish]
        if path and path not in (".", ""):
            args += ["--", path.rstrip("/") + "/"]
        raw = self.run(*args).stdout
        entries = []
        for record in raw.split(b"\0"):
            if not record:
                continue
            meta, _, name = record.partition(b"\t")
            mode, kind, sha = meta.decode().split(" ")
            entries.append(TreeEntry(mode, kind, sha, name.decode("utf-8", "surrogateescape")))
        return entries

    def read_blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """Contents of many blobs in one ``git cat-file --batch`` call."""
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        raw = self.run("cat-file", "--batch", input="\n".join(wanted).encode() + b"\n").stdout
        out: dict[str, bytes] = {}
        pos = 0
        for sha in wanted:
            end = raw.index(b"\n", pos)
            header = raw[pos:end].decode().split(" ")
            if len(header) < 3 or header[1] == "missing":
                raise GitError(f"object {sha} is missing from {self.path}")
            size = int(header[2])
            out[sha] = raw[end + 1 : end + 1 + size]
            pos = end + 1 + size + 1
        return out

    def read_file(self, commit: str, path: str) -> bytes | None:
        proc = self.run("cat-file", "blob", f"{commit}:{path}", check=False)
        return proc.stdout if proc.returncode == 0 else None

    def update_ref(self, ref: str, new: str, old: str | None, message: str = "promoter") -> None:
        """Compare-and-swap: move ``ref`` to ``new`` only if it is still at ``old`` (None: absent)."""
        self.run("update-ref", "-m", message, ref, new, old or "0" * 40)

    def delete_ref(self, ref: str) -> None:
        self.run("update-ref", "-d", ref, check=False)
