"""A small Kalypso world for tests: two registered workloads, one environment (dev) with two
cluster types, policies that exercise workload labels and workspaces, and ConfigMaps whose merge
order is by name. ``world`` builds it in git, with overrides."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from click.testing import CliRunner, Result

from promoter.cli.main import cli
from tests.support.kalypso_repos import build_world

API = "apiVersion: scheduler.kalypso.io/v1alpha1\n"
ENVIRONMENT = API + (
    "kind: Environment\nmetadata: {name: dev}\n"
    "spec:\n  controlPlane: {repo: https://example.com/cp, branch: dev, path: .}\n"
)
OLD_RECONCILER = API + (
    "kind: Template\nmetadata: {name: flux}\nspec:\n  type: reconciler\n  manifests:\n"
    "    - apiVersion: v1\n      kind: Marker\n      metadata: {name: '{{ .DeploymentTargetName }}'}\n"
    "      spec: {repo: '{{ .Repo }}', path: '{{ .Path }}', list: ['{{ .Path }}']}\n"
)
NAMESPACE = API + (
    "kind: Template\nmetadata: {name: ns}\nspec:\n  type: namespace\n  manifests:\n"
    "    - apiVersion: v1\n      kind: Namespace\n      metadata: {name: '{{ .Namespace }}'}\n"
)
CURRENT_RECONCILER = API + (
    "kind: Template\nmetadata: {name: current}\nspec:\n  type: reconciler\n  manifests:\n"
    "    - |\n"
    "      apiVersion: source.toolkit.fluxcd.io/v1\n"
    "      kind: GitRepository\n"
    "      metadata:\n"
    "        name: {{ .DeploymentTargetName }}-{{ hash .ConfigData | trunc 6 }}\n"
    "        namespace: {{ .Namespace }}\n"
    '      {{- if eq .Manifests.type "kustomize" }}\n'
    "        labels: {kind: kustomize}\n"
    "      {{- end }}\n"
    "      spec:\n"
    "        url: {{ .Manifests.repo | quote }}\n"
    '        ref: {branch: {{ .Manifests.branch | default "main" }}}\n'
    "    - |\n"
    "      apiVersion: v1\n"
    "      kind: ConfigMap\n"
    "      metadata: {name: {{ .Workload }}-values, namespace: {{ .Namespace }}}\n"
    "      data:\n"
    "      {{- range $k, $v := .ConfigData }}\n"
    "        {{ $k }}: {{ stringify $v | quote }}\n"
    "      {{- end }}\n"
    "        REGION_UPPER: {{ .ConfigData.REGION | upper | quote }}\n"
    '        CLUSTER: {{ unquote "\\"{{ .ClusterType }}\\"" | quote }}\n'
    "    - '{{ if eq .Environment \"prod\" }}kind: Never{{ end }}'\n"
)


def registration(name: str, workspace: str) -> str:
    return API + (
        f"kind: WorkloadRegistration\nmetadata: {{name: {name}}}\n"
        f"spec:\n  workload: {{repo: https://example.com/{name}, branch: main, path: .}}\n"
        f"  workspace: {workspace}\n"
    )


def workload(name: str, labels: str, targets: str) -> str:
    return (
        API
        + f"kind: Workload\nmetadata: {{name: {name}, labels: {labels}}}\nspec:\n  deploymentTargets:\n{targets}"
    )


def target(name: str, labels: str, env: str = "dev", extra: str = "") -> str:
    return (
        f"    - name: {name}\n      environment: {env}\n      labels: {labels}\n"
        f"      manifests: {{repo: https://example.com/{name}-gitops, branch: {env}, path: ./{name}{extra}}}\n"
    )


def cluster_type(name: str, labels: str, reconciler: str = "flux") -> str:
    return (
        API
        + f"kind: ClusterType\nmetadata: {{name: {name}, labels: {labels}}}\nspec: {{reconciler: {reconciler}, namespaceService: ns}}\n"
    )


def policy(name: str, targets: str, cluster_types: str) -> str:
    return API + (
        f"kind: SchedulingPolicy\nmetadata: {{name: {name}}}\n"
        f"spec:\n  deploymentTargetSelector: {targets}\n  clusterTypeSelector: {cluster_types}\n"
    )


def config(name: str, labels: str, data: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  labels: {labels}\ndata: {data}\n"


def world(
    tmp_path: Path,
    *,
    reconciler: str = "flux",
    dev: dict[str, str | None] | None = None,
    main: dict[str, str | None] | None = None,
    repos: dict[str, dict[str, str]] | None = None,
) -> Path:
    """The world, with files overridden (None deletes one)."""
    main_files = {
        ".environments/dev.yaml": ENVIRONMENT,
        "templates/flux.yaml": OLD_RECONCILER,
        "templates/current.yaml": CURRENT_RECONCILER,
        "templates/ns.yaml": NAMESPACE,
        "workloads/app.yaml": registration("app", "app-team"),
        "workloads/svc.yaml": registration("svc", "platform-team"),
        **(main or {}),
    }
    branch = {
        "base-repo.yaml": API
        + "kind: BaseRepo\nmetadata: {name: main}\nspec: {repo: https://example.com/cp, branch: main, path: ., commit: $MAIN}\n",
        "gitops-repo.yaml": API
        + "kind: GitOpsRepo\nmetadata: {name: dev}\nspec: {repo: https://example.com/gitops, branch: dev, path: .}\n",
        "cts/big.yaml": cluster_type("big", "{size: large, region: west}", reconciler),
        "cts/empty.yaml": cluster_type("empty", "{size: tiny}", reconciler),
        # the workload's tier (gold) wins over the target's (bronze)
        "policies/gold.yaml": policy(
            "gold",
            "{labelSelector: {matchLabels: {tier: gold}}}",
            "{labelSelector: {matchLabels: {size: large}}}",
        ),
        "policies/bronze.yaml": policy(
            "bronze",
            "{labelSelector: {matchLabels: {tier: bronze}}}",
            "{labelSelector: {matchLabels: {size: tiny}}}",
        ),
        # a workspace no target is in: selects nothing although the labels would match
        "policies/other-team.yaml": policy(
            "other-team",
            "{workspace: other-team, labelSelector: {matchLabels: {tier: gold}}}",
            "{labelSelector: {matchLabels: {size: tiny}}}",
        ),
        # name order, not specificity: b-region (2 labels) loses to c-all (none), a-type to both
        "configs/a.yaml": config(
            "a-type", '{platform-config: "true", cluster-type: big}', "{REGION: from-a, A: a}"
        ),
        "configs/b.yaml": config(
            "b-region", '{platform-config: "true", region: west}', "{REGION: west, B: b}"
        ),
        "configs/c.yaml": config("c-all", '{platform-config: "true"}', "{B: from-c, C: c}"),
        "configs/z.yaml": config("z-elsewhere", '{platform-config: "true", region: east}', "{REGION: east}"),
        "configs/plain.yaml": config("not-platform", "{}", "{REGION: ignored}"),
        **(dev or {}),
    }
    workload_repos = {
        "app": {
            "workload.yaml": workload(
                "app",
                "{tier: gold}",
                target("web", "{tier: bronze, edge: 'true'}") + target("later", "{tier: gold}", env="prod"),
            )
        },
        "svc": {
            "w/svc.yaml": workload("svc", "{}", target("api", "{tier: gold}", extra=", type: kustomize"))
        },
    }
    workload_repos.update(repos or {})
    return build_world(tmp_path / "repos", _kept(main_files), {"dev": _kept(branch)}, workload_repos)


def _kept(files: dict[str, str | None]) -> dict[str, str]:
    return {k: v for k, v in files.items() if v is not None}


def convert(
    cp: Path, out: Path, *args: str, environments: str = "dev", env: Mapping[str, str] | None = None
) -> Result:
    """``promoter convert --from kalypso`` of ``cp``'s ``environments`` into ``out``."""
    argv = ["convert", "--from", "kalypso", "--control-plane", str(cp)]
    return CliRunner(env=env).invoke(cli, [*argv, "--environments", environments, "--out", str(out), *args])
