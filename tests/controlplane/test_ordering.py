"""A deployment target's ``dependsOn``, read from main: its three forms resolved, each target's
depth (its Argo CD sync wave), and every mistake an exit 2 at the item's file and line through
``validate`` and ``promote``, nothing pushed (the corpus of tests/controlplane/test_bad_input.py)."""

from __future__ import annotations

import pytest

from promoter.controlplane.repo import ControlPlane
from promoter.errors import InputErrors
from promoter.model import MainObjects
from tests.controlplane.test_bad_input import Case, _check
from tests.support.helpers import ENV, PIPELINE, ControlPlaneFactory
from tests.support.ordering import target, workload
from tests.support.paths import ROOT

A = "workloads/app.yaml"
D = "workloads/db.yaml"
C = "workloads/crds.yaml"
DB = workload("db", target("main"), target("replica"), target("staging", "qa"))


def _main(factory: ControlPlaneFactory, files: dict[str, str]) -> MainObjects:
    factory.create(
        main={"promoter.yaml": PIPELINE, **files}, envs={e: {"env.yaml": ENV} for e in ("dev", "qa", "prod")}
    )
    cp = ControlPlane(factory.path)
    return cp.main(cp.resolve(None))


def test_each_form_names_one_target_of_the_same_environment(factory: ControlPlaneFactory) -> None:
    app = workload(
        "app",
        target("migrate"),
        target("web", depends_on="[{workload: db, target: main}, {target: migrate}, {workload: crds}]"),
        target("web-qa", "qa", depends_on="[{workload: db}]"),  # db's one target of qa
    )
    crds = workload("crds", target("dev"), target("qa", "qa"))
    main = _main(factory, {A: app, D: DB, C: crds})
    web, web_qa = main.workloads["app"].targets[1:]
    assert [(w, t) for w, t, _ in web.depends_on] == [("db", "main"), ("app", "migrate"), ("crds", "dev")]
    assert [line for _, _, line in web.depends_on] == [13, 13, 13]  # a flow list: its one line
    assert [(w, t) for w, t, _ in web_qa.depends_on] == [("db", "staging")]


def test_depth_is_the_longest_chain_below_a_target(factory: ControlPlaneFactory) -> None:
    # crds <- db <- app, and app also straight on crds: app is two deep, not one
    crds = workload("crds", target("dev"))
    db = workload("db", target("main", depends_on="[{workload: crds}]"))
    app = workload("app", target("web", depends_on="[{workload: crds}, {workload: db}]"))
    main = _main(factory, {A: app, D: db, C: crds})
    depths = {(w.name, t.name): t.depth for w in main.workloads.values() for t in w.targets}
    assert depths == {("crds", "dev"): 0, ("db", "main"): 1, ("app", "web"): 2}


def test_without_depends_on_nothing_changes(factory: ControlPlaneFactory) -> None:
    main = _main(factory, {A: workload("app", target("web")), D: DB})
    assert all(t.depends_on == () and t.depth == 0 for w in main.workloads.values() for t in w.targets)


def test_a_target_others_depend_on_keeps_its_own_reading(factory: ControlPlaneFactory) -> None:
    main = _main(
        factory, {A: workload("app", target("web", depends_on="[{workload: db, target: main}]")), D: DB}
    )
    db = main.workloads["db"].targets[0]
    assert (db.name, db.depends_on, db.depth) == ("main", (), 0)
    assert main.workloads["app"].targets[0].depth == 1


def _app(depends_on: str) -> str:
    """The app Workload: its one target, whose ``dependsOn`` is at line 10."""
    return workload("app", target("t", depends_on=depends_on))


ITEM = "spec.deploymentTargets[0].dependsOn[0]"
CASES = [
    Case("depends-on-unknown-workload", A, 10, f"{ITEM}: no workload 'dbb' on main, did you mean 'db'?",
         main={A: _app("[{workload: dbb, target: main}]"), D: DB}),
    Case("depends-on-unknown-target", A, 10, f"{ITEM}: workload 'db' has no deployment target 'mian', did you mean 'main'?",
         main={A: _app("[{workload: db, target: mian}]"), D: DB}),
    Case("depends-on-far-from-any-target", A, 10,
         f"{ITEM}: workload 'db' has no deployment target 'cache' (it has main, replica, staging)",
         main={A: _app("[{workload: db, target: cache}]"), D: DB}),
    Case("depends-on-another-environment", A, 10,
         f"{ITEM}: db/staging is a target of environment qa, not dev: a target comes after targets of its own "
         "environment only", main={A: _app("[{workload: db, target: staging}]"), D: DB}),
    Case("depends-on-a-workload-of-two-targets-there", A, 10,
         f"{ITEM}: workload 'db' has 2 deployment targets in dev (main, replica): name one with 'target'",
         main={A: _app("[{workload: db}]"), D: DB}),
    Case("depends-on-a-workload-with-none-there", A, 10,
         f"{ITEM}: workload 'db' has no deployment target in dev",
         main={A: _app("[{workload: db}]"), D: workload("db", target("staging", "qa"))}),
    Case("depends-on-itself", A, 10, f"{ITEM}: app/t cannot depend on itself", main={A: _app("[{target: t}]")}),
    Case("depends-on-twice", A, 10, "spec.deploymentTargets[0].dependsOn[1]: db/main is listed twice",
         main={A: _app("[{workload: db, target: main}, {workload: db, target: main}]"), D: DB}),
    Case("depends-on-nothing", A, 10, f"{ITEM}: names no deployment target: give 'target'",
         main={A: _app("[{}]")}),
    Case("depends-on-misspelt-field", A, 10, f"unknown field '{ITEM}.targte', did you mean 'target'?",
         main={A: _app("[{workload: db, targte: main}]"), D: DB}),
    Case("depends-on-a-string", A, 10, f"{ITEM}: must be a mapping, got a string", main={A: _app("[db]"), D: DB}),
    Case("depends-on-not-a-list", A, 10, "spec.deploymentTargets[0].dependsOn: must be a list, got a mapping",
         main={A: _app("{workload: db}"), D: DB}),
    Case("depends-on-a-bad-name", A, 10, f"{ITEM}.workload: invalid name 'DB'", main={A: _app("[{workload: DB}]")}),
    Case("depends-on-in-a-cycle", A, 10, f"{ITEM}: a cycle, app/t -> db/main -> app/t: none of them could ever be applied",
         main={A: _app("[{workload: db, target: main}]"),
               D: workload("db", target("main", depends_on="[{workload: app}]"))}),
    Case(
        # the cycle is said from the target read first (workloads/app.yaml), whichever is found first
        "depends-on-in-a-cycle-of-three", A, 10,
        f"{ITEM}: a cycle, app/t -> db/main -> crds/dev -> app/t",
        main={A: _app("[{workload: db}]"),
              C: workload("crds", target("dev", depends_on="[{workload: app}]")),
              D: workload("db", target("main", depends_on="[{workload: crds}]"))},
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_bad_depends_on(factory: ControlPlaneFactory, case: Case) -> None:
    _check(factory, case)


def test_every_problem_of_depends_on_at_once(factory: ControlPlaneFactory) -> None:
    app = workload(
        "app", target("a", depends_on="[{workload: dbb}]"), target("b", depends_on="[{target: b}]")
    )
    with pytest.raises(InputErrors) as err:
        _main(factory, {A: app, D: DB})
    assert [str(p) for p in err.value.problems] == [
        f"{A}:10: {ITEM}: no workload 'dbb' on main, did you mean 'db'?",
        f"{A}:14: spec.deploymentTargets[1].dependsOn[0]: app/b cannot depend on itself",
    ]


def test_the_example_of_the_docs_reads_as_they_say(factory: ControlPlaneFactory) -> None:
    """docs/configuration.md#ordering-on-a-cluster: its Workload, with the workloads it names."""
    docs = (ROOT / "docs" / "configuration.md").read_text()
    section = docs[docs.index("#### Ordering on a cluster") :]
    shop = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    main = _main(
        factory,
        {
            "workloads/shop.yaml": shop,
            "workloads/postgres.yaml": workload("postgres", target("dev"), target("qa", "qa")),
            "workloads/cert-manager.yaml": workload("cert-manager", target("dev-cluster")),
        },
    )
    web = main.workloads["shop"].targets[1]
    assert [(w, t) for w, t, _ in web.depends_on] == [
        ("postgres", "dev"),
        ("shop", "migrate"),
        ("cert-manager", "dev-cluster"),
    ]
    assert web.depth == 1
