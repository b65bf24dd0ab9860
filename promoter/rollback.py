"""Finding the last good state of an environment and writing the commit that restores it.

An environment's history is its platform branch: each promotion leaves a provenance file naming
the main commit it was rendered from, and the main commit's ``promoter/<env>`` status says
whether that promotion was healthy. The last good state is the newest first-parent commit
whose main commit succeeded there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from promoter.model import Environment
from promoter.platform import PROVENANCE, PlatformRepo, TreePlan, parse_provenance

HISTORY_LIMIT = 500


@dataclass(frozen=True)
class GoodState:
    platform_sha: str
    main_commit: str


def _join(root: str, path: str) -> str:
    return f"{root}/{path}" if root else path


def deployed_main(platform: PlatformRepo, env: Environment, sha: str) -> str | None:
    """The main commit whose render is on the platform branch at ``sha``."""
    found = parse_provenance(platform.read(sha, _join(env.gitops_path, PROVENANCE))).get("mainCommit")
    return found if isinstance(found, str) else None


def last_good(
    platform: PlatformRepo,
    env: Environment,
    head: str,
    succeeded: Callable[[str], bool],
    skip: set[str],
) -> GoodState | None:
    """The newest state on ``env``'s branch (first parents from ``head``) whose main commit
    succeeded there and is not in ``skip``."""
    history = platform.git.out("rev-list", "--first-parent", f"--max-count={HISTORY_LIMIT}", head).split()
    for sha in history:
        main = deployed_main(platform, env, sha)
        if main and main not in skip and succeeded(main):
            return GoodState(sha, main)
    return None


def find_state(platform: PlatformRepo, env: Environment, head: str, main_commit: str) -> GoodState | None:
    """The newest state on ``env``'s branch rendered from ``main_commit``."""
    return last_good(platform, env, head, lambda m: m == main_commit, set())


def restore_commit(platform: PlatformRepo, env: Environment, head: str, good: GoodState, message: str) -> str:
    """A commit on top of ``head`` whose environment folder is exactly as at ``good``; files
    outside the folder stay as they are at ``head``."""
    entries = platform.listing(good.platform_sha, env.gitops_path)
    return platform.commit(TreePlan(entries, {}), env.gitops_path, [head], message)
