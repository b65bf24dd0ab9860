"""Ordering on a cluster: a deployment target's ``dependsOn``, the targets of its environment it
comes after on every cluster it is assigned to (a database before its app, CRDs before their
users). Read with the Workload, then resolved against every Workload of main: each item names a
target of the same environment, no target depends on itself or on one twice, and the
dependencies form no cycle. Each target's ``depth`` (the longest chain of dependencies below it)
is its Argo CD sync wave. Whether each dependency is assigned where its dependent is, the
environment branch says: ``promoter.scheduling.ordering``."""

from __future__ import annotations

import difflib
from dataclasses import replace
from graphlib import CycleError, TopologicalSorter

from promoter.controlplane.fields import Fields
from promoter.errors import ConfigError, Problems
from promoter.model import DeploymentTarget, Workload

Key = tuple[str, str]  # (workload, target)
Item = tuple[str, str, int | None]  # (workload, target, line), as DeploymentTarget.depends_on


class _Refused(LookupError):
    """An item names no target this one may come after; the message says why."""


def dependencies_from(t: Fields) -> tuple[Item, ...]:
    """``dependsOn`` as written: each item ``{workload, target}``, either one left out (``""``),
    resolved by ``resolve``: no workload is this workload; no target is the workload's one
    target of the environment."""
    found = []
    for path, line, item in t.items("dependsOn"):
        d = Fields(item, t.file, path, line)
        workload = d.name("workload", required=False)
        target = d.name("target", required=False)
        d.done()
        if not workload and not target:
            d.fail("names no deployment target: give 'target' (one of this workload's), 'workload', or both")
        found.append((workload, target, d.line))
    return tuple(found)


def resolve(workloads: dict[str, Workload]) -> dict[str, Workload]:
    """``workloads`` with every ``dependsOn`` item resolved to the (workload, target) it names,
    and each target's depth; every problem said at once (exit 2), each at its item's line.
    Without any ``dependsOn``, ``workloads`` as they are."""
    problems = Problems()
    graph: dict[Key, tuple[Item, ...]] = {}
    for w in workloads.values():
        for index, t in enumerate(w.targets):
            if t.depends_on:
                with problems.each():
                    graph[(w.name, t.name)] = _resolved(workloads, w, index, t)
    problems.done()
    if not graph:
        return workloads
    depths = _depths(workloads, graph)
    out = dict(workloads)
    for w in workloads.values():
        if any((w.name, t.name) in depths for t in w.targets):
            targets = [
                replace(t, depends_on=graph.get((w.name, t.name), ()), depth=depths.get((w.name, t.name), 0))
                for t in w.targets
            ]
            out[w.name] = replace(w, targets=tuple(targets))
    return out


def _resolved(
    workloads: dict[str, Workload], w: Workload, index: int, t: DeploymentTarget
) -> tuple[Item, ...]:
    """The items of one target, each resolved; the first problem raised at its line."""
    out: list[Item] = []
    for j, (workload, target, line) in enumerate(t.depends_on):
        try:
            key = _target(workloads, workload or w.name, target, t.environment)
            if key == (w.name, t.name):
                raise _Refused(f"{named(key)} cannot depend on itself")
            if any(key == (a, b) for a, b, _ in out):
                raise _Refused(f"{named(key)} is listed twice")
        except _Refused as err:
            where = f"spec.deploymentTargets[{index}].dependsOn[{j}]"
            raise ConfigError(f"{where}: {err}", file=t.source.file, line=line) from None
        out.append((*key, line))
    return tuple(out)


def _target(workloads: dict[str, Workload], workload: str, target: str, environment: str) -> Key:
    """The (workload, target) an item names: ``target`` of ``workload``, which must be of
    ``environment``; or, without ``target``, the workload's one target of ``environment``."""
    other = workloads.get(workload)
    if other is None:
        near = difflib.get_close_matches(workload, sorted(workloads), n=1, cutoff=0.7)
        raise _Refused(f"no workload {workload!r} on main" + (f", did you mean {near[0]!r}?" if near else ""))
    if not target:
        return workload, _only_target(workload, other, environment)
    return workload, _named_target(workload, other, target, environment)


def _only_target(workload: str, other: Workload, environment: str) -> str:
    """The workload's one deployment target in ``environment`` (an item that names no target)."""
    here = [x.name for x in other.targets if x.environment == environment]
    if not here:
        raise _Refused(
            f"workload {workload!r} has no deployment target in {environment}, "
            "and a target comes after targets of its own environment only"
        )
    if len(here) > 1:
        raise _Refused(
            f"workload {workload!r} has {len(here)} deployment targets in {environment} "
            f"({', '.join(here)}): name one with 'target'"
        )
    return here[0]


def _named_target(workload: str, other: Workload, target: str, environment: str) -> str:
    """``target`` of the workload, which must be one of its targets in ``environment``."""
    found = next((x for x in other.targets if x.name == target), None)
    if found is None:
        names = [x.name for x in other.targets]
        near = difflib.get_close_matches(target, names, n=1, cutoff=0.7)
        hint = f", did you mean {near[0]!r}?" if near else f" (it has {', '.join(names) or 'none'})"
        raise _Refused(f"workload {workload!r} has no deployment target {target!r}{hint}")
    if found.environment != environment:
        raise _Refused(
            f"{named((workload, target))} is a target of environment {found.environment}, not {environment}: "
            "a target comes after targets of its own environment only"
        )
    return target


def _depths(workloads: dict[str, Workload], graph: dict[Key, tuple[Item, ...]]) -> dict[Key, int]:
    """Each target's depth in the graph (0: it depends on nothing); a cycle is an error at the
    line where it starts: the item of the target read first in it that names the next."""
    deps = {key: tuple((w, t) for w, t, _ in items) for key, items in graph.items()}
    try:
        order = list(TopologicalSorter(deps).static_order())
    except CycleError as err:
        raise _cycle_error(workloads, graph, list(reversed(err.args[1][1:]))) from None
    depths: dict[Key, int] = {}
    for key in order:  # each after every target it depends on
        depths[key] = 1 + max((depths[d] for d in deps.get(key, ())), default=-1)
    return depths


def _cycle_error(
    workloads: dict[str, Workload], graph: dict[Key, tuple[Item, ...]], cycle: list[Key]
) -> ConfigError:
    """``cycle``: each target depends on the next, the last on the first."""
    read = [(w.name, t.name) for w in workloads.values() for t in w.targets]
    start = min(range(len(cycle)), key=lambda i: read.index(cycle[i]))
    cycle = cycle[start:] + cycle[:start]
    workload, target = cycle[0]
    w = workloads[workload]
    index = next(i for i, t in enumerate(w.targets) if t.name == target)
    j, line = next((j, line) for j, (a, b, line) in enumerate(graph[cycle[0]]) if (a, b) == cycle[1])
    path = " -> ".join(named(k) for k in [*cycle, cycle[0]])
    return ConfigError(
        f"spec.deploymentTargets[{index}].dependsOn[{j}]: a cycle, {path}: none of them could ever be applied",
        file=w.targets[index].source.file,
        line=line,
    )


def named(key: Key) -> str:
    """A deployment target as messages name it: ``<workload>/<target>``."""
    return f"{key[0]}/{key[1]}"
