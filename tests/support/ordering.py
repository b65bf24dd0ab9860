"""Control planes whose deployment targets say what they come after (``dependsOn``): Workload
texts with lines a test can name, and environment branches that assign chosen workloads."""

from __future__ import annotations

GIT = "{repo: https://example.com/x, path: ./deploy}"
HELM = "{repo: https://charts.example.com, chart: db, version: 1.2.3}"


def workload(name: str, *targets: str) -> str:
    """A Workload; its first target starts at line 7."""
    head = (
        "apiVersion: promoter.dev/v1alpha1\nkind: Workload\n"
        f"metadata: {{name: {name}}}\nspec:\n  workspace: team\n  deploymentTargets:\n"
    )
    return head + "".join(targets)


def target(
    name: str, environment: str = "dev", *, manifests: str = GIT, depends_on: str | None = None
) -> str:
    """One deployment target: three lines, a fourth (``dependsOn``, flow style) when given."""
    text = f"    - name: {name}\n      environment: {environment}\n      manifests: {manifests}\n"
    return text + (f"      dependsOn: {depends_on}\n" if depends_on is not None else "")


def environment(*cluster_types: tuple[str, str], only: dict[str, str] | None = None) -> str:
    """Cluster types ``(name, reconciler)``, a platform-config ConfigMap, and a SchedulingPolicy
    assigning every target to every cluster type; with ``only``, one policy per cluster type
    assigning just the workloads listed for it (``{"small": "app db"}``)."""
    docs = [
        f"apiVersion: promoter.dev/v1alpha1\nkind: ClusterType\nmetadata: {{name: {ct}}}\nspec: {{reconciler: {rec}}}\n"
        for ct, rec in cluster_types
    ]
    docs.append(
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: defaults, labels: {platform-config: "true"}}\n'
        "data: {REGION: here}\n"
    )
    if only is None:
        docs.append(
            "apiVersion: promoter.dev/v1alpha1\nkind: SchedulingPolicy\nmetadata: {name: all}\nspec: {}\n"
        )
    for ct, names in (only or {}).items():
        docs.append(
            "apiVersion: promoter.dev/v1alpha1\nkind: SchedulingPolicy\n"
            f"metadata: {{name: on-{ct}}}\nspec:\n"
            "  deploymentTargetSelector:\n    labelSelector:\n      matchExpressions:\n"
            f"        - {{key: workload, operator: In, values: [{', '.join(names.split())}]}}\n"
            f"  clusterTypeSelector:\n    labelSelector: {{matchLabels: {{cluster-type: {ct}}}}}\n"
        )
    return "---\n".join(docs)
