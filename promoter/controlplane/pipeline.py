"""The Pipeline: the environments in their order of promotion, where each renders to, how it
merges and what gates it."""

from __future__ import annotations

from typing import Any

from promoter.clock import parse_duration
from promoter.controlplane.documents import (
    ObjectDoc,
)
from promoter.controlplane.fields import Fields, check_relative_path
from promoter.controlplane.yamlfile import plain
from promoter.errors import ConfigError
from promoter.gates.registry import GATES, validate_gate
from promoter.gitcmd import valid_branch
from promoter.model import BRANCH_PREFIX as RESERVED_PREFIX
from promoter.model import (
    Environment,
    FailurePolicy,
    GateSpec,
    MergePolicy,
    Pipeline,
    Source,
)
from promoter.urls import scheme_of, url_problem


def pipeline_from(obj: ObjectDoc) -> Pipeline:
    spec = obj.spec()
    repo = spec.fields("platformRepo", required=True)
    assert repo is not None
    url = repo.str("url", required=True)
    forge = repo.get("forge", str)
    if forge is not None and forge not in ("local", "github"):
        repo.fail(f"must be local or github, got {forge!r}", "forge")
    assert url is not None
    problem = url_problem(url, forge or ("local" if scheme_of(url) in ("path", "file") else "github"))
    if problem:
        repo.fail(problem, "url")
    repo.done()
    environments: list[Environment] = []
    for path, line, item in spec.items("environments", required=True):
        environments.append(environment_from(Fields(item, obj.file, path, line)))
    if not environments:
        spec.fail("needs at least one environment", "environments")
    seen: dict[str, Environment] = {}
    for env in environments:
        if env.name in seen:
            raise ConfigError(
                f"environment {env.name!r} is listed twice (also at line {seen[env.name].source.line})",
                file=obj.file,
                line=env.source.line,
            )
        seen[env.name] = env
    _check_platform_branches(environments, obj.file)
    spec.done()
    obj.top.done()
    assert url is not None
    return Pipeline(obj.name, url, forge, tuple(environments), obj.source)


def _check_platform_branches(environments: list[Environment], file: str) -> None:
    """Each environment's rendered tree has a place of its own on the platform repo: no branch in
    the promoter's own namespace (promotion and rollback branches), no two environments on
    overlapping folders of one branch, no branch that is a folder of another (git cannot hold
    both ``a`` and ``a/b``)."""
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
            clash = _clash(other, env)
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


def environment_from(f: Fields) -> Environment:
    name = f.name("name")
    branch = f.str("branch", default=name)
    assert branch is not None
    check_branch(branch, lambda m: f.fail(m, "branch"))
    gitops_branch, gitops_path = _gitops(f, name)
    merge = f.choice("merge", ("auto", "manual", "direct"), default="auto")
    on_failure: FailurePolicy = (
        "rollback" if f.choice("onFailure", ("stop", "rollback"), default="stop") == "rollback" else "stop"
    )
    timeout = _timeout(f)
    gates = _gates(f)
    f.done()
    policy: MergePolicy = "manual" if merge == "manual" else "direct" if merge == "direct" else "auto"
    return Environment(
        name, branch, gitops_branch, gitops_path, policy, timeout, gates, Source(f.file, f.line), on_failure
    )


def _gitops(f: Fields, name: str) -> tuple[str, str]:
    """Where the environment renders to: (platform branch, folder), by default (name, root)."""
    gitops = f.fields("gitops")
    if gitops is None:
        return name, ""
    branch = gitops.str("branch", default=name) or name
    check_branch(branch, lambda m: gitops.fail(m, "branch"))
    path = check_relative_path(gitops.str("path", default=".") or ".", lambda m: gitops.fail(m, "path"))
    gitops.done()
    return branch, path


def _timeout(f: Fields) -> float:
    value = f.get("timeout", (str, int, float))  # a wrong type fails here, with its own message
    try:
        timeout = parse_duration("30m" if value is None else value)
    except ValueError as err:
        f.fail(str(err), "timeout")
    if timeout <= 0:
        f.fail("must be longer than zero", "timeout")
    return timeout


def _gates(f: Fields) -> tuple[GateSpec, ...]:
    gates = []
    for _path, line, item in f.items("gates"):
        if not isinstance(item, dict) or len(item) != 1:
            f.fail(
                "each gate is a mapping with one key, the gate type (" + ", ".join(sorted(GATES)) + ")",
                line=line,
            )
        kind = next(iter(item))
        if kind not in GATES:
            f.fail(f"unknown gate {kind!r}; known: {', '.join(sorted(GATES))}", line=line)
        source = Source(f.file, line)
        validate_gate(kind, plain(item[kind]), source)
        gates.append(GateSpec(kind, plain(item[kind]), source))
    return tuple(gates)


def check_branch(value: str, fail: Any) -> None:
    if len(value) > 255 or not valid_branch(value):
        fail(f"invalid branch name {value!r} (git check-ref-format refuses it)")
