"""The starter control plane ``promoter init --skeleton`` writes: a Pipeline, a Workload and a
ConfigSchema on main; a ClusterType, a SchedulingPolicy and a ConfigMap on every environment
branch. It validates and renders as it is (tests/cli/test_init.py), and says in comments what to
change. Pure text, from values ``promoter init`` checked (DNS-1123 environment names, a platform
repo URL the github forge accepts)."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import yaml

from promoter.scaffold.workflows import Follows, leaves_of, upstreams_of

HEADER = "apiVersion: promoter.dev/v1alpha1\n"


def pipeline(
    environments: tuple[str, ...], platform_repo: str, follows: Follows = (), soak: str = "5m"
) -> str:
    host = (urlsplit(platform_repo).hostname or "").lower()
    ghes = host not in ("", "github.com")  # a path is the local forge; another host, GitHub Enterprise Server
    forge = "    forge: github              # GitHub Enterprise Server\n" if ghes else ""
    given, ups = dict(follows), upstreams_of(environments, follows)
    leaves = leaves_of(environments, follows)
    lines = []
    for env in environments:
        last = env in leaves and len(environments) > 1
        lines.append(f"    - name: {env}\n")
        if env in given:
            lines.append(f"      follows: [{', '.join(given[env])}]\n")
        if last:
            lines.append("      merge: manual             # a person merges the promotion pull request\n")
            lines.append("      timeout: 24h              # the merge and the gates, together\n")
        else:
            lines.append("      merge: auto\n")
            lines.append("      timeout: 30m\n")
        lines.append("      gates:\n        - command: [promoter, check-platform]\n")
        if ups[env]:
            lines.append(f"        - soak: {soak:<16}# run healthy this long before going on\n")
    return (
        "# The promotion pipeline: the order of environments and how each is merged and gated\n"
        "# (docs/configuration.md#pipeline). Add health gates on your clusters (Flux, Argo CD,\n"
        "# Prometheus, the hub) as docs/health-gates.md describes.\n"
        + HEADER
        + "kind: Pipeline\nmetadata:\n  name: platform\nspec:\n  platformRepo:\n"
        + f"    url: {_scalar(platform_repo)}\n"
        + forge
        + "  environments:\n"
        + "".join(lines)
    )


def _scalar(text: str) -> str:
    """``text`` as a YAML scalar that reads back as itself: plain when it does, else quoted."""
    plain = " #" not in text and not text.endswith(":")
    try:
        plain = plain and yaml.safe_load(f"k: {text}") == {"k": text}
    except yaml.YAMLError:
        plain = False
    return text if plain else json.dumps(text)


def workload(environments: tuple[str, ...]) -> str:
    targets = "".join(
        f"    - name: {env}\n"
        f"      environment: {env}\n"
        "      manifests:\n"
        "        repo: https://github.com/example/hello-world-gitops\n"
        "        branch: main\n"
        f"        path: ./{env}\n"
        for env in environments
    )
    return (
        "# A workload: what a team deploys, and where its manifests are for each environment. Point\n"
        "# `repo` at the workload's own GitOps repo (docs/configuration.md#workload).\n"
        + HEADER
        + "kind: Workload\nmetadata:\n  name: hello-world\n  labels:\n    type: application\n"
        "spec:\n  workspace: app-team\n  deploymentTargets:\n" + targets
    )


CONFIG_SCHEMA = (
    "# What every assignment's merged config must hold, checked before anything is pushed\n"
    "# (docs/configuration.md#configschema).\n"
    + HEADER
    + "kind: ConfigSchema\nmetadata:\n  name: base\nspec:\n  schema:\n    type: object\n"
    "    required: [ENVIRONMENT, LOG_LEVEL]\n    properties:\n"
    "      ENVIRONMENT: {type: string}\n"
    "      LOG_LEVEL: {enum: [debug, info, warn, error]}\n"
)

CLUSTER_TYPES = (
    "# The cluster types of this environment: every cluster of a type runs one reconciler pointed\n"
    "# at its folder of the platform branch (docs/configuration.md#clustertype).\n"
    + HEADER
    + "kind: ClusterType\nmetadata:\n  name: small\n  labels: {size: small}\n"
    "spec:\n  reconciler: flux              # or argocd\n"
    "  namespaceService: default\n  configType: configmap\n"
)

SCHEDULING = (
    "# Which deployment targets run on which cluster types (docs/configuration.md#schedulingpolicy).\n"
    + HEADER
    + "kind: SchedulingPolicy\nmetadata:\n  name: everything-everywhere\n"
    "spec:\n  deploymentTargetSelector: {}   # every target of this environment\n"
    "  clusterTypeSelector: {}        # on every cluster type\n"
)


def config(environment: str) -> str:
    return (
        "# Config values, merged per assignment from the least specific ConfigMap to the most\n"
        "# (docs/configuration.md#configmap).\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: defaults\n"
        '  labels: {platform-config: "true"}\n'
        f"data:\n  ENVIRONMENT: {environment}\n"
        f"  LOG_LEVEL: {'debug' if environment == 'dev' else 'info'}\n"
    )


def for_main(
    environments: tuple[str, ...], platform_repo: str, follows: Follows = (), soak: str = "5m"
) -> dict[str, str]:
    return {
        "promoter.yaml": pipeline(environments, platform_repo, follows, soak),
        "workloads/hello-world.yaml": workload(environments),
        "config-schema.yaml": CONFIG_SCHEMA,
    }


def for_environment(environment: str) -> dict[str, str]:
    return {
        "cluster-types.yaml": CLUSTER_TYPES,
        "scheduling.yaml": SCHEDULING,
        "config.yaml": config(environment),
    }
