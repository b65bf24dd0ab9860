"""A target that dependsOn another comes after it on each cluster type it is assigned to: the
other must be assigned there too, else exit 2 at the ``dependsOn`` item, nothing pushed."""

from __future__ import annotations

import pytest

from promoter.controlplane.repo import ControlPlane
from promoter.errors import ConfigError, InputErrors
from promoter.scheduling.environment import EnvironmentSchedule
from tests.controlplane.test_bad_input import Case, E, _check
from tests.support.helpers import PIPELINE, ControlPlaneFactory
from tests.support.ordering import environment, target, workload

A = "workloads/app.yaml"
D = "workloads/db.yaml"
APP = workload("app", target("t", depends_on="[{workload: db}]"))  # dependsOn at line 10
DB = workload("db", target("main"))


def _schedule(factory: ControlPlaneFactory, dev: str, app: str = APP) -> EnvironmentSchedule:
    envs = {
        e: {"env.yaml": dev if e == "dev" else environment(("small", "flux"))} for e in ("dev", "qa", "prod")
    }
    factory.create(main={"promoter.yaml": PIPELINE, A: app, D: DB}, envs=envs)
    cp = ControlPlane(factory.path)
    main = cp.main(cp.resolve(None))
    return EnvironmentSchedule(main, cp.environment(main.pipeline.environments[0]), "dev")


def test_a_dependency_assigned_with_its_dependent_is_fine(factory: ControlPlaneFactory) -> None:
    schedule = _schedule(factory, environment(("small", "flux"), ("edge", "argocd")))
    assert {ct: [t.name for _, _, t in pairs] for ct, pairs in schedule.pairs.items()} == {
        "edge": ["t", "main"],
        "small": ["t", "main"],
    }


def test_a_dependency_missing_where_its_dependent_is_is_an_error(factory: ControlPlaneFactory) -> None:
    dev = environment(("small", "flux"), ("edge", "argocd"), only={"small": "app db", "edge": "app"})
    with pytest.raises(ConfigError) as err:
        _schedule(factory, dev)
    assert str(err.value) == (
        f"{A}:10: deployment target app/t depends on db/main, which no SchedulingPolicy of dev assigns to "
        "cluster type edge, where app/t is assigned: there it would wait for db/main forever (Flux) or start "
        "without it (Argo CD); assign db/main there too, or keep app/t off it"
    )


def test_each_dependency_is_one_problem_naming_every_cluster_type(factory: ControlPlaneFactory) -> None:
    app = workload("app", target("t", depends_on="[{workload: db}, {workload: cache}]"))
    dev = environment(
        ("big", "flux"), ("edge", "argocd"), ("small", "flux"), only={"big": "app", "edge": "app"}
    )
    cache = workload("cache", target("dev"))
    envs = {e: {"env.yaml": dev} for e in ("dev", "qa", "prod")}
    factory.create(main={"promoter.yaml": PIPELINE, A: app, D: DB, "workloads/cache.yaml": cache}, envs=envs)
    cp = ControlPlane(factory.path)
    main = cp.main(cp.resolve(None))
    with pytest.raises(InputErrors) as err:
        EnvironmentSchedule(main, cp.environment(main.pipeline.environments[0]), "dev")
    assert [p.message.split(", where")[0] for p in err.value.problems] == [
        "deployment target app/t depends on db/main, which no SchedulingPolicy of dev assigns to cluster types big, edge",
        "deployment target app/t depends on cache/dev, which no SchedulingPolicy of dev assigns to cluster types big, edge",
    ]
    assert err.value.problems[0].message.endswith("or keep app/t off them")


def test_a_dependency_not_scheduled_anywhere_is_an_error_too(factory: ControlPlaneFactory) -> None:
    with pytest.raises(ConfigError, match="depends on db/main, which no SchedulingPolicy of dev assigns"):
        _schedule(factory, environment(("small", "flux"), only={"small": "app"}))


def test_validate_and_promote_stop_before_anything_is_pushed(factory: ControlPlaneFactory) -> None:
    dev = environment(("small", "flux"), ("edge", "argocd"), only={"small": "app db", "edge": "app"})
    _check(
        factory,
        Case(
            "depends-on-unassigned",
            A,
            10,
            "deployment target app/t depends on db/main",
            main={A: APP, D: DB},
            dev={E: dev},
        ),
    )
