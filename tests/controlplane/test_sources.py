"""A Workload target's ``manifests``, strict per source kind (promoter/controlplane/sources.py):
the keys a template of its own needs go under ``extra`` and reach it; ``convert`` moves Kalypso's
free keys there. The mistakes themselves are in the bad-input corpus (test_bad_input.py)."""

from __future__ import annotations

from promoter.controlplane.repo import ControlPlane
from promoter.controlplane.sources import with_extra
from promoter.rendering.tree import render_environment
from tests.support.helpers import ENV, PIPELINE, WORKLOAD, ControlPlaneFactory

TEMPLATE = """\
apiVersion: promoter.dev/v1alpha1
kind: Template
metadata: {name: flux}
spec:
  type: reconciler
  manifests:
    - |
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: {{ name }}, namespace: {{ namespace }}}
      data: {team: {{ manifests.extra.team | quote }}, branch: {{ manifests.branch | quote }}}
"""


def test_extra_reaches_the_template(factory: ControlPlaneFactory) -> None:
    workload = WORKLOAD.replace(
        "{repo: https://example.com/app, branch: main, path: ./dev}",
        "{repo: https://example.com/app, branch: release, path: ./dev, extra: {team: payments}}",
    )
    factory.create(
        main={"promoter.yaml": PIPELINE, "workloads/app.yaml": workload, "templates/flux.yaml": TEMPLATE},
        envs={e: {"env.yaml": ENV} for e in ("dev", "qa", "prod")},
    )
    cp = ControlPlane(factory.path)
    main = cp.main(cp.resolve(None))
    files = dict(render_environment(main, cp.environment(main.pipeline.environments[0]), "dev").files)
    reconciler = next(data for path, data in files.items() if path.endswith("app-t/reconciler.yaml"))
    assert b'team: "payments"' in reconciler and b'branch: "release"' in reconciler


def test_convert_moves_the_keys_a_kind_does_not_take_under_extra() -> None:
    assert with_extra({"repo": "https://g/x", "branch": "b", "type": "kustomize"}) == {
        "repo": "https://g/x",
        "branch": "b",
        "extra": {"type": "kustomize"},
    }
    assert with_extra({"repo": "oci://r/x", "chart": "c", "branch": "b", "extra": {"a": "1"}}) == {
        "repo": "oci://r/x",
        "chart": "c",
        "extra": {"branch": "b", "a": "1"},
    }
    assert with_extra({"repo": "oci://r/x", "tag": "v1"}) == {"repo": "oci://r/x", "tag": "v1"}
