"""A render past its time limit is bad input at once: the run stops at the first assignment
that breaches it (exit 2, naming the template and the assignment), in one process or two,
however many assignments are left. Asserted by exit code and message, never by timing."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.controlplane.repo import ControlPlane
from promoter.errors import TemplateError
from promoter.rendering import render, sandbox, tree
from promoter.rendering.render import TimedOut
from tests.support.helpers import ENV, PIPELINE, ControlPlaneFactory

LOOP = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
LIMIT = 1.0  # seconds: the nested loop above runs for minutes; any other render, milliseconds


def workload(targets: int) -> str:
    items = "".join(
        f"    - {{name: t{i:02d}, environment: dev, manifests: {{repo: https://example.com/app, branch: main, path: ./dev}}}}\n"
        for i in range(targets)
    )
    return (
        "apiVersion: promoter.dev/v1alpha1\nkind: Workload\nmetadata: {name: app}\n"
        f"spec:\n  workspace: team\n  deploymentTargets:\n{items}"
    )


def config_template(slow_on: str) -> str:
    """A config template that runs past any limit for the cluster types named ``slow_on``."""
    body = f"{{% if cluster_type == '{slow_on}' %}}{LOOP}{{% endif %}}"
    return (
        "apiVersion: promoter.dev/v1alpha1\nkind: Template\nmetadata: {name: slow-config}\n"
        "spec:\n  type: config\n  manifests:\n    - |\n"
        "      apiVersion: v1\n      kind: ConfigMap\n"
        "      metadata: {name: platform-config, namespace: '{{ namespace }}'}\n"
        f"      data: {{a: '{body}'}}\n"
    )


def cluster_types(*names: str) -> str:
    docs = [
        "apiVersion: promoter.dev/v1alpha1\nkind: ClusterType\n"
        f"metadata: {{name: {name}, labels: {{size: small}}}}\nspec: {{reconciler: flux, configType: slow-config}}\n"
        for name in names
    ]
    return "---\n".join([*docs, ENV.split("---\n", 1)[1]])


def build(factory: ControlPlaneFactory, *, targets: int, names: tuple[str, ...], slow_on: str) -> None:
    factory.create(
        {
            "promoter.yaml": PIPELINE,
            "workloads/app.yaml": workload(targets),
            "templates/slow.yaml": config_template(slow_on),
        },
        {"dev": {"env.yaml": cluster_types(*names)}, "qa": {"env.yaml": ENV}, "prod": {"env.yaml": ENV}},
    )


def validate(factory: ControlPlaneFactory) -> Any:
    return CliRunner().invoke(cli, ["validate", "--control-plane", str(factory.path)])


def test_a_slow_config_template_in_40_assignments_stops_at_the_first(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(factory, targets=40, names=("small",), slow_on="small")
    monkeypatch.setattr(sandbox, "RENDER_SECONDS", LIMIT)
    result = validate(factory)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("error: templates/slow.yaml:"), line
    assert "template 'slow-config'" in line
    assert "assignment dev/small/app-t00:" in line
    assert f"rendering took longer than {LIMIT:g}s" in line


@pytest.mark.parametrize(("slow_on", "half"), [("ct-a", "this process"), ("ct-b", "the forked child")])
def test_the_first_breach_stops_both_processes(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch, slow_on: str, half: str
) -> None:
    """40 assignments in each of two cluster types, rendered in two processes: a breach in
    either half ends the run with that assignment, in the other half as well."""
    build(factory, targets=40, names=("ct-a", "ct-b"), slow_on=slow_on)
    monkeypatch.setattr(sandbox, "RENDER_SECONDS", LIMIT)
    monkeypatch.setattr(tree, "PARALLEL_MIN_ASSIGNMENTS", 10)
    monkeypatch.setattr(tree, "can_fork", lambda: True)
    forks = []
    real_fork = tree.render_in_two

    def counted(*args: Any) -> Any:
        forks.append(half)
        return real_fork(*args)

    monkeypatch.setattr(tree, "render_in_two", counted)
    result = validate(factory)
    assert forks, "rendered in one process: the test would not cover the child"
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert "template 'slow-config'" in line
    assert f"assignment dev/{slow_on}/app-t00:" in line
    assert f"rendering took longer than {LIMIT:g}s" in line


class JumpingClock:
    """``time.monotonic`` for the renderer: each reading is ten seconds after the last."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 10.0
        return self.now


def test_a_render_that_ends_past_its_limit_is_refused_where_no_timer_runs(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Off the main thread no SIGALRM stops a render (and work in C holds handlers back): one
    that returns after its limit is refused all the same, by the time it took."""
    factory.create()
    cp = ControlPlane(factory.path)
    main = cp.main(cp.resolve(None))
    env = main.pipeline.environment("dev")
    assert env is not None
    objects = cp.environment(env)
    monkeypatch.setattr(render, "time", JumpingClock())
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            tree.render_environment(main, objects, "dev")
            outcome.append(None)
        except TemplateError as err:
            outcome.append(err)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    [err] = outcome
    assert isinstance(err, TimedOut), err
    assert "assignment dev/small/app-t:" in str(err)
    assert f"rendering took longer than {sandbox.RENDER_SECONDS:g}s" in str(err)


def test_a_template_slow_in_every_assignment_stops_at_its_share_of_the_budget(
    factory: ControlPlaneFactory,
) -> None:
    """Each render is under its own limit; the template's renders add up past its share of the
    run's budget after a few of its 40 assignments, not after all of them (budget tiny here: the
    test asserts what the run says and where it stops, never how fast it ran)."""
    build(factory, targets=40, names=("small",), slow_on="none")
    result = CliRunner().invoke(
        cli, ["validate", "--control-plane", str(factory.path), "--render-budget", "1ms"]
    )
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert "over its share of 0.2ms of the run's rendering budget (1.0ms, --render-budget)" in line, line
    count = int(line.split("': ", 1)[1].split()[0])  # the first template past its share, at any count
    assert 1 <= count < 40 and "assignment" in line and "(the last: dev/" in line  # it stopped early
    again = CliRunner().invoke(cli, ["validate", "--control-plane", str(factory.path)])  # the default again
    assert again.exit_code == 0, again.output


def test_the_runs_budget_in_all_and_per_template() -> None:
    from types import SimpleNamespace

    from promoter.errors import TemplateError
    from promoter.rendering import budget

    def template(name: str) -> Any:
        return SimpleNamespace(name=name, source=SimpleNamespace(file="templates/t.yaml", line=3))

    budget.set_run_seconds(60.0)  # a template's share: 10 s
    try:
        spent = budget.Budget()
        for i in range(6):
            spent.spend(9.0, template(f"t{i}"), "dev/app/small")  # type: ignore[arg-type]
        with pytest.raises(
            TemplateError, match=r"rendering took 63.0s in all, over the run's budget of 60.0s"
        ):
            spent.spend(9.0, template("t6"), "dev/app/small")  # type: ignore[arg-type]
        mine = budget.Budget()
        mine.spend(6.0, template("slow"), "dev/app/a")  # type: ignore[arg-type]
        with pytest.raises(
            TemplateError, match=r"'slow': 2 assignments rendered in 12.0s \(the last: dev/app/b\)"
        ):
            mine.spend(6.0, template("slow"), "dev/app/b")  # type: ignore[arg-type]
    finally:
        budget.set_run_seconds(None)
    assert budget.run_seconds() == budget.RUN_SECONDS == 120.0
