"""``promoter convert --from kalypso``: a Kalypso control plane as promoter's own, pure but for the
reads of the control plane and the workload repos (docs/kalypso.md#convert).

What renders the same tree under promoter's rules:

- main: one ``Pipeline`` (the order given, each environment's branch and GitOps place from its
  ``GitOpsRepo``), one ``Workload`` per Kalypso Workload of the registered repos (workspace from
  the registration; each target's labels the Kalypso-merged ones, so that promoter, where the
  target wins, sees what Kalypso saw; targets of environments not converted left out), the
  Templates translated (``translate``), and a ``config`` Template that writes the ConfigMap as
  Kalypso's scheduler does, in Kalypso's namespace;
- each environment branch: the ClusterTypes and SchedulingPolicies in promoter's apiVersion, and
  per cluster type one ConfigMap labelled ``cluster-type`` holding the config Kalypso merges for it
  (Kalypso merges shallowly in name order, promoter deeply by specificity: the merged result is
  what is kept)."""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import Any

import yaml

from promoter.controlplane.sources import with_extra
from promoter.controlplane.yamlfile import plain
from promoter.errors import ConfigError
from promoter.gotemplate.functions import NAMES
from promoter.gotemplate.nodes import Ident
from promoter.gotemplate.parser import parse
from promoter.k8s.names import bounded
from promoter.kalypso.control import KalypsoControlPlane
from promoter.kalypso.generation import RULES, Generation
from promoter.kalypso.loading import FetchedWorkloads, KalypsoBranch, KalypsoMain
from promoter.kalypso.promotion import KalypsoPromotion, Order
from promoter.kalypso.render import SH_CONTENT
from promoter.kalypso.schedule import Placement, flux_labels, platform_config
from promoter.kalypso.translate import NAMESPACES, translate
from promoter.model import (
    ClusterType,
    DeploymentTarget,
    Environment,
    GateSpec,
    Selector,
    Template,
    Versions,
    Workload,
)

API = "promoter.dev/v1alpha1"
CONFIG_TEMPLATE = "kalypso-config"


@dataclass(frozen=True)
class Converted:
    """The promoter control plane: files per branch (``main`` and each environment branch)."""

    branches: dict[str, dict[str, bytes]]
    workload_commits: dict[str, str]  # registration -> the commit its Workloads were read at
    left_out: tuple[str, ...] = ()  # targets of environments not converted (promoter refuses them)


def convert(kcp: KalypsoControlPlane, order: Order, commit: str) -> Converted:
    promotion = KalypsoPromotion(kcp, order)
    main = promotion.main(commit)
    kmain = kcp.main(commit)
    fetched = [kcp.fetch(name, kmain) for name in sorted(kmain.registrations)]
    environments = main.pipeline.environments
    files: dict[str, bytes] = {"promoter.yaml": _dump([_pipeline(main.pipeline.platform_url, environments)])}
    workloads, left_out = _workload_files(fetched, {e.name for e in environments}, kcp.naming)
    files.update(workloads)
    for name in sorted(kmain.templates):
        files[f"templates/{name}.yaml"] = _dump([_template(kmain.templates[name], kcp.naming)])
    files[f"templates/{CONFIG_TEMPLATE}.yaml"] = config_template(kcp.naming)
    branches = {"main": files}
    for env in environments:
        branches[env.branch] = _environment_branch(kcp, kmain, env, commit)
    return Converted(branches, {f.registration.name: f.commit for f in fetched}, tuple(left_out))


def _workload_files(
    fetched: list[FetchedWorkloads], names: set[str], naming: Generation
) -> tuple[dict[str, bytes], list[str]]:
    """A file per Workload keeping its targets of the environments ``names``, and the targets
    left out (``<workload>-<target> (<environment>)``)."""
    files: dict[str, bytes] = {}
    left_out: list[str] = []
    for f in fetched:
        note = f"from {f.registration.workload.repo}@{f.commit}"
        flux = f.registration.name if naming != "2023" else None
        for w in f.workloads:
            kept = [t for t in w.targets if t.environment in names]
            left_out += [
                f"{w.name}-{t.name} ({t.environment})" for t in w.targets if t.environment not in names
            ]
            files[f"workloads/{w.name}.yaml"] = _dump([_workload(w, kept, flux)], note)
    return files, left_out


def _environment_branch(
    kcp: KalypsoControlPlane, kmain: KalypsoMain, env: Environment, commit: str
) -> dict[str, bytes]:
    """The files of ``env``'s branch: 2023's from the branch alone, the current scheduler's
    from the environment rendered (its config is per target)."""
    kenv = kmain.environments[env.name]
    if kcp.naming == "2023":
        return _branch(kcp.branch(kenv))
    rendered = kcp.render(env.name, commit)
    return _current_branch(rendered.branch, rendered.placements, kmain.templates)


def _template(template: Template, naming: Generation) -> dict[str, Any]:
    """A Kalypso Template as promoter's: under the current naming, one whose manifests are all
    strings is kept as it is, in Go text/template (``spec.language: gotemplate``); any other is
    translated to jinja2 (``translate``). What promoter cannot write is exit 2 naming the field."""
    if naming != "2023" and template.content_type == SH_CONTENT:
        raise ConfigError(
            f"spec.contentType: template {template.name} writes its config to platform-config.sh "
            "(contentType sh), which a promoter control plane cannot: its config file is platform-config.yaml",
            file=template.source.file,
            line=template.source.line,
        )
    if naming != "2023" and all(isinstance(m.body, str) for m in template.manifests):
        _check_yaml_functions(template, naming)
        return {
            "apiVersion": API,
            "kind": "Template",
            "metadata": {"name": template.name},
            "spec": {
                "type": template.type,
                "language": "gotemplate",
                "manifests": [m.body for m in template.manifests],
            },
        }
    return translate(template, naming)


def _check_yaml_functions(template: Template, generation: Generation) -> None:
    """A promoter ``gotemplate`` Template writes ``toYaml`` and ``stringify`` as Kalypso's HEAD
    does (yaml.v3); the 2024 scheduler wrote yaml.v2, so a Template that calls them would not
    render the same: exit 2 naming it."""
    if RULES[generation].yaml == "v3":
        return
    for i, manifest in enumerate(template.manifests):
        assert isinstance(manifest.body, str)
        used = sorted(
            _called(parse(manifest.body, template.source.file, NAMES).body) & {"toYaml", "stringify"}
        )
        if used:
            raise ConfigError(
                f"spec.manifests[{i}]: template {template.name} calls {' and '.join(used)}, which Kalypso's "
                f"{generation} scheduler writes in yaml.v2 and a promoter gotemplate Template in yaml.v3 "
                "(Kalypso's since 2025-04): convert with --kalypso-generation head once your scheduler runs it",
                file=template.source.file,
                line=manifest.line or template.source.line,
            )


def _called(nodes: Any) -> set[str]:
    """The names of the functions a parse tree calls."""
    found: set[str] = set()
    for node in nodes if isinstance(nodes, tuple | list) else (nodes,):
        if isinstance(node, Ident):
            found.add(node.name)
        elif is_dataclass(node):
            for f in fields(node):
                value = getattr(node, f.name)
                if isinstance(value, tuple | list) or is_dataclass(value):
                    found |= _called(value)
    return found


def _current_branch(
    branch: KalypsoBranch, placements: dict[str, list[Placement]], templates: dict[str, Template]
) -> dict[str, bytes]:
    """An environment branch for the current scheduler's rules: each ClusterType naming its
    configType Template, and per placement a ConfigMap (labelled ``cluster-type`` and
    ``deployment-target``) holding the config Kalypso merges for that target on that cluster type
    (Kalypso selects config per target and merges lists by appending: the result is kept)."""
    files: dict[str, bytes] = {}
    for name, ct in sorted(branch.cluster_types.items()):
        config_type = ct.config_type if ct.config_type in templates else CONFIG_TEMPLATE
        docs: list[dict[str, Any]] = [_cluster_type(ct, config_type)]
        sources: set[str] = set()
        for p in placements.get(name, []):
            if p.config:
                docs.append(_placement_config(p))
                sources.update(p.config_sources)
        note = f"config merged as Kalypso merges it, from {', '.join(sorted(sources))}" if sources else None
        files[f"cluster-types/{name}.yaml"] = _dump(docs, note)
    files.update(_policies(branch))
    return files


def _placement_config(p: Placement) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": bounded(f"kalypso-{p.cluster_type.name}-{p.target.name}", 253),
            "labels": {
                "platform-config": "true",
                "cluster-type": p.cluster_type.name,
                "deployment-target": p.target.name,
            },
        },
        "data": dict(p.config),
    }


def config_template(naming: Generation) -> bytes:
    """Kalypso's config file: ConfigMap platform-config in Kalypso's namespace, keys sorted."""
    return f"""\
# Kalypso's config file: ConfigMap platform-config in Kalypso's namespace, keys sorted as Kalypso writes them.
apiVersion: {API}
kind: Template
metadata:
  name: {CONFIG_TEMPLATE}
spec:
  type: config
  manifests:
    - |
      apiVersion: v1
      data:
        {{{{ config | configmap_data | to_yaml | indent(2) }}}}
      kind: ConfigMap
      metadata:
        name: platform-config
        namespace: {{{{ {NAMESPACES[naming]} }}}}
""".encode()


def _pipeline(url: str, environments: tuple[Environment, ...]) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "Pipeline",
        "metadata": {"name": "kalypso"},
        "spec": {"platformRepo": {"url": url}, "environments": [_environment(e) for e in environments]},
    }


def _environment(env: Environment) -> dict[str, Any]:
    out: dict[str, Any] = {"name": env.name}
    if env.branch != env.name:
        out["branch"] = env.branch
    out["gitops"] = {"branch": env.gitops_branch, "path": env.gitops_path or "."}
    out["merge"] = env.merge
    out["timeout"] = _duration(env.timeout)
    if env.on_failure != "stop":
        out["onFailure"] = env.on_failure
    if env.gates:
        out["gates"] = [_gate(g) for g in env.gates]
    return out


def _duration(seconds: float) -> str:
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def _gate(gate: GateSpec) -> dict[str, Any]:
    return {gate.type: gate.spec}


def _workload(w: Workload, targets: list[DeploymentTarget], flux: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": w.name}
    if w.labels:
        meta["labels"] = dict(w.labels)
    return {
        "apiVersion": API,
        "kind": "Workload",
        "metadata": meta,
        "spec": {"workspace": w.workspace, "deploymentTargets": [_target(w, t, flux) for t in targets]},
    }


def _target(w: Workload, t: DeploymentTarget, flux: str | None = None) -> dict[str, Any]:
    """A target with the labels Kalypso gives it: the Workload's win, and under the current
    naming the ones Flux writes on the Workload (``flux``: its registration)."""
    out: dict[str, Any] = {"name": t.name, "environment": t.environment}
    labels = {**t.labels, **w.labels}  # Kalypso: the Workload's labels win
    if flux is not None:
        labels.update(flux_labels(t.environment, flux))
    if labels:
        out["labels"] = labels
    out["manifests"] = with_extra(dict(t.manifests))
    return out


def _branch(branch: KalypsoBranch) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for name, ct in sorted(branch.cluster_types.items()):
        docs: list[dict[str, Any]] = [_cluster_type(ct)]
        config, sources = platform_config(ct, branch.configmaps)
        if config:
            docs.append(_config_map(ct.name, config))
        note = f"config merged as Kalypso merges it, from {', '.join(sources)}" if sources else None
        files[f"cluster-types/{name}.yaml"] = _dump(docs, note)
    files.update(_policies(branch))
    return files


def _policies(branch: KalypsoBranch) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    policies = [
        {
            "apiVersion": API,
            "kind": "SchedulingPolicy",
            "metadata": {"name": name},
            "spec": {
                "deploymentTargetSelector": _selector(p.targets, with_workspace=True),
                "clusterTypeSelector": _selector(p.cluster_types, with_workspace=False),
            },
        }
        for name, p in sorted(branch.policies.items())
    ]
    if policies:
        files["scheduling/policies.yaml"] = _dump(policies)
    return files


def _cluster_type(ct: ClusterType, config_type: str = CONFIG_TEMPLATE) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": ct.name}
    if ct.labels:
        meta["labels"] = dict(ct.labels)
    return {
        "apiVersion": API,
        "kind": "ClusterType",
        "metadata": meta,
        "spec": {
            "reconciler": ct.reconciler,
            "namespaceService": ct.namespace_service,
            "configType": config_type,
            **({"versions": _versions(ct.versions)} if ct.versions else {}),
        },
    }


def _versions(versions: Versions) -> dict[str, str]:
    """``spec.versions`` as written (what the clusters run), for the checks of the render."""
    releases = {"kubernetes": versions.kubernetes, "flux": versions.flux, "argocd": versions.argocd}
    return {key: f"{r[0]}.{r[1]}" for key, r in releases.items() if r is not None}


def _config_map(cluster_type: str, config: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"kalypso-{cluster_type}",
            "labels": {"platform-config": "true", "cluster-type": cluster_type},
        },
        "data": dict(sorted(config.items())),  # sorted, as Kalypso writes them
    }


def _selector(selector: Selector, *, with_workspace: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if with_workspace and selector.workspace:
        out["workspace"] = selector.workspace
    label: dict[str, Any] = {}
    if selector.match_labels:
        label["matchLabels"] = dict(selector.match_labels)
    if selector.match_expressions:
        label["matchExpressions"] = [
            {"key": e.key, "operator": e.operator, **({"values": list(e.values)} if e.values else {})}
            for e in selector.match_expressions
        ]
    if label:
        out["labelSelector"] = label
    return out


def _dump(docs: list[dict[str, Any]], note: str | None = None) -> bytes:
    header = "# Converted from Kalypso by promoter convert (docs/kalypso.md#convert)" + (
        f"; {note}" if note else ""
    )
    body = "---\n".join(
        yaml.safe_dump(plain(d), sort_keys=False, allow_unicode=True, width=1000) for d in docs
    )
    return (header + "\n" + body).encode()
