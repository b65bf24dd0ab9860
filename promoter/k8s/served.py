"""Which API versions a cluster serves, from the versions it declares it runs (a ClusterType's
``spec.versions``, or the Pipeline's as a default): Kubernetes, Flux, Argo CD.

promoter's schemas are those of the newest releases (``schemas/README.md``): Flux 2.8, Argo CD
3.6, Kubernetes 1.33. What a cluster declaring nothing is judged by stays exactly that. A cluster
that declares an older release is judged by what that release serves, from the tables below:

- a version promoter has a schema for, served by that release: checked against the schema;
- a version promoter has a schema for, not yet served by that release (Flux's HelmRelease ``v2``
  before 2.3): an error;
- an older version that release still serves but the newest does not (Flux's ``v1beta2`` kinds
  before 2.8, Kubernetes' ``policy/v1beta1`` before 1.25): accepted, with a warning that the
  newer release drops it; promoter has no schema for it, so only its apiVersion is judged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Protocol

Release = tuple[int, int]
NEVER: Release = (10**6, 0)

#: Flux: (group, kind) -> [(version, served from, served until (not included))].
FLUX: dict[tuple[str, str], tuple[tuple[str, Release, Release], ...]] = {
    ("kustomize.toolkit.fluxcd.io", "Kustomization"): (("v1", (2, 0), NEVER), ("v1beta2", (0, 0), (2, 8))),
    ("source.toolkit.fluxcd.io", "GitRepository"): (("v1", (2, 0), NEVER), ("v1beta2", (0, 0), (2, 8))),
    ("source.toolkit.fluxcd.io", "HelmRepository"): (("v1", (2, 3), NEVER), ("v1beta2", (0, 0), (2, 8))),
    ("source.toolkit.fluxcd.io", "OCIRepository"): (("v1", (2, 6), NEVER), ("v1beta2", (0, 0), (2, 8))),
    ("helm.toolkit.fluxcd.io", "HelmRelease"): (("v2", (2, 3), NEVER), ("v2beta2", (2, 2), (2, 8))),
}

#: Kubernetes: group/version -> (kinds, removed in) for the versions 1.33 no longer serves.
KUBERNETES_REMOVED: dict[str, tuple[frozenset[str], Release]] = {
    "batch/v1beta1": (frozenset({"CronJob"}), (1, 25)),
    "discovery.k8s.io/v1beta1": (frozenset({"EndpointSlice"}), (1, 25)),
    "events.k8s.io/v1beta1": (frozenset({"Event"}), (1, 25)),
    "autoscaling/v2beta1": (frozenset({"HorizontalPodAutoscaler"}), (1, 25)),
    "policy/v1beta1": (frozenset({"PodDisruptionBudget", "PodSecurityPolicy"}), (1, 25)),
    "node.k8s.io/v1beta1": (frozenset({"RuntimeClass"}), (1, 25)),
    "autoscaling/v2beta2": (frozenset({"HorizontalPodAutoscaler"}), (1, 26)),
    "flowcontrol.apiserver.k8s.io/v1beta1": (
        frozenset({"FlowSchema", "PriorityLevelConfiguration"}),
        (1, 26),
    ),
    "storage.k8s.io/v1beta1": (frozenset({"CSIStorageCapacity"}), (1, 27)),
    "flowcontrol.apiserver.k8s.io/v1beta2": (
        frozenset({"FlowSchema", "PriorityLevelConfiguration"}),
        (1, 29),
    ),
    "flowcontrol.apiserver.k8s.io/v1beta3": (
        frozenset({"FlowSchema", "PriorityLevelConfiguration"}),
        (1, 32),
    ),
}

_RELEASE = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?")


def parse_release(text: str) -> Release | None:
    """``1.29``, ``v2.3.1`` -> (major, minor); None for anything else."""
    match = _RELEASE.fullmatch(text.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def show(release: Release) -> str:
    return f"{release[0]}.{release[1]}"


class Runs(Protocol):
    """What a cluster runs (``promoter.model.Versions``): None is the newest release."""

    @property
    def kubernetes(self) -> Release | None: ...

    @property
    def flux(self) -> Release | None: ...

    def __bool__(self) -> bool: ...


@dataclass(frozen=True)
class Verdict:
    """``check``: against promoter's schema; ``accept``: served, no schema (``warning`` says
    why); ``refuse``: not served (``rule`` says so)."""

    action: Literal["check", "accept", "refuse"]
    rule: str = ""
    warning: str = ""


CHECK = Verdict("check")


def flux_verdict(group: str, kind: str, version: str, packaged: bool, runs: Release | None) -> Verdict | None:
    """The verdict for a Flux kind on a cluster running Flux ``runs``; None when the table does
    not know the kind or the cluster declares no Flux (promoter's usual judgement applies)."""
    rows = FLUX.get((group, kind))
    if rows is None or runs is None:
        return None
    for name, since, until in rows:
        if name == version:
            return _version_verdict(group, kind, version, packaged, runs, (since, until), rows[0][0])
    served = ", ".join(f"{group}/{n}" for n, since, until in rows if since <= runs < until)
    return Verdict(
        "refuse", rule=f"{group}/{version} {kind} is not served by Flux {show(runs)} (served: {served})"
    )


def _version_verdict(
    group: str,
    kind: str,
    version: str,
    packaged: bool,
    runs: Release,
    span: tuple[Release, Release],
    newest: str,
) -> Verdict:
    """The verdict for a Flux kind's version that Flux serves over ``span`` (since, until):
    refused outside it; checked when promoter has its schema; else accepted with a warning
    when a later Flux stops serving it (``newest``: the version to move to)."""
    since, until = span
    if not since <= runs < until:
        said = f"from Flux {show(since)}" if runs < since else f"until Flux {show(until)} (not included)"
        return Verdict(
            "refuse", rule=f"{group}/{version} {kind} is not served by Flux {show(runs)} (served {said})"
        )
    if packaged:
        return CHECK
    return Verdict(
        "accept",
        warning=f"{group}/{version} {kind} is served by Flux {show(runs)}, but Flux {show(until)} no longer "
        f"serves it: move to {group}/{newest} before upgrading (promoter has no schema for "
        f"{version}, so only its apiVersion is checked)",
    )


def kubernetes_verdict(api_version: str, kind: str, runs: Release | None) -> Verdict | None:
    """Accepted with a warning: a kind of a version Kubernetes ``runs`` still serves and the
    newest no longer does. None: promoter's usual judgement applies."""
    removed = KUBERNETES_REMOVED.get(api_version)
    if runs is None or removed is None or kind not in removed[0] or runs >= removed[1]:
        return None
    return Verdict(
        "accept",
        warning=f"{api_version} {kind} is served by Kubernetes {show(runs)}, but Kubernetes "
        f"{show(removed[1])} no longer serves it (promoter has no schema for it, so only its apiVersion is checked)",
    )


def verdict(api_version: str, kind: str, packaged: frozenset[str], runs: Runs) -> Verdict | None:
    """What a cluster running ``runs`` makes of ``apiVersion``/``kind`` (``packaged``: the
    versions promoter has schemas for); None: judge it as the newest releases would."""
    if not runs:
        return None
    group, _, version = api_version.rpartition("/")
    return flux_verdict(group, kind, version, version in packaged, runs.flux) or kubernetes_verdict(
        api_version, kind, runs.kubernetes
    )
