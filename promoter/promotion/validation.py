"""What ``promoter validate`` checks beyond loading: every environment branch read (all their
problems at once), each environment rendered and judged, and the warnings a promotion would
meet: a SchedulingPolicy that assigns nothing, a config ConfigMap applied nowhere, a
commitStatus gate its Flux cannot satisfy, an assignment the removal guard reports
(docs/configuration.md#what-validate-warns-of). Nothing is printed here: the command says what
is returned."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from promoter.clock import Clock
from promoter.controlplane.repo import ControlPlane
from promoter.errors import Problems, PromoterError
from promoter.gates.flux import runs_flux
from promoter.gates.flux_checks import gate_warnings
from promoter.model import ConfigMap, Environment, EnvironmentObjects, MainObjects, Source
from promoter.promotion import messages, removals, sources
from promoter.promotion.removals import Scene
from promoter.promotion.sources import SourceChecker, wanted
from promoter.promotion.waves import Step, resolve
from promoter.rendering.tree import Rendered, render_environment
from promoter.scheduling.targets import PLATFORM_CONFIG, idle_policies

if TYPE_CHECKING:  # the runtime sits above: validate's command builds it and hands it in
    from promoter.forges.github.access import Finding
    from promoter.runtime import Runtime


@dataclass
class EnvironmentCheck:
    """One environment rendered and judged: its waves, what the removal guard reports and the
    other warnings, each without its ``warning:`` word, in the order they were found."""

    environment: str
    rendered: Rendered
    waves: list[str]
    removals: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """One environment of ``validate -o json|yaml`` (docs/cli.md)."""
        data: dict[str, Any] = {
            "environment": self.environment,
            "assignments": len(self.rendered.assignments),
            "files": len(self.rendered.files),
        }
        if self.waves:
            data["waves"] = self.waves
        if self.removals:
            data["removals"] = self.removals
        if self.warnings:
            data["warnings"] = self.warnings
        return data


def branches(cp: ControlPlane, main: MainObjects) -> list[tuple[Environment, EnvironmentObjects]]:
    """Every environment's PR and commit templates checked and its branch read, all their
    problems said at once (then each is rendered: a
    template's problem is the same in every environment, said once)."""
    loaded, problems = [], Problems()
    with problems.each():  # the first template mistake: a Pipeline's is the same in every environment
        for env in main.pipeline.environments:
            messages.check_environment(env)
    for env in main.pipeline.environments:
        with problems.each():
            loaded.append((env, cp.environment(env)))
    problems.done()
    return loaded


def check_environment(
    cp: ControlPlane,
    platforms: Runtime | None,
    main: MainObjects,
    env: Environment,
    objects: EnvironmentObjects,
) -> EnvironmentCheck:
    """Render and judge one environment; ``platforms``: the platform repos to compare the render
    with for removals (None: no comparison)."""
    rendered = render_environment(main, objects, env.name)
    steps = resolve(env, objects)
    waves = [w.name for w in steps] if env.waves else []  # over the branch's cluster types
    found = removal_warnings(cp, platforms, main, env, objects, rendered, steps)
    unused = idle_policy_warnings(main, env.name, objects) + unused_config_warnings(
        env.name, objects, rendered
    )
    unused += flux_gate_warnings(main, env, objects, steps)
    return EnvironmentCheck(env.name, rendered, waves, found, unused)


def idle_policy_warnings(main: MainObjects, environment: str, objects: EnvironmentObjects) -> list[str]:
    """A warning for each SchedulingPolicy that assigns nothing (a selector that selects nothing)."""
    return [
        f"{_where(policy.source)}: SchedulingPolicy {policy.name!r} assigns nothing: {why}"
        for policy, why in idle_policies(main, objects, environment)
    ]


def flux_gate_warnings(
    main: MainObjects, env: Environment, objects: EnvironmentObjects, steps: tuple[Step, ...]
) -> list[str]:
    """A warning for each commitStatus gate that waits for a status the Flux its cluster types
    run cannot post (promoter.gates.flux_checks); each gate once, over every step it gates."""
    judged: dict[tuple[str, ...], tuple[Step, set[str]]] = {}
    for step in steps:
        key = tuple(str(g.source) for g in step.gates)
        judged.setdefault(key, (step, set()))[1].update(step.cluster_types)
    warnings = []
    for step, types in judged.values():
        cluster_types = (objects.cluster_types[name] for name in sorted(types))
        runs = {ct.name: r for ct in cluster_types if (r := runs_flux(ct, main.pipeline.versions))}
        warnings += gate_warnings(env.name, step.gates, runs)
    return warnings


def unused_config_warnings(environment: str, objects: EnvironmentObjects, rendered: Rendered) -> list[str]:
    """A warning for each config ConfigMap that no assignment of the environment takes (its labels
    match nothing: ``sise: small``); none when nothing is assigned (no ConfigMap is singled out)."""
    if not rendered.assignments:
        return []
    used = {name for a in rendered.assignments for name in a.config_sources}
    return [
        _unused_config(cm, environment)
        for cm in objects.configmaps.values()
        if cm.labels.get(PLATFORM_CONFIG) == "true" and cm.name not in used
    ]


def _unused_config(cm: ConfigMap, environment: str) -> str:
    labels = ", ".join(f"{k}: {v}" for k, v in cm.labels.items() if k != PLATFORM_CONFIG) or "none"
    return (
        f"{_where(cm.source)}: config ConfigMap {cm.name!r} (labels {labels}) matches no assignment of "
        f"{environment}: its values are applied nowhere"
    )


def _where(source: Source) -> str:
    return f"{source.file}:{source.line}" if source.line else source.file


def removal_warnings(
    cp: ControlPlane,
    runtime: Runtime | None,
    main: MainObjects,
    env: Environment,
    objects: EnvironmentObjects,
    rendered: Rendered,
    steps: tuple[Step, ...],
) -> list[str]:
    """The removal guard's warnings for one environment, against its platform branch as it is."""
    if runtime is None:
        return []
    platform = runtime.platform_for(env)
    try:
        base = platform.fetch([env.gitops_branch])[env.gitops_branch]
    except PromoterError:  # no platform repo yet: nothing to remove
        return []
    scene = Scene(main, env, objects, rendered.files, base, None, frozenset())
    found = removals.warnings(cp, platform, scene, steps, rendered.cluster_types)
    return [line.removeprefix("warning: ") for line in found]


def check_sources(main: MainObjects) -> int:
    """``--sources``: how many sources answered; exit 2 at the first target whose source does not."""
    sources.refuse(SourceChecker().check(main), "check its URL, branch, tag or chart, and the credentials")
    return len({wanted(t.manifests) for w in main.workloads.values() for t in w.targets})


def github_findings(
    cp: ControlPlane, main: MainObjects, sha: str, variable: str, clock: Clock, environ: Mapping[str, str]
) -> list[Finding]:
    """``--github``: a finding per permission a promotion needs on GitHub (nothing is changed)."""
    # Deferred: PyGithub and requests add 0.3 s to every start of the promoter, --help included
    # (measured: 607 ms -> about 900 ms), and only --github needs them.
    from promoter.forges.github import access  # heavy: PyGithub loads only when GitHub is used

    return access.check_github(cp, main.pipeline, sha, variable, clock, environ)
