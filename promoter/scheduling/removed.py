"""Why an assignment the platform branch holds is no longer scheduled (pure): the change to
the control plane that took it away, in the words of the objects the user edits. The removal
guard names these causes when it refuses a promotion."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from promoter.model import (
    ClusterType,
    DeploymentTarget,
    EnvironmentObjects,
    MainObjects,
    SchedulingPolicy,
    Source,
    Workload,
)
from promoter.scheduling.targets import cluster_type_selection_labels, target_name, target_selection_labels

Target = tuple[Workload, DeploymentTarget]


@dataclass(frozen=True)
class Inputs:
    """What an environment is scheduled from; ``old_*`` are what its platform branch was
    rendered from (None where the provenance does not name it or the commit is not here)."""

    environment: str
    main: MainObjects
    objects: EnvironmentObjects
    old_main: MainObjects | None = None
    old_objects: EnvironmentObjects | None = None


def causes(removed: Iterable[str], inputs: Inputs) -> list[str]:
    """The distinct causes of these removals (``<cluster-type>/<workload>-<target>``), the one
    behind most of them first."""
    counted = Counter(_cause(*_split(path), inputs) for path in removed)
    return [cause for cause, _ in counted.most_common()]


def _split(path: str) -> tuple[str, str]:
    cluster_type, _, folder = path.partition("/")
    return cluster_type, folder


def _at(source: Source) -> str:
    return f"{source.file}:{source.line}" if source.line else source.file


def _targets(main: MainObjects, environment: str) -> dict[str, Target]:
    return {
        target_name(w, t): (w, t)
        for w in main.workloads.values()
        for t in w.targets
        if t.environment == environment
    }


def _cause(cluster_type: str, folder: str, inputs: Inputs) -> str:
    objects = inputs.objects
    if cluster_type not in objects.cluster_types:
        old = inputs.old_objects.cluster_types.get(cluster_type) if inputs.old_objects else None
        was = f" (it was at {_at(old.source)})" if old is not None else ""
        return f"cluster type {cluster_type!r} is gone from branch {objects.branch}{was}"
    targets = _targets(inputs.main, inputs.environment)
    if folder not in targets:
        return _target_gone(folder, inputs)
    workload, target = targets[folder]
    labels = target_selection_labels(workload, target)
    selecting = [p for p in objects.policies.values() if p.targets.matches(labels, workload.workspace)]
    if not selecting:
        return _unselected(folder, inputs)
    return _cluster_type_unmatched(objects.cluster_types[cluster_type], selecting, inputs)


def _target_gone(folder: str, inputs: Inputs) -> str:
    old = _targets(inputs.old_main, inputs.environment).get(folder) if inputs.old_main else None
    if old is None:
        return f"no deployment target of main renders {folder!r} in {inputs.environment} any more"
    workload, target = old
    now = inputs.main.workloads.get(workload.name)
    if now is None:
        return f"workload {workload.name!r} is gone from main (it was at {_at(workload.source)})"
    moved = next((t for t in now.targets if t.name == target.name), None)
    if moved is not None:
        return (
            f"deployment target {target.name!r} of workload {workload.name!r} moved to environment "
            f"{moved.environment!r} ({_at(moved.source)})"
        )
    return f"deployment target {target.name!r} is gone from workload {workload.name!r} ({_at(now.source)})"


def _unselected(folder: str, inputs: Inputs) -> str:
    """No policy selects the deployment target now: say which one did before, where known."""
    old = inputs.old_objects
    before = [p for p in old.policies.values() if _selected_before(p, folder, inputs)] if old else []
    for policy in before:
        if policy.name not in inputs.objects.policies:
            return f"SchedulingPolicy {policy.name!r} is gone from branch {inputs.objects.branch}"
    if before:
        now = inputs.objects.policies[before[0].name]
        return f"SchedulingPolicy {now.name!r} ({_at(now.source)}) no longer selects deployment target {folder!r}"
    return f"no SchedulingPolicy selects deployment target {folder!r}"


def _selected_before(policy: SchedulingPolicy, folder: str, inputs: Inputs) -> bool:
    old = _targets(inputs.old_main or inputs.main, inputs.environment).get(folder)
    if old is None:
        return False
    return policy.targets.matches(target_selection_labels(*old), old[0].workspace)


def _cluster_type_unmatched(ct: ClusterType, selecting: list[SchedulingPolicy], inputs: Inputs) -> str:
    """Policies select the target but none takes this cluster type: a selector that now
    matches nothing, or the cluster type's labels changed."""
    everything = inputs.objects.cluster_types.values()
    for policy in selecting:
        if not any(policy.cluster_types.matches(cluster_type_selection_labels(c)) for c in everything):
            return (
                f"SchedulingPolicy {policy.name!r} ({_at(policy.source)}): its clusterTypeSelector "
                "matches no cluster type"
            )
    old = inputs.old_objects.cluster_types.get(ct.name) if inputs.old_objects else None
    if old is not None and old.labels != ct.labels:
        return f"cluster type {ct.name!r} ({_at(ct.source)}): labels changed, {label_change(old.labels, ct.labels)}"
    names = ", ".join(repr(p.name) for p in selecting)
    return f"cluster type {ct.name!r} matches the clusterTypeSelector of no SchedulingPolicy ({names}) that selects its targets"


def label_change(old: dict[str, str], new: dict[str, str]) -> str:
    """``size: large -> big, tier=gold removed, zone=a added``."""
    parts = []
    for key in sorted(old.keys() | new.keys()):
        if key not in new:
            parts.append(f"{key}={old[key]} removed")
        elif key not in old:
            parts.append(f"{key}={new[key]} added")
        elif old[key] != new[key]:
            parts.append(f"{key}: {old[key]} -> {new[key]}")
    return ", ".join(parts)
