"""The Pipeline: the environments in their order of promotion, where each renders to, how it
merges and what gates it."""

from __future__ import annotations

import difflib
from typing import Any, Literal, NoReturn, cast

from promoter.clock import parse_duration
from promoter.controlplane.changecontrol import notifications_from, windows_from, withhold_receivers
from promoter.controlplane.documents import (
    ObjectDoc,
    label_selector,
)
from promoter.controlplane.envchecks import check_platform_branches, check_unique
from promoter.controlplane.fields import (
    Fields,
    check_name,
    check_relative_path,
    kind_of,
    unit_needed,
    unitless,
)
from promoter.controlplane.hydrator import check_next, check_next_environment, hydrator_from
from promoter.controlplane.messages import messages_from, with_messages
from promoter.controlplane.objects import versions_from
from promoter.controlplane.prchecks import pr_checks_from
from promoter.controlplane.signatures import signatures_from
from promoter.controlplane.yamlfile import plain
from promoter.errors import ConfigError
from promoter.gates.registry import GATES, validate_gate
from promoter.gitcmd import valid_branch
from promoter.model import (
    DEFAULT_REMOVAL_LIMIT,
    REST_WAVE,
    Environment,
    FailurePolicy,
    GateSpec,
    MergePolicy,
    Pipeline,
    RemovalLimit,
    Source,
    Wave,
)
from promoter.urls import scheme_of, url_problem


def pipeline_from(obj: ObjectDoc) -> Pipeline:
    spec = obj.spec()
    url, forge, kind = _platform_repo(spec)
    environments: list[Environment] = []
    follows_lines: dict[str, int | None] = {}
    hydrator_metadata = hydrator_from(spec)
    for path, line, item in spec.items("environments", required=True):
        fields = Fields(item, obj.file, path, line)
        environments.append(environment_from(fields, kind))
        check_next_environment(fields, environments[-1], hydrator_metadata)
        follows_lines[environments[-1].name] = fields.line_of("follows") or line
    if not environments:
        spec.fail("needs at least one environment", "environments")
    check_unique(environments, obj.file)
    check_platform_branches(environments, obj.file, url)
    check_next(environments, obj.file, url)
    versions = versions_from(spec)
    fail_fast = spec.flag("failFast", False)
    receivers = notifications_from(spec, tuple(e.name for e in environments))
    sign_commits, verify_main = signatures_from(spec, kind)
    environments = with_messages(environments, spec)
    spec.done()
    obj.top.done()
    pipeline = Pipeline(
        obj.name,
        url,
        forge,
        withhold_receivers(environments, receivers),
        obj.source,
        versions,
        fail_fast=fail_fast,
        notifications=receivers,
        sign_commits=sign_commits,
        verify_main=verify_main,
        hydrator_metadata=hydrator_metadata,
    )
    check_graph(pipeline, obj.file, follows_lines)
    return pipeline


def _platform_repo(spec: Fields) -> tuple[str, Literal["local", "github"] | None, str]:
    """``spec.platformRepo``: its URL, the forge it names (None: not named) and the forge in use."""
    repo = spec.fields("platformRepo", required=True)
    assert repo is not None
    url = repo.str("url", required=True)
    forge = repo.get("forge", str)
    if forge is not None and forge not in ("local", "github"):
        repo.fail(f"must be local or github, got {forge!r}", "forge")
    assert url is not None
    kind = forge or ("local" if scheme_of(url) in ("path", "file") else "github")
    problem = url_problem(url, kind)
    if problem:
        repo.fail(problem, "url")
    repo.done()
    return url, forge, kind


def environment_from(f: Fields, kind: str = "local") -> Environment:
    """One environment of the Pipeline; ``kind`` is the forge of ``platformRepo`` (local or
    github), which a ``gitops.repo`` must share."""
    name = f.name("name")
    branch = f.str("branch", default=name)
    assert branch is not None
    check_branch(branch, lambda m: f.fail(m, "branch"))
    gitops_branch, gitops_path, platform_url = _gitops(f, name, kind)
    merge = f.choice("merge", ("auto", "manual", "direct", "next"), default="auto")
    on_failure: FailurePolicy = (
        "rollback" if f.choice("onFailure", ("stop", "rollback"), default="stop") == "rollback" else "stop"
    )
    timeout = _timeout(f)
    gates = _gates(f)
    waves = _waves(f)
    follows = _follows(f, name)
    windows = windows_from(f)
    removal_limit = _removal_limit(f)
    check_sources = bool(f.get("checkSources", bool))
    pr_checks = pr_checks_from(f, merge)
    messages = messages_from(f)
    f.done()
    policy = cast(MergePolicy, merge)  # one of f.choice's
    return Environment(
        name,
        branch,
        gitops_branch,
        gitops_path,
        policy,
        timeout,
        gates,
        Source(f.file, f.line),
        on_failure,
        waves,
        platform_url,
        follows=follows,
        windows=windows,
        removal_limit=removal_limit,
        check_sources=check_sources,
        pr_checks=pr_checks,
        messages=messages,
    )


def _follows(f: Fields, name: str) -> tuple[str, ...] | None:
    """``follows``: the environments this one waits for (``[]``: none, it takes every commit);
    absent, the one listed before it. Names are checked against the Pipeline in check_graph."""
    value = f.get("follows", (list, str))
    if value is None:
        return None
    names = [value] if isinstance(value, str) else value
    for item in names:
        if not isinstance(item, str) or not item.strip():
            f.fail(f"must be a list of environment names, got {kind_of(item)} in it", "follows")
    if name in names:
        f.fail(f"environment {name!r} cannot follow itself", "follows")
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        f.fail(f"{twice!r} is listed twice", "follows")
    return tuple(names)


def check_graph(pipeline: Pipeline, file: str, lines: dict[str, int | None] | None = None) -> None:
    """The environments form a graph a commit can flow through (DESIGN section 14): every name
    that ``follows`` gives is an environment of the Pipeline, and there is no cycle, so that
    every environment can be reached from one that follows nothing. ``lines``: where each
    environment's ``follows`` is written."""
    names = [e.name for e in pipeline.environments]

    def fail(env: Environment, message: str) -> NoReturn:
        line = (lines or {}).get(env.name) or env.source.line
        raise ConfigError(
            f"spec.environments[{pipeline.index(env.name)}].follows: {message}", file=file, line=line
        )

    for env in pipeline.environments:
        for upstream in env.follows or ():
            if upstream not in names:
                near = difflib.get_close_matches(upstream, names, n=1, cutoff=0.7)
                hint = f", did you mean {near[0]!r}?" if near else f" (the Pipeline has {', '.join(names)})"
                fail(env, f"no environment {upstream!r}{hint}")
    cycle = _cycle(pipeline)
    if cycle:
        after = sorted(set().union(*(pipeline.descendants(n) for n in cycle)) - set(cycle))
        nor = f", nor {', '.join(after)} after them" if after else ""
        fail(
            pipeline.environments[pipeline.index(cycle[0])],
            f"a cycle, {' -> '.join([*cycle, cycle[0]])}: no commit could ever reach {', '.join(cycle)}{nor}",
        )


def _cycle(pipeline: Pipeline) -> list[str] | None:
    """A cycle of ``follows`` (each environment followed by one it follows), the first found in
    the list's order; None when the graph has none."""
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> list[str] | None:
        state[name] = "open"
        for upstream in pipeline.upstreams(name):
            if state.get(upstream) == "open":
                return path[path.index(upstream) :] if upstream in path else [upstream]
            if upstream not in state:
                found = visit(upstream, [*path, upstream])
                if found:
                    return found
        state[name] = "done"
        return None

    for env in pipeline.environments:
        if env.name not in state:
            found = visit(env.name, [env.name])
            if found:  # in the order a commit would flow, from the one listed first
                flow = list(reversed(found))
                first = min(flow, key=pipeline.index)
                return flow[flow.index(first) :] + flow[: flow.index(first)]
    return None


def _gitops(f: Fields, name: str, kind: str) -> tuple[str, str, str | None]:
    """Where the environment renders to: (platform branch, folder, platform repo), by default
    (name, root, ``platformRepo``)."""
    gitops = f.fields("gitops")
    if gitops is None:
        return name, "", None
    branch = gitops.str("branch", default=name) or name
    check_branch(branch, lambda m: gitops.fail(m, "branch"))
    path = check_relative_path(gitops.str("path", default=".") or ".", lambda m: gitops.fail(m, "path"))
    url = gitops.str("repo")
    if url is not None:
        problem = url_problem(url, kind)
        if problem:
            gitops.fail(f"{problem} (the forge of platformRepo, {kind}, serves every environment)", "repo")
    gitops.done()
    return branch, path, url


def _removal_limit(f: Fields) -> RemovalLimit:
    """``removalLimit``: how many assignments one promotion may remove without --allow-removal,
    a whole number (``3``) or a percent of what the environment or wave holds (``"25%"``)."""
    value = f.get("removalLimit")
    if value is None:
        return DEFAULT_REMOVAL_LIMIT
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return RemovalLimit(value)
    text = str(value).strip()
    digits = text.removesuffix("%")
    if (
        isinstance(value, str)
        and text.endswith("%")
        and digits.isascii()
        and digits.isdigit()
        and int(digits) <= 100
    ):
        return RemovalLimit(int(digits), percent=True)
    f.problem(
        "removalLimit",
        f'must be a whole number of at least 0 or a percent from 0% to 100% (such as "25%"), got {value!r}',
    )


def _timeout(f: Fields) -> float:
    value = f.get("timeout", (str, int, float))  # a wrong type fails here, with its own message
    if unitless(value):
        f.fail(unit_needed(value), "timeout")
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


def _waves(f: Fields) -> tuple[Wave, ...]:
    """``waves``: the environment's rollout in steps of cluster types. Names are unique and a
    cluster type is named by at most one wave; selectors are matched (and their overlaps and
    empty waves found) when the environment branch is read."""
    if f.get("waves", list) == []:
        f.fail("needs at least one wave (or no waves field: the whole environment at once)", "waves")
    waves: list[Wave] = []
    named: dict[str, Wave] = {}
    for path, line, item in f.items("waves"):
        wave = _wave(Fields(item, f.file, path, line))
        for other in waves:
            if other.name == wave.name:
                raise ConfigError(
                    f"{path}.name: wave {wave.name!r} is listed twice (also at line {other.source.line})",
                    file=f.file,
                    line=wave.source.line,
                )
        for cluster_type in wave.cluster_types:
            if cluster_type in named:
                first = named[cluster_type]
                raise ConfigError(
                    f"{path}.clusterTypes: cluster type {cluster_type!r} is already in wave {first.name!r} "
                    f"(line {first.source.line}); a cluster type belongs to one wave",
                    file=f.file,
                    line=wave.source.line,
                )
            named[cluster_type] = wave
        waves.append(wave)
    return tuple(waves)


def _wave(w: Fields) -> Wave:
    name = w.name("name")
    if name == REST_WAVE:
        w.fail(f"{REST_WAVE!r} names the implicit last wave (the cluster types no wave names)", "name")
    types = w.strings("clusterTypes") or []
    for cluster_type in types:
        check_name(cluster_type, lambda m: w.fail(m, "clusterTypes"))
    if len(set(types)) != len(types):
        twice = next(t for t in types if types.count(t) > 1)
        w.fail(f"cluster type {twice!r} is listed twice", "clusterTypes")
    found = w.fields("selector")
    selector = label_selector(found) if found is not None else None
    gates = _gates(w) if w.get("gates") is not None else None
    bake = w.duration("bake", "0s", positive=False)
    timeout = w.duration("timeout", "30m") if w.get("timeout") is not None else None
    windows = windows_from(w)
    w.done()
    if not types and selector is None:
        w.fail("needs clusterTypes or a selector (or both)")
    if selector is not None and not selector.match_labels and not selector.match_expressions:
        w.fail("an empty selector would take every cluster type; name them or match labels", "selector")
    return Wave(name, tuple(types), selector, gates, bake, timeout, Source(w.file, w.line), windows)
