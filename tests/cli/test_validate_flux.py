"""``promoter validate`` warns of commitStatus gates that wait for statuses the Flux their
cluster types run cannot post (promoter/gates/flux_checks.py), at the gate's line; ``--strict``
makes each an error; nothing is said where no Flux release is declared."""

from __future__ import annotations

from click.testing import CliRunner

from promoter.cli.main import cli
from tests.support.helpers import ENV, WORKLOAD, ControlPlaneFactory, pipeline, stage

GATE = '[{commitStatus: {contexts: ["kustomization/platform/*"], minCount: 3}}]'
HEAD = "gate commitStatus kustomization/platform/* min 3 of dev"


def with_versions(text: str, versions: str) -> str:
    return text.replace("spec:\n", f"spec:\n  versions: {versions}\n", 1)


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def validate(factory: ControlPlaneFactory, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(factory.path), *args])
    return result.exit_code, result.stdout, result.stderr


def test_flux_2_8_warns_at_the_gates_line_and_strict_makes_it_an_error(factory: ControlPlaneFactory) -> None:
    text = with_versions(pipeline(stage("dev", gates=GATE), "qa", "prod"), "{flux: '2.8'}")
    factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD})
    at = f"warning: promoter.yaml:{line_of(text, f'gates: {GATE}')}: {HEAD}"
    code, _, stderr = validate(factory)
    assert code == 0, stderr
    failures, count = stderr.splitlines()
    assert failures.startswith(f"{at}: cluster type small runs Flux 2.8, which posts no failure status")
    assert count.startswith(f"{at}: minCount 3 counts contexts")
    code, stdout, _ = validate(factory, "-o", "json")
    assert code == 0 and stdout.count("commitStatus kustomization/platform/* min 3 of dev") == 2
    code, _, stderr = validate(factory, "--strict")
    assert code == 2
    assert stderr.splitlines()[-1] == "error: --strict: 2 warning(s) above; each is an error in strict mode"


def test_no_warning_when_no_flux_release_is_declared(factory: ControlPlaneFactory) -> None:
    factory.create(
        {"promoter.yaml": pipeline(stage("dev", gates=GATE), "qa", "prod"), "workloads/app.yaml": WORKLOAD}
    )
    assert validate(factory, "--strict")[::2] == (0, "")


def test_a_waves_gates_are_judged_by_the_waves_cluster_types(factory: ControlPlaneFactory) -> None:
    large = (
        "---\napiVersion: promoter.dev/v1alpha1\nkind: ClusterType\nmetadata: {name: large, labels: {size: large}}\n"
        "spec: {reconciler: flux, versions: {flux: v2.8.3}}\n"
    )
    waves = "[{name: canary, clusterTypes: [large], gates: [{commitStatus: kustomization/platform/*}]}]"
    text = with_versions(pipeline(stage("dev", waves=waves, gates=GATE), "qa", "prod"), "{flux: '2.7'}")
    envs = {"dev": {"env.yaml": ENV + large}, "qa": {"env.yaml": ENV}, "prod": {"env.yaml": ENV}}
    factory.create({"promoter.yaml": text, "workloads/app.yaml": WORKLOAD}, envs)
    code, _, stderr = validate(factory)
    assert code == 0, stderr
    canary, rest = stderr.splitlines()
    # the canary wave's gate judges large (Flux 2.8); the environment's gate, the rest: small (2.7)
    assert canary.startswith(
        f"warning: promoter.yaml:{line_of(text, 'waves:')}: gate commitStatus kustomization/platform/* of dev: "
        "cluster type large runs Flux 2.8, which posts no failure status"
    )
    assert rest.startswith(
        f"warning: promoter.yaml:{line_of(text, f'gates: {GATE}')}: {HEAD}: minCount 3 counts contexts"
    )
