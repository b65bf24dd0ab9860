"""A control plane whose qa rolls out in waves: three cluster types, canary (edge) first, then
the large fleet, then the implicit last wave (small)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from tests.support.helpers import ENV, WORKLOAD, ControlPlaneFactory, pipeline, stage

QA_TYPES = """\
apiVersion: promoter.dev/v1alpha1
kind: ClusterType
metadata: {name: edge, labels: {size: small, ring: canary}}
spec: {reconciler: flux}
---
apiVersion: promoter.dev/v1alpha1
kind: ClusterType
metadata: {name: large, labels: {size: large}}
spec: {reconciler: flux}
---
apiVersion: promoter.dev/v1alpha1
kind: ClusterType
metadata: {name: small, labels: {size: small}}
spec: {reconciler: flux}
---
apiVersion: promoter.dev/v1alpha1
kind: SchedulingPolicy
metadata: {name: all}
spec: {}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: defaults, labels: {platform-config: "true"}}
data: {REGION: here}
"""

# the gate of a wave fails when the merged tree mentions BROKEN
BROKEN_CHECK = """{command: {run: '! git -C "$PROMOTER_PLATFORM_REPO" grep -q BROKEN "$PROMOTER_PLATFORM_SHA"', shell: true}}"""

WAVES = (
    "\n        - {name: canary, clusterTypes: [edge], bake: BAKE, gates: CANARY_GATES}"
    "\n        - {name: fleet, selector: {matchLabels: {size: large}}, gates: FLEET_GATES}"
)


def waved_pipeline(
    *,
    bake: str = "0s",
    canary_gates: str = "[{soak: 30s}]",
    fleet_gates: str = "[{soak: 1m}]",
    on_failure: str = "stop",
    merge: str = "auto",
    platform: str = "{url: ../platform.git}",
) -> str:
    waves = (
        WAVES.replace("BAKE", bake).replace("CANARY_GATES", canary_gates).replace("FLEET_GATES", fleet_gates)
    )
    return pipeline(
        stage("dev", gates="[{soak: 10s}]"),
        stage("qa", merge=merge, onFailure=on_failure, gates='[{command: ["true"]}]', waves=waves),
        "prod",
        platform=platform,
    )


def create(factory: ControlPlaneFactory, text: str | None = None) -> Path:
    return factory.create(
        {"promoter.yaml": text or waved_pipeline(), "workloads/app.yaml": WORKLOAD},
        {"dev": {"env.yaml": ENV}, "qa": {"env.yaml": QA_TYPES}, "prod": {"env.yaml": ENV}},
        platform_branches=("dev", "qa", "prod"),
    )


def provenance(factory: ControlPlaneFactory, ref: str = "qa") -> dict[str, object]:
    text = factory.platform_file(ref, ".promoter/promotion.yaml")
    assert text is not None
    loaded = yaml.safe_load(text)
    assert isinstance(loaded, dict)
    return loaded


def folder_commits(factory: ControlPlaneFactory, ref: str = "qa") -> dict[str, str | None]:
    """cluster type -> the main commit its folder holds."""
    folders = provenance(factory, ref)["folders"]
    assert isinstance(folders, dict)
    return {ct: entry["mainCommit"] for ct, entry in folders.items()}


def tree_of(platform: Path, ref: str) -> str:
    return subprocess.run(
        ["git", "-C", str(platform), "rev-parse", f"{ref}^{{tree}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def first_parent_merges(platform: Path, branch: str) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(platform), "rev-list", "--first-parent", "--merges", branch],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()
