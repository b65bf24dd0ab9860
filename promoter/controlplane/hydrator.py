"""The Pipeline's side of the hydrator contract (docs/hydrator.md): ``spec.hydrator.metadata``
(every promotion commit carries ``hydrator.metadata``) and ``merge: next`` (an environment's
promotion is pushed to ``<gitops.branch>-next`` and merged by GitOps Promoter or a person).

``merge: next`` leaves the merge to someone else, so it goes only where the promoter's own
landing does not need to merge: one commit per main commit (no waves: GitOps Promoter would
take a wave's commit for the whole environment), no revert of its own (no ``onFailure:
rollback``: a revert pushed beside GitOps Promoter's merges would fight them), no PR of its
own (no ``prChecks``).
"""

from __future__ import annotations

from promoter.controlplane.fields import Fields
from promoter.errors import ConfigError
from promoter.gitcmd import valid_branch
from promoter.model import BRANCH_PREFIX, Environment

#: ``merge: next`` pushes here; GitOps Promoter's proposed branch: ``<branch>-next``, with its
#: ``activePath`` after a slash (promotionstrategy_controller.go, docs/hydrator.md).
NEXT_SUFFIX = "-next"


def next_branch(env: Environment) -> str:
    """Where ``merge: next`` pushes ``env``'s promotion: ``<gitops.branch>-next``, and
    ``<gitops.branch>-next/<gitops.path>`` when the environment renders into a folder (GitOps
    Promoter's proposed branch of an ``activePath``)."""
    base = env.gitops_branch + NEXT_SUFFIX
    return f"{base}/{env.gitops_path}" if env.gitops_path else base


def hydrator_from(spec: Fields) -> bool:
    """``spec.hydrator``: ``{metadata: true}`` writes the contract's files; absent, nothing."""
    hydrator = spec.fields("hydrator")
    if hydrator is None:
        return False
    metadata = hydrator.flag("metadata", False)
    hydrator.done()
    return metadata


def check_next_environment(f: Fields, env: Environment, metadata: bool) -> None:
    """What ``merge: next`` needs and cannot go with (see the module doc), said at its line."""
    if env.merge != "next":
        return
    if not metadata:
        f.fail(
            "next needs spec.hydrator: {metadata: true} (GitOps Promoter reads the main commit "
            "from the hydrator.metadata of what is pushed to the -next branch)",
            "merge",
        )
    if env.waves:
        f.fail(
            "next leaves the merge to GitOps Promoter or a person, one commit per main commit; "
            "waves land one commit each: use merge: auto or manual with waves",
            "merge",
        )
    if env.on_failure == "rollback":
        f.fail(
            "next leaves the environment branch to GitOps Promoter or a person, so the promoter "
            "does not revert it: use onFailure: stop (the default) with merge: next",
            "merge",
        )
    if env.pr_checks is not None:
        f.fail("next opens no PR of the promoter's, so there are no PR checks to require", "merge")


def check_next(environments: list[Environment], file: str, url: str) -> None:
    """Each ``merge: next`` environment's ``-next`` branch is one git can hold beside every
    platform branch of its repo."""
    for i, env in enumerate(environments):
        if env.merge != "next":
            continue
        problem = _next_problem(next_branch(env), env, environments, url)
        if problem:
            raise ConfigError(f"spec.environments[{i}].merge: {problem}", file=file, line=env.source.line)


def _next_problem(branch: str, env: Environment, environments: list[Environment], url: str) -> str | None:
    if not valid_branch(branch) or len(branch) > 255:
        return f"its -next branch {branch!r} is no branch name git accepts (gitops.path is part of it)"
    if branch.startswith(BRANCH_PREFIX + "/"):
        return f"its -next branch {branch!r} is in {BRANCH_PREFIX}/, the promoter's own branches"
    other = _beside(branch, env, environments, url)
    if other is None:
        return None
    return (
        f"its -next branch {branch!r} cannot live beside the platform branch {other.gitops_branch!r} "
        f"of environment {other.name!r}"
    )


def _beside(branch: str, env: Environment, environments: list[Environment], url: str) -> Environment | None:
    """An environment of ``env``'s platform repo whose branch is ``branch``, or holds it, or is
    held by it (git cannot hold both ``a`` and ``a/b``)."""
    for other in environments:
        if (other.platform_url or url) != (env.platform_url or url):
            continue
        theirs = other.gitops_branch
        if theirs == branch or theirs.startswith(branch + "/") or branch.startswith(theirs + "/"):
            return other
    return None
