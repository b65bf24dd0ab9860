"""Synthetic control planes at sizes S, M and L, written as real git repos with the plumbing the
tests use (``tests.support.helpers.ControlPlaneFactory``).

A control plane of size ``(W, C)`` has W workloads with a deployment target in every environment
and C cluster types. Four stacks of workloads each go to half the cluster types (by size or by
region), so the policies assign exactly half of the W x C pairs; a fifth policy overlaps the
first, to exercise de-duplication. ConfigMaps come at specificities 0 to 3: global, per region,
per size, per region and size, per stack and tier (matched by the deployment target), per
cluster type and per workload. Every assignment renders three files, so an environment holds
``3 * W * C / 2`` files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.support.helpers import ControlPlaneFactory

ENVIRONMENTS = ("dev", "qa", "prod")
SIZES_OF_CLUSTERS = ("small", "medium", "large", "xlarge")
REGIONS = tuple(f"region-{i}" for i in range(8))
STACKS = ("s0", "s1", "s2", "s3")
TIERS = ("frontend", "backend")


@dataclass(frozen=True)
class Size:
    """How big a synthetic control plane is."""

    name: str
    workloads: int
    cluster_types: int

    @property
    def assignments(self) -> int:
        """Per environment: each stack (a quarter of the workloads) gets half the cluster types."""
        return self.workloads * self.cluster_types // 2

    @property
    def files(self) -> int:
        """Rendered files per environment (reconciler, namespace, config per assignment)."""
        return 3 * self.assignments


SIZES = {
    "S": Size("S", workloads=20, cluster_types=32),  # 960 files per environment
    "M": Size("M", workloads=100, cluster_types=136),  # 20,400
    "L": Size("L", workloads=256, cluster_types=264),  # 101,376
}


@dataclass(frozen=True)
class Generated:
    root: Path
    control_plane: Path
    platform: Path
    size: Size
    factory: ControlPlaneFactory


def cluster_type_name(i: int) -> str:
    return f"ct-{i:04d}"


def workload_name(i: int) -> str:
    return f"app-{i:04d}"


def cluster_type_labels(i: int) -> dict[str, str]:
    # Size from the two low bits, the region's half from bit 2: with C a multiple of 8, exactly
    # half the cluster types are small or medium, and exactly half are in regions 0-3.
    region = 4 * ((i >> 2) & 1) + ((i >> 3) % 4)
    return {"size": SIZES_OF_CLUSTERS[i % 4], "region": REGIONS[region]}


def pipeline() -> str:
    envs = "".join(f"    - name: {env}\n      timeout: 10m\n" for env in ENVIRONMENTS)
    return (
        "apiVersion: promoter.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: platform}\nspec:\n"
        "  platformRepo: {url: ../platform.git}\n  environments:\n" + envs
    )


QUOTA_TEMPLATE = """\
apiVersion: promoter.dev/v1alpha1
kind: Template
metadata: {name: namespace-with-quota}
spec:
  type: namespace
  manifests:
    - |
      apiVersion: v1
      kind: Namespace
      metadata:
        name: {{ namespace }}
        labels:
          promoter.dev/environment: {{ environment }}
          promoter.dev/workspace: {{ workspace }}
          promoter.dev/tier: {{ labels.tier }}
    - |
      apiVersion: v1
      kind: ResourceQuota
      metadata:
        name: default
        namespace: {{ namespace }}
      spec:
        hard:
          pods: {{ (config.REPLICAS * 10) | quote }}
          requests.cpu: {{ config.RESOURCES.cpu | quote }}
"""

SCHEMAS = """\
apiVersion: promoter.dev/v1alpha1
kind: ConfigSchema
metadata: {name: base}
spec:
  schema:
    type: object
    required: [REGION, REPLICAS, LOG_LEVEL]
    properties:
      REGION: {type: string}
      REPLICAS: {type: integer, minimum: 1}
      LOG_LEVEL: {enum: [debug, info, warn, error]}
---
apiVersion: promoter.dev/v1alpha1
kind: ConfigSchema
metadata: {name: backend, labels: {tier: backend}}
spec:
  schema:
    type: object
    required: [DATABASE_URL]
"""


def workload(i: int) -> str:
    name = workload_name(i)
    targets = "".join(
        f"    - name: {env}\n"
        f"      environment: {env}\n"
        f"      labels: {{tier: {TIERS[i % 2]}, purpose: {env}}}\n"
        f"      manifests: {{repo: https://git.example.com/apps/{name}-gitops, branch: {env}, path: ./{env}}}\n"
        for env in ENVIRONMENTS
    )
    return (
        "apiVersion: promoter.dev/v1alpha1\nkind: Workload\n"
        f"metadata: {{name: {name}, labels: {{stack: {STACKS[i % 4]}, team: team-{i % 5}}}}}\n"
        f"spec:\n  workspace: workspace-{i % 3}\n  deploymentTargets:\n{targets}"
    )


def main_files(size: Size) -> dict[str, str]:
    files = {
        "promoter.yaml": pipeline(),
        "templates/namespace-with-quota.yaml": QUOTA_TEMPLATE,
        "schemas.yaml": SCHEMAS,
    }
    for i in range(size.workloads):
        files[f"workloads/{workload_name(i)}.yaml"] = workload(i)
    return files


def cluster_type(i: int) -> str:
    labels = cluster_type_labels(i)
    reconciler = "argocd" if i % 4 == 3 else "flux"
    namespace = "namespace-with-quota" if i % 2 else "default"
    return (
        "apiVersion: promoter.dev/v1alpha1\nkind: ClusterType\n"
        f"metadata: {{name: {cluster_type_name(i)}, labels: {{size: {labels['size']}, region: {labels['region']}}}}}\n"
        f"spec: {{reconciler: {reconciler}, namespaceService: {namespace}, configType: configmap}}\n"
    )


POLICIES = """\
apiVersion: promoter.dev/v1alpha1
kind: SchedulingPolicy
metadata: {name: s0-on-small-and-medium}
spec:
  deploymentTargetSelector: {labelSelector: {matchLabels: {stack: s0}}}
  clusterTypeSelector:
    labelSelector:
      matchExpressions: [{key: size, operator: In, values: [small, medium]}]
---
apiVersion: promoter.dev/v1alpha1
kind: SchedulingPolicy
metadata: {name: s0-frontends-on-small}
spec:
  deploymentTargetSelector: {labelSelector: {matchLabels: {stack: s0, tier: frontend}}}
  clusterTypeSelector: {labelSelector: {matchLabels: {size: small}}}
---
apiVersion: promoter.dev/v1alpha1
kind: SchedulingPolicy
metadata: {name: s1-on-large}
spec:
  deploymentTargetSelector: {labelSelector: {matchLabels: {stack: s1}}}
  clusterTypeSelector:
    labelSelector:
      matchExpressions: [{key: size, operator: NotIn, values: [small, medium]}]
---
apiVersion: promoter.dev/v1alpha1
kind: SchedulingPolicy
metadata: {name: s2-in-low-regions}
spec:
  deploymentTargetSelector: {labelSelector: {matchLabels: {stack: s2}}}
  clusterTypeSelector:
    labelSelector:
      matchExpressions: [{key: region, operator: In, values: [region-0, region-1, region-2, region-3]}]
---
apiVersion: promoter.dev/v1alpha1
kind: SchedulingPolicy
metadata: {name: s3-in-high-regions}
spec:
  deploymentTargetSelector: {labelSelector: {matchLabels: {stack: s3}}}
  clusterTypeSelector:
    labelSelector:
      matchExpressions: [{key: region, operator: In, values: [region-4, region-5, region-6, region-7]}]
"""


def _configmap(name: str, labels: dict[str, str], data: str) -> str:
    label_text = ", ".join(
        f"{k}: {v!r}" if k == "platform-config" else f"{k}: {v}" for k, v in labels.items()
    )
    return (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  labels: {{{label_text}}}\n"
        f"data:\n{data}"
    )


def common_config(env: str) -> str:
    pc = {"platform-config": "true"}
    docs = [
        _configmap(
            "global",
            pc,
            f"  ENVIRONMENT: {env}\n  REGION: unknown\n  REPLICAS: 1\n  LOG_LEVEL: info\n"
            "  FEATURES: {tracing: false, canary: false, profiling: false}\n"
            "  SIDECARS:\n    - {name: logs, image: 'fluent-bit:3.0'}\n    - {name: mesh, image: 'envoy:1.30'}\n"
            "  RESOURCES: {cpu: 100m, memory: 128Mi}\n",
        )
    ]
    for r, region in enumerate(REGIONS):
        docs.append(
            _configmap(
                f"{region}",
                {**pc, "region": region},
                f"  REGION: {region.title()}\n  DATABASE_URL: 'postgres://db-{r}.{env}.example.com:5432/app'\n",
            )
        )
    for s, size in enumerate(SIZES_OF_CLUSTERS):
        docs.append(
            _configmap(
                f"size-{size}",
                {**pc, "size": size},
                f"  REPLICAS: {s + 1}\n  RESOURCES: {{cpu: {(s + 1) * 250}m, memory: {(s + 1) * 256}Mi}}\n",
            )
        )
        for region in REGIONS:
            docs.append(
                _configmap(
                    f"{region}-{size}",
                    {**pc, "region": region, "size": size},
                    "  FEATURES: {canary: true}\n",
                )
            )
    for stack in STACKS:
        for tier in TIERS:
            docs.append(
                _configmap(
                    f"{stack}-{tier}",
                    {**pc, "stack": stack, "tier": tier},
                    f"  LOG_LEVEL: {'warn' if tier == 'backend' else 'info'}\n"
                    f"  SIDECARS:\n    - {{name: mesh, image: 'envoy:1.31'}}\n",
                )
            )
        docs.append(
            _configmap(
                f"{stack}-backend-large",
                {**pc, "stack": stack, "tier": "backend", "size": "large"},
                "  FEATURES: {profiling: true}\n",
            )
        )
    return "---\n".join(docs)


def cluster_type_config(i: int, env: str, revision: int = 0) -> str:
    name = cluster_type_name(i)
    return _configmap(
        f"{name}-config",
        {"platform-config": "true", "cluster-type": name},
        f"  CLUSTER_ID: {env}-{name}\n  MAX_SURGE: {1 + revision}\n",
    )


def workload_config(i: int, env: str) -> str:
    name = workload_name(i)
    return _configmap(
        f"{name}-config",
        {"platform-config": "true", "workload": name},
        f"  APP_ID: {name}\n  IMAGE_TAG: '1.{i}.0-{env}'\n",
    )


def environment_files(size: Size, env: str) -> dict[str, str]:
    files = {"policies.yaml": POLICIES, "config/common.yaml": common_config(env)}
    for i in range(size.cluster_types):
        files[f"cluster-types/{cluster_type_name(i)}.yaml"] = cluster_type(i)
        files[f"config/cluster-types/{cluster_type_name(i)}.yaml"] = cluster_type_config(i, env)
    for i in range(size.workloads):
        files[f"config/workloads/{workload_name(i)}.yaml"] = workload_config(i, env)
    return files


def generate(root: Path, size: Size) -> Generated:
    """A control plane (main + one branch per environment) and a bare platform repo whose
    environment branches hold a README, as a newly set-up platform repo would."""
    root.mkdir(parents=True, exist_ok=True)
    factory = ControlPlaneFactory(root)
    envs = {env: environment_files(size, env) for env in ENVIRONMENTS}
    factory.create(main_files(size), envs, platform_branches=ENVIRONMENTS)
    # Partial clones of a file:// remote need the server to allow filters, as GitHub does.
    from promoter.gitcmd import Git

    Git(factory.platform).run("config", "uploadpack.allowFilter", "true")
    Git(factory.platform).run("config", "uploadpack.allowAnySHA1InWant", "true")
    return Generated(root, factory.path, factory.platform, size, factory)


def change_one_cluster_type(generated: Generated, env: str, index: int = 0, revision: int = 1) -> str:
    """Change one config value of one cluster type on an environment branch; the new commit."""
    path = f"config/cluster-types/{cluster_type_name(index)}.yaml"
    return generated.factory.commit(
        env,
        {path: cluster_type_config(index, env, revision)},
        f"{env}: raise MAX_SURGE on one cluster type",
        keep=True,
    )


def fill_platform(generated: Generated, env: str) -> int:
    """Render ``env`` with the promoter and push it straight to its platform branch (no PR, no
    statuses): the platform repo then holds that environment's full tree, as after a promotion.
    Returns the number of files."""
    from promoter.controlplane.repo import ControlPlane
    from promoter.platform.provenance import Provenance
    from promoter.platform.repo import PlatformRepo
    from promoter.rendering.tree import render_environment

    cp = ControlPlane(generated.control_plane)
    main = cp.main(cp.resolve(None))
    environment = main.pipeline.environment(env)
    assert environment is not None
    objects = cp.environment(environment)
    rendered = render_environment(main, objects, env)
    platform = PlatformRepo(str(generated.platform), cache=generated.root / "cache-fill")
    base = platform.fetch([environment.gitops_branch])[environment.gitops_branch]
    provenance = Provenance(
        pipeline=main.pipeline.name,
        environment=env,
        main_commit=main.commit,
        env_branch=environment.branch,
        env_commit=objects.commit,
        cluster_types=rendered.cluster_types,
        files=len(rendered.files),
    )
    plan = platform.plan(base, environment.gitops_path, rendered.files, rendered.cluster_types, provenance)
    sha = platform.commit(plan, environment.gitops_path, [base] if base else [], f"Render {env}")
    platform.push({environment.gitops_branch: (base, sha)})
    return len(rendered.files)
