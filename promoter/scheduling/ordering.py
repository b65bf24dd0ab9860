"""Ordering on a cluster, against the environment branch: a target that ``dependsOn`` another
comes after it on each cluster of each cluster type it is assigned to, so the other must be
assigned there too. Flux's ``dependsOn`` names an object of the same cluster, and a
Kustomization that waits for one that is not there waits forever; Argo CD would apply the
target without it. Either way the order the Workload asks for would not hold: an error (exit 2)
at the ``dependsOn`` item, before anything is pushed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from promoter.errors import ConfigError, Problems
from promoter.scheduling.targets import Pair


def check_assigned(pairs: Mapping[str, Sequence[Pair]], environment: str) -> None:
    """Every dependency of an assignment is assigned to its cluster type too; each that is not,
    one problem naming the cluster types it is missing from."""
    missing: dict[tuple[str, str, int], tuple[str, int | None, list[str]]] = {}
    for ct, assigned in pairs.items():
        here = {(w.name, t.name) for _, w, t in assigned}
        for _, w, t in assigned:
            for index, (workload, target, line) in enumerate(t.depends_on):
                if (workload, target) not in here:
                    key = (f"{w.name}/{t.name}", f"{workload}/{target}", index)
                    missing.setdefault(key, (t.source.file, line, []))[2].append(ct)
    problems = Problems()
    for (dependent, dependency, _), (file, line, cluster_types) in missing.items():
        types = f"cluster type{'s' if len(cluster_types) > 1 else ''} {', '.join(cluster_types)}"
        problems.add(
            ConfigError(
                f"deployment target {dependent} depends on {dependency}, which no SchedulingPolicy of "
                f"{environment} assigns to {types}, where {dependent} is assigned: there it would wait for "
                f"{dependency} forever (Flux) or start without it (Argo CD); assign {dependency} there too, "
                f"or keep {dependent} off {'them' if len(cluster_types) > 1 else 'it'}",
                file=file,
                line=line,
            )
        )
    problems.done()
