"""``promoter validate``'s warnings about ``commitStatus`` gates that wait for statuses the Flux
their cluster types run cannot post (docs/configuration.md#what-validate-warns-of).

Only a release the Pipeline or a ClusterType declares (``spec.versions.flux``) is judged: with
none declared, promoter does not know the clusters run Flux and says nothing. A gate whose
contexts are all ``argocd/...`` reads Argo CD's statuses and is not judged either. A ``hub``
gate beside the gate (in the same list) sees failures and counts clusters, so the warnings it
answers are not given then.

Flux 2.9's ``DisableCommitStatusEvent`` (no success status) is not warned of: promoter cannot see
the flag, so the warning could never be answered and every 2.9 Pipeline would fail ``validate
--strict``. The gate's timeout names it as the likely cause instead (``flux.silence_cause``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from promoter.gates import flux
from promoter.gates.commit_status import CommitStatusGate
from promoter.model import GateSpec, Release


def gate_warnings(environment: str, gates: Sequence[GateSpec], runs: Mapping[str, Release]) -> list[str]:
    """One line per problem, naming the gate's file and line: ``promoter.yaml:14: gate
    commitStatus kustomization/platform/* min 3 of qa: ...``. ``runs``: the Flux release of each
    cluster type the gates judge, for those that declare one."""
    if not runs:
        return []
    beside_hub = any(g.type == "hub" for g in gates)
    by_release: dict[Release, list[str]] = {}
    for name, release in sorted(runs.items()):
        by_release.setdefault(release, []).append(name)
    lines: list[str] = []
    for spec in gates:
        if spec.type != "commitStatus":
            continue
        gate = CommitStatusGate.from_spec(spec.spec, spec.source)
        if all(c.startswith("argocd/") for c in [*gate.patterns, *gate.required]):
            continue
        head = f"{spec.source}: gate {gate.describe()} of {environment}"
        lines.extend(f"{head}: {problem}" for problem in _problems(gate, by_release, beside_hub))
    return lines


def _problems(gate: CommitStatusGate, by_release: dict[Release, list[str]], beside_hub: bool) -> list[str]:
    problems = []
    quiet = [r for r in by_release if not flux.posts_failures(r)]
    if quiet and not beside_hub:
        problems.append(
            f"{_runs(quiet, by_release)}, which posts no failure status (fluxcd/notification-controller#1373): "
            "a failed reconciliation is silence, seen only at the timeout; add a hub gate beside it "
            "(docs/hub.md#the-hub-gate), or run Flux 2.9"
        )
    if gate.min_count > 1 and any(flux.default_shaped(p) for p in gate.patterns) and not beside_hub:
        problems.append(_one_context(gate, list(by_release)))
    return problems


def _one_context(gate: CommitStatusGate, releases: list[Release]) -> str:
    """minCount over Flux's default contexts counts Providers, not clusters."""
    old = [r for r in releases if not flux.has_status_expr(r)]
    fix = (
        f"Flux {flux.version(old[0])} has no Provider spec.commitStatusExpr (2.6 on): add a hub gate beside it"
        if old
        else "give each cluster its own context with a Provider v1beta3 spec.commitStatusExpr and list "
        "those in 'required' (docs/health-gates.md#one-context-per-cluster), or add a hub gate beside it"
    )
    return (
        f"minCount {gate.min_count} counts contexts, and Flux's default context {flux.DEFAULT_CONTEXT} is "
        "one per Provider, not per cluster (clusters whose Providers share a UID share one; a recreated "
        f"Provider adds one): {fix}"
    )


def _runs(releases: list[Release], by_release: dict[Release, list[str]]) -> str:
    """``cluster types large, small run Flux 2.8``; ``cluster type edge runs Flux 2.9``."""
    said = []
    for release in sorted(releases):
        names = by_release[release]
        many = len(names) > 1
        said.append(
            f"cluster type{'s' if many else ''} {', '.join(names)} run{'' if many else 's'} "
            f"Flux {flux.version(release)}"
        )
    return "; ".join(said)
