"""Flux's ``dependsOn`` within a cluster type's folder (``k8s.manifests.check_folder``): it waits
for objects of the referrer's own kind, in its namespace unless it names another; one naming,
in the folder, only an object of the other kind, or itself, would wait forever. One that names
nothing in the folder is the cluster's business (its bootstrap Kustomization, say)."""

from __future__ import annotations

from typing import Any

import pytest

from promoter.k8s.manifests import Doc, check_folder

KUSTOMIZATION = ("kustomize.toolkit.fluxcd.io/v1", "Kustomization")
HELMRELEASE = ("helm.toolkit.fluxcd.io/v2", "HelmRelease")


def flux(kind: tuple[str, str], name: str, namespace: str, *depends_on: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = {"dependsOn": list(depends_on)} if depends_on else {}
    return {
        "apiVersion": kind[0],
        "kind": kind[1],
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _rules(*bodies: dict[str, Any]) -> list[str]:
    docs = [Doc(f"small/t{i}/reconciler.yaml", b) for i, b in enumerate(bodies)]
    return [p.rule for p in check_folder(docs) if "dependsOn" in p.rule]


@pytest.mark.parametrize(
    "bodies",
    [
        # a Kustomization after a Kustomization of another namespace
        (
            flux(KUSTOMIZATION, "db", "ns-db"),
            flux(KUSTOMIZATION, "app", "ns-app", {"name": "db", "namespace": "ns-db"}),
        ),
        # without a namespace: the referrer's own
        (flux(KUSTOMIZATION, "db", "ns"), flux(KUSTOMIZATION, "app", "ns", {"name": "db"})),
        (
            flux(HELMRELEASE, "db", "ns-db"),
            flux(HELMRELEASE, "app", "ns-app", {"name": "db", "namespace": "ns-db"}),
        ),
        # nothing of that name in the folder: the cluster may hold it
        (flux(KUSTOMIZATION, "app", "ns", {"name": "infrastructure", "namespace": "flux-system"}),),
        # a HelmRelease and a Kustomization of one name: the Kustomization is what it waits for
        (
            flux(HELMRELEASE, "db", "ns-db"),
            flux(KUSTOMIZATION, "db", "ns-db"),
            flux(KUSTOMIZATION, "app", "ns-app", {"name": "db", "namespace": "ns-db"}),
        ),
    ],
)
def test_a_dependency_flux_can_wait_for(bodies: tuple[dict[str, Any], ...]) -> None:
    assert _rules(*bodies) == []


def test_a_kustomization_cannot_wait_for_a_helm_release() -> None:
    assert _rules(
        flux(HELMRELEASE, "db", "ns-db"),
        flux(KUSTOMIZATION, "app", "ns-app", {"name": "db", "namespace": "ns-db"}),
    ) == [
        "dependsOn ns-db/db is a HelmRelease in this folder, not a Kustomization: Flux's dependsOn waits only "
        "for objects of the referrer's own kind, so this one would wait forever (give both targets the same "
        "kind of source, or order them otherwise)"
    ]


def test_a_helm_release_cannot_wait_for_a_kustomization() -> None:
    rules = _rules(flux(KUSTOMIZATION, "db", "ns"), flux(HELMRELEASE, "app", "ns", {"name": "db"}))
    assert [r.split(":")[0] for r in rules] == [
        "dependsOn ns/db is a Kustomization in this folder, not a HelmRelease"
    ]


def test_nothing_waits_for_itself() -> None:
    assert _rules(flux(KUSTOMIZATION, "app", "ns", {"name": "app"})) == [
        "dependsOn ns/app is itself: it would never become ready"
    ]
