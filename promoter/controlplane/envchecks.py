"""Checks between a Pipeline's environments: each is listed once, and each rendered tree has a
place of its own on the platform repo (DESIGN section 5)."""

from __future__ import annotations

from promoter.errors import ConfigError
from promoter.model import BRANCH_PREFIX as RESERVED_PREFIX
from promoter.model import Environment


def check_unique(environments: list[Environment], file: str) -> None:
    """No environment is listed twice."""
    seen: dict[str, Environment] = {}
    for env in environments:
        if env.name in seen:
            raise ConfigError(
                f"environment {env.name!r} is listed twice (also at line {seen[env.name].source.line})",
                file=file,
                line=env.source.line,
            )
        seen[env.name] = env


def check_platform_branches(environments: list[Environment], file: str, url: str = "") -> None:
    """Each environment's rendered tree has a place of its own on the platform repo: no branch in
    the promoter's own namespace (promotion and rollback branches), no two environments on
    overlapping folders of one branch, no branch that is a folder of another (git cannot hold
    both ``a`` and ``a/b``); between environments of one platform repo (``url`` unless their own
    ``gitops.repo``)."""
    for i, env in enumerate(environments):
        branch = env.gitops_branch
        if branch == RESERVED_PREFIX or branch.startswith(RESERVED_PREFIX + "/"):
            raise ConfigError(
                f"spec.environments[{i}].gitops.branch: {branch!r} is in {RESERVED_PREFIX}/, "
                "the promoter's own promotion and rollback branches",
                file=file,
                line=env.source.line,
            )
        for other in environments[:i]:
            same_repo = (other.platform_url or url) == (env.platform_url or url)
            clash = _clash(other, env) if same_repo else None
            if clash:
                raise ConfigError(
                    f"spec.environments[{i}].gitops: {clash} of environment {other.name!r} (line {other.source.line})",
                    file=file,
                    line=env.source.line,
                )


def _clash(a: Environment, b: Environment) -> str | None:
    if a.gitops_branch == b.gitops_branch:
        if _nested(a.gitops_path, b.gitops_path):
            where = f"{b.gitops_path or '.'!r} overlaps {a.gitops_path or '.'!r}"
            return f"branch {b.gitops_branch!r}, folder {where}"
        return None
    if _nested(a.gitops_branch, b.gitops_branch):
        return f"branch {b.gitops_branch!r} cannot live beside branch {a.gitops_branch!r}"
    return None


def _nested(a: str, b: str) -> bool:
    """Whether one of two slash-separated paths holds the other ('' holds everything)."""
    return not a or not b or a == b or a.startswith(b + "/") or b.startswith(a + "/")
