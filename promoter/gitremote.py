"""One ref read from and written to a remote, with compare-and-swap: how the promoter shares what
it keeps in the control-plane repo (statuses' notes, holds, notifications) with every clone.

``fetch_ref`` copies the remote's ref to a local one (forced: the local ref mirrors the remote);
``push_ref`` moves the remote's ref only if it is still where this clone last saw it
(``--force-with-lease=<ref>:<old>``), and says False when another writer moved it first, so the
caller reads again and applies its change to what won.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from promoter.errors import GitError
from promoter.gitcmd import Git
from promoter.masking import mask

#: What git says when a push lost the race: the lease failed, the ref moved on its own, or the
#: remote found it moved as it updated it (``[remote rejected] (failed to update ref)``); any
#: other ``[remote rejected]`` (a hook, a protection, a token without write) is a refusal.
LOST = (
    "stale info",
    "[rejected]",
    "fetch first",
    "non-fast-forward",
    "failed to update ref",
    "cannot lock ref",
)
REFUSED = re.compile(r"\[remote rejected\] \((?!failed to update ref|cannot lock ref)")


def fetch_ref(git: Git, remote: str, ref: str, into: str, env: Mapping[str, str] | None = None) -> bool:
    """Copy ``remote``'s ``ref`` to the local ``into``; False (and ``into`` deleted) when the
    remote has no such ref. A remote that cannot be read is a GitError."""
    proc = git.run("fetch", "--quiet", "--no-tags", operands=[remote, f"+{ref}:{into}"], check=False, env=env)
    missing = b"couldn't find remote ref" in proc.stderr
    if proc.returncode != 0 and not missing:
        detail = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(mask(f"cannot read {ref} from {remote}: {detail}"))
    if missing:
        git.delete_ref(into)
    return not missing


def push_ref(
    git: Git, remote: str, new: str, ref: str, old: str | None, env: Mapping[str, str] | None = None
) -> bool:
    """Move ``remote``'s ``ref`` to the commit ``new`` if it is still at ``old`` (None: it must
    not exist); False when someone moved it since. Any other refusal is a GitError."""
    proc = git.run(
        "push",
        "--quiet",
        "--porcelain",
        f"--force-with-lease={ref}:{old or ''}",
        operands=[remote, f"{new}:{ref}"],
        check=False,
        env=env,
    )
    if proc.returncode == 0:
        return True
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    if not REFUSED.search(text) and any(word in text for word in LOST):
        return False
    raise GitError(mask(f"push of {ref} to {remote} was refused: {text.strip()}"))
