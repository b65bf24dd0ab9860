"""The hydrator contract of Argo CD's source hydrator and GitOps Promoter (docs/hydrator.md):
what a promotion commit carries when ``spec.hydrator.metadata`` is on, built as Argo CD's
commit-server builds it, and the ``refs/notes/hydrator.metadata`` note.

- ``<gitops.path>/hydrator.metadata``: the dry (main) commit, as JSON with two-space indents and a
  final newline (Go's ``json.Encoder`` with ``SetIndent("", "  ")`` and no HTML escaping), its
  keys in the order of Argo CD's ``HydratorCommitMetadata``;
- in each folder of the render (a cluster type's, what one reconciler reads),
  ``hydrator.metadata`` with ``repoURL``, ``drySha`` and ``commands``, and a ``README.md`` from
  Argo CD's default README template; both are written only where the folder's manifests
  change, as Argo CD writes them only for paths whose manifest changed, so a render that changes
  nothing still equals the branch and is a no-op;
- the note: ``{"drySha":"<sha>"}`` on the commit that holds the render, pushed to the remote's
  notes ref with compare-and-swap, read again and redone when another writer got there first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from promoter.errors import GitError
from promoter.gitcmd import Git
from promoter.gitremote import fetch_ref, push_ref
from promoter.platform.objects import blob_id, join
from promoter.platform.plan import TreeReader

METADATA = "hydrator.metadata"
README = "README.md"
NOTES_REF = "refs/notes/hydrator.metadata"
NOTE_ATTEMPTS = 5  # compare-and-swap rounds before the note's push gives up


@dataclass(frozen=True)
class DryCommit:
    """The main commit a render came from, as the contract's fields give it."""

    sha: str
    repo_url: str | None  # the control plane's URL, credentials removed; None when unknown
    author: str  # "Name <email>"
    date: str  # the author date, RFC 3339 (what GitOps Promoter's metav1.Time parses)
    subject: str
    body: str


def dry_commit(git: Git, sha: str, repo_url: str | None) -> DryCommit:
    """``sha`` of the control plane read as Argo CD's ``GetCommitMetadata`` reads a dry commit:
    the message cut at its first blank line into subject and body."""
    raw = git.run("log", "-1", "--format=%an <%ae>%x00%aI%x00%B", operands=[sha]).stdout
    author, date, message = raw.decode("utf-8", "replace").split("\0", 2)
    subject, _, body = message.rstrip("\n").partition("\n\n")
    return DryCommit(sha, _without_credentials(repo_url), author, date, subject, body.rstrip("\n"))


def metadata(dry: DryCommit) -> bytes:
    """The environment's ``hydrator.metadata``: every field Argo CD writes at the top (no
    ``references``: the promoter has none to give); empty values left out, as ``omitempty`` does."""
    return _json(
        {
            "repoURL": dry.repo_url,
            "drySha": dry.sha,
            "author": dry.author,
            "date": dry.date,
            "subject": dry.subject,
            "body": dry.body,
        }
    )


def folder_metadata(dry: DryCommit, commands: tuple[str, ...]) -> bytes:
    """A rendered folder's ``hydrator.metadata``: Argo CD's per-path fields."""
    return _json({"repoURL": dry.repo_url, "drySha": dry.sha, "commands": list(commands)})


def readme(dry: DryCommit, commands: tuple[str, ...]) -> bytes:
    """A rendered folder's ``README.md``: Argo CD's default ``readmeMessageTemplate`` filled in
    (there are no references, so its References section is left out, as the template does)."""
    lines = [
        "# Manifest Hydration",
        "",
        "To hydrate the manifests in this repository, run the following commands:",
        "",
        "```shell",
        f"git clone {dry.repo_url or '<the control-plane repository>'}",  # no origin to name
        "# cd into the cloned directory",
        f"git checkout {dry.sha}",
        *commands,
        "```",
        "",
    ]
    return "\n".join(lines).encode()


def note(dry_sha: str) -> bytes:
    """The note's text, as Argo CD's ``AddNote`` marshals its ``CommitNote``."""
    return json.dumps({"drySha": dry_sha}, separators=(",", ":")).encode()


def hydrated(
    reader: TreeReader,
    base: str | None,
    root: str,
    files: Mapping[str, bytes],
    written: Callable[[str], tuple[bytes, bytes]],
) -> dict[str, bytes]:
    """``files`` with the contract's files in each of their folders: ``written(folder)`` (its
    ``hydrator.metadata`` and ``README.md``) where the folder's rendered files differ from what
    ``base`` holds there, else the base's own, unchanged."""
    out = dict(files)
    rendered = _by_folder(out)
    top = reader.top(base, root)
    held = reader.files_under(top, root, [f for f in rendered if f in top and top[f][1] == "tree"])
    for folder, blobs in sorted(rendered.items()):
        own = (f"{folder}/{METADATA}", f"{folder}/{README}")
        kept = _kept(reader, base, root, held, own, blobs)
        out[own[0]], out[own[1]] = kept if kept is not None else written(folder)
    return out


def _by_folder(files: Mapping[str, bytes]) -> dict[str, dict[str, str]]:
    """The blob id of each rendered file inside a folder, by its top-level folder."""
    rendered: dict[str, dict[str, str]] = {}
    for path, data in files.items():
        folder, sep, _ = path.partition("/")
        if sep:
            rendered.setdefault(folder, {})[path] = blob_id(data)
    return rendered


def add_note(git: Git, url: str, commit: str, dry_sha: str) -> bool:
    """Note ``commit`` with ``dry_sha`` on the remote ``url``'s ``refs/notes/hydrator.metadata``,
    moving the remote's ref only from what was read (another writer's notes are kept: the note
    is added onto theirs). False when the note was already there."""
    text = note(dry_sha)
    for _ in range(NOTE_ATTEMPTS):
        fetch_ref(git, url, NOTES_REF, NOTES_REF)
        old = git.rev_parse(NOTES_REF)
        shown = git.run("notes", f"--ref={NOTES_REF}", "show", operands=[commit], check=False)
        if shown.returncode == 0 and shown.stdout.strip() == text:
            return False
        git.run("notes", f"--ref={NOTES_REF}", "add", "-f", "-F", "-", operands=[commit], input=text)
        new = git.rev_parse(NOTES_REF)
        assert new is not None
        if push_ref(git, url, new, NOTES_REF, old):
            return True
    raise GitError(f"{NOTES_REF} on the platform repo kept moving while this run noted {commit[:12]}")


def read_note(git: Git, commit: str) -> str | None:
    """The ``drySha`` this clone's notes give ``commit`` (None: no note, or not the contract's)."""
    shown = git.run("notes", f"--ref={NOTES_REF}", "show", operands=[commit], check=False)
    if shown.returncode != 0:
        return None
    try:
        found = json.loads(shown.stdout)
    except ValueError:
        return None
    sha = found.get("drySha") if isinstance(found, dict) else None
    return sha if isinstance(sha, str) else None


def _kept(
    reader: TreeReader,
    base: str | None,
    root: str,
    held: Mapping[str, tuple[str, str]],
    own: tuple[str, str],
    blobs: Mapping[str, str],
) -> tuple[bytes, bytes] | None:
    """The base's contract files of a folder whose rendered files did not change; None when
    they changed, are new here, or the base's copies cannot be read (then written again)."""
    if base is None or not _unchanged(held, own[0].rpartition("/")[0], own, blobs):
        return None
    metadata_bytes, readme_bytes = (reader.git.read_file(base, join(root, p)) for p in own)
    if metadata_bytes is None or readme_bytes is None:
        return None
    return metadata_bytes, readme_bytes


def _unchanged(
    held: Mapping[str, tuple[str, str]], folder: str, own: tuple[str, str], blobs: Mapping[str, str]
) -> bool:
    """Whether the base's ``folder`` has the contract's files and, beside them, the rendered ones."""
    there = {p: e[1] for p, e in held.items() if p.startswith(f"{folder}/")}
    return all(p in there for p in own) and {p: s for p, s in there.items() if p not in own} == blobs


def _json(fields: dict[str, Any]) -> bytes:
    """As Go's encoder writes it: empty fields left out (``omitempty``), non-ASCII kept, U+2028
    and U+2029 escaped, a final newline."""
    kept = {k: v for k, v in fields.items() if v}
    text = json.dumps(kept, indent=2, ensure_ascii=False)
    return (text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029") + "\n").encode()


def _without_credentials(url: str | None) -> str | None:
    """``url`` with no user or token in it (a clone's origin may carry one)."""
    if not url:
        return None
    parts = urlsplit(url)
    if not parts.scheme or "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
