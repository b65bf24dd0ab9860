"""Waves (DESIGN section 11) on the local forge: each wave lands its own cluster types' folders,
is gated and baked before the next, and fails, rolls back and resumes on its own."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from click.testing import CliRunner

import promoter.promotion.gating as gating_module
from promoter.cli.main import cli
from promoter.clock import FakeClock
from promoter.gates import build_gate
from promoter.gates.base import GateContext
from promoter.gates.command import CommandGate
from promoter.gates.runner import GateOutcome
from promoter.ghactions import publish, summary
from promoter.gitcmd import Git
from promoter.model import ClusterType, Environment, EnvironmentObjects, Source, Versions, Wave
from promoter.promotion.report import EnvResult, Report, WaveResult
from promoter.promotion.waves import resolve
from tests.support.flows import orchestrator
from tests.support.helpers import WORKLOAD, ControlPlaneFactory
from tests.support.waves import (
    BROKEN_CHECK,
    QA_TYPES,
    create,
    first_parent_merges,
    folder_commits,
    provenance,
    tree_of,
    waved_pipeline,
)


def test_the_whole_promotion_in_waves_through_the_cli(
    factory: ControlPlaneFactory, fake_time: FakeClock
) -> None:
    path = create(factory, waved_pipeline(canary_gates='[{command: ["true"]}]', fleet_gates="[]"))
    x = Git(path).out("rev-parse", "main")
    args = ["promote", "--control-plane", str(path), "--poll-interval", "0.1s", "--output", "json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    qa = report["environments"][1]
    assert [(w["name"], w["clusterTypes"], w["state"]) for w in qa["waves"]] == [
        ("canary", ["edge"], "success"),
        ("fleet", ["large"], "success"),
        ("rest", ["small"], "success"),
    ]
    assert [g["gate"] for g in qa["waves"][0]["gates"]] == ["command true"]
    assert qa["waves"][1]["gates"] == []  # its own (empty) gates, not the environment's
    assert qa["state"] == "success" and qa["mergeSha"] == qa["waves"][2]["mergeSha"]
    assert [r["environment"] for r in report["environments"]] == ["dev", "qa", "prod"]
    assert report["environments"][0]["waves"] == []
    # one merge per wave, each changing its own folder only
    merges = first_parent_merges(factory.platform, "qa")
    assert len(merges) == 3
    changed = [
        sorted(
            {p.split("/")[0] for p in Git(factory.platform).out("diff", "--name-only", f"{m}^1", m).split()}
        )
        for m in reversed(merges)
    ]
    assert changed == [[".promoter", "edge"], [".promoter", "large"], [".promoter", "small"]]
    assert folder_commits(factory) == {"edge": x, "large": x, "small": x}
    prov = provenance(factory)
    assert prov["mainCommit"] == x and prov["wave"] == "rest"
    assert prov["folders"]["edge"]["wave"] == "canary"  # type: ignore[index]
    assert "folders" not in provenance(factory, "dev")  # an environment without waves: as before
    status = CliRunner().invoke(cli, ["status", "--control-plane", str(path)])
    assert status.exit_code == 0, status.output
    assert "qa         success   3 waves healthy at" in status.output
    assert "    wave canary: edge at this commit" in status.output


def test_the_text_summary_and_statuses_name_the_waves(factory: ControlPlaneFactory) -> None:
    path = create(factory)
    x = Git(path).out("rev-parse", "main")
    report = orchestrator(path).promote(x)
    assert report.ok, [r.message for r in report.results]
    statuses = orchestrator(path).forge.get_statuses(x)
    assert statuses["promoter/qa"].description.startswith("3 waves healthy at ")
    assert "(canary success, fleet success, rest success)" in statuses["promoter/qa"].description


def _recording_gates(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple[str, ...], float]]:
    """Record (gate, cluster types of its context, time) of every gate check."""
    seen: list[tuple[str, tuple[str, ...], float]] = []

    def build(spec: Any) -> Any:
        gate = build_gate(spec)
        check = gate.check

        def recorded(ctx: Any) -> Any:
            seen.append((gate.describe(), ctx.cluster_types, ctx.clock.now()))
            return check(ctx)

        gate.check = recorded  # type: ignore[method-assign]
        return gate

    monkeypatch.setattr(gating_module, "build_gate", build)
    return seen


def test_gates_judge_their_wave_and_bake_holds_the_next(
    factory: ControlPlaneFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = create(factory, waved_pipeline(bake="10m"))
    seen = _recording_gates(monkeypatch)
    clock = FakeClock()
    report = orchestrator(path, clock).promote(Git(path).out("rev-parse", "main"))
    assert report.ok
    qa = [(gate, types) for gate, types, _ in seen if types or gate.startswith("command")]
    assert ("soak 30s", ("edge",)) in qa and ("soak 1m00s", ("large",)) in qa
    assert ("command true", ("small",)) in qa  # the implicit wave: the environment's gates
    canary_end = max(t for g, types, t in seen if types == ("edge",))
    fleet_start = min(t for g, types, t in seen if types == ("large",))
    assert fleet_start - canary_end >= 600  # baked 10m in between
    dev = [types for gate, types, _ in seen if gate == "soak 10s"]
    assert dev and all(types == () for types in dev)  # no waves: the whole environment


def test_a_gate_failing_in_wave_two_rolls_back_that_wave_only(factory: ControlPlaneFactory) -> None:
    path = create(factory, waved_pipeline(fleet_gates=f"[{BROKEN_CHECK}]", on_failure="rollback"))
    x = Git(path).out("rev-parse", "main")
    assert orchestrator(path).promote(x).ok
    good, prod = tree_of(factory.platform, "qa"), tree_of(factory.platform, "prod")
    y = factory.commit(
        "main", {"workloads/app.yaml": WORKLOAD.replace("./qa", "./BROKEN")}, "break qa", keep=True
    )
    report = orchestrator(path).promote(y)
    assert [r.state for r in report.results] == ["noop", "failure"]
    qa = report.results[1]
    assert [(w.name, w.state) for w in qa.waves] == [("canary", "success"), ("fleet", "failure")]
    assert qa.message.startswith("wave fleet (2/3): gate command")
    assert f"rolled back to {x[:12]} with " in qa.message
    # wave 1 keeps y, wave 2 is back at x, the implicit last wave never moved
    assert folder_commits(factory) == {"edge": y, "large": x, "small": x}
    platform = Git(factory.platform)
    for folder in ("large", "small"):
        assert platform.out("rev-parse", f"qa:{folder}") == platform.out("rev-parse", f"{good}:{folder}")
    assert platform.out("rev-parse", "qa:edge") != platform.out("rev-parse", f"{good}:edge")
    assert "BROKEN" in (factory.platform_file("qa", "edge/app-t2/reconciler.yaml") or "")
    assert tree_of(factory.platform, "prod") == prod  # the next environment is untouched
    statuses = orchestrator(path).forge.get_statuses(y)
    assert statuses["promoter/qa"].state == "failure"
    assert statuses["promoter/qa"].description.startswith("wave fleet (2/3): ")
    assert "promoter/prod" not in statuses
    refs = factory.refs()  # held: the next run does nothing
    again = orchestrator(path).promote(y)
    assert again.results[-1].state == "held" and factory.refs() == refs


def test_a_wave_without_changes_is_done_at_once(factory: ControlPlaneFactory) -> None:
    path = create(factory)
    x = Git(path).out("rev-parse", "main")
    assert orchestrator(path).promote(x).ok
    before = len(first_parent_merges(factory.platform, "qa"))
    z = factory.commit(
        "main", {"workloads/app.yaml": WORKLOAD.replace("./prod", "./prod-v2")}, "prod only", keep=True
    )
    report = orchestrator(path).promote(z)
    assert [r.state for r in report.results] == ["noop", "noop", "success"]
    assert [w.state for w in report.results[1].waves] == ["noop", "noop", "noop"]
    assert len(first_parent_merges(factory.platform, "qa")) == before


def test_the_scheduling_flow_renders_all_at_once_unless_asked(factory: ControlPlaneFactory) -> None:
    path = create(factory, waved_pipeline(canary_gates="[]", fleet_gates="[]"))
    x = Git(path).out("rev-parse", "main")
    assert orchestrator(path).promote(x).ok
    merges = len(first_parent_merges(factory.platform, "qa"))
    factory.commit("qa", {"env.yaml": QA_TYPES.replace("REGION: here", "REGION: there")}, "new values")
    report = orchestrator(path).schedule("qa")
    assert report.ok and report.results[0].waves == []
    assert len(first_parent_merges(factory.platform, "qa")) == merges + 1  # one merge, every folder
    assert provenance(factory)["wave"] == ""
    factory.commit("qa", {"env.yaml": QA_TYPES.replace("REGION: here", "REGION: elsewhere")}, "newer values")
    report = orchestrator(path, waves=True).schedule("qa")
    assert report.ok and [w.name for w in report.results[0].waves] == ["canary", "fleet", "rest"]
    assert len(first_parent_merges(factory.platform, "qa")) == merges + 4
    assert folder_commits(factory) == {"edge": x, "large": x, "small": x}


def test_the_step_summary_has_a_row_and_a_box_per_wave() -> None:
    gate = GateOutcome("soak 30s", "success", "soaked")
    waves = [
        WaveResult(
            "canary",
            ["edge"],
            "success",
            pr_url="https://github.com/o/p/pull/7",
            merge_sha="a" * 40,
            gates=[gate],
        ),
        WaveResult(
            "fleet", ["large", "small"], "failure", "gate failed", pr_url="https://github.com/o/p/pull/8"
        ),
    ]
    qa = EnvResult("qa", "failure", "wave fleet (2/2): gate failed", waves=waves)
    text = summary.summary_markdown(
        Report("promotion", "f" * 40, [EnvResult("dev", "success"), qa]), ["dev", "qa", "prod"]
    )
    lines = text.splitlines()
    assert (
        "| ↳ qa wave canary (edge) | ✅ success | [#7](https://github.com/o/p/pull/7) | `aaaaaaaaaaaa` | soak 30s: success | 0.0s |"
        in lines
    )
    assert (
        "| ↳ qa wave fleet (large, small) | ❌ failure | [#8](https://github.com/o/p/pull/8) | - | - | 0.0s |"
        in lines
    )
    chart = lines[lines.index("```mermaid") :]
    assert '  subgraph env1["qa: failure"]' in chart
    assert '    env1w0["canary: edge<br>success"]' in chart and "    env1w0 --> env1w1" in chart
    assert "  class env1w1 bad" in chart and "  env0 --> env1" in chart and "  env1 --> env2" in chart
    outputs = json.loads(publish.report_outputs(Report("promotion", "f" * 40, [qa]))["results"])
    assert outputs["qa"]["waves"] == {"canary": "success", "fleet": "failure"}


def test_a_command_gate_is_told_its_waves_cluster_types() -> None:
    gate = CommandGate.from_spec(["true"], Source("promoter.yaml", 9))
    ctx = GateContext(
        "qa", "c" * 40, "m" * 40, "/srv/platform.git", "qa", FakeClock(), cluster_types=("a", "b")
    )
    assert gate.environment(ctx)["PROMOTER_CLUSTER_TYPES"] == "a b"
    assert (
        gate.environment(GateContext("qa", "c", "m", "/p", "qa", FakeClock()))["PROMOTER_CLUSTER_TYPES"] == ""
    )


def test_waves_flag_is_for_the_scheduling_flow(factory: ControlPlaneFactory, fake_time: FakeClock) -> None:
    path = create(factory, waved_pipeline(canary_gates="[]", fleet_gates="[]"))
    refs = factory.refs()
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--waves"])
    assert result.exit_code == 2
    assert "--waves is for the scheduling flow (--schedule)" in result.output and factory.refs() == refs
    # set for every run of a workflow, the variable leaves the promotion flow as it is
    args = ["promote", "--control-plane", str(path), "--poll-interval", "0.1s"]
    result = CliRunner(env={"PROMOTER_WAVES": "true"}).invoke(cli, args)
    assert result.exit_code == 0, result.output
    factory.commit("qa", {"env.yaml": QA_TYPES.replace("REGION: here", "REGION: there")}, "new values")
    result = CliRunner(env={"PROMOTER_WAVES": "true"}).invoke(cli, [*args, "--schedule", "qa"])
    assert result.exit_code == 0, result.output
    assert "qa: wave fleet (2/3): merged " in result.output  # landed wave by wave


def test_direct_waves_are_one_commit_each_and_a_direct_rollback_one_more(
    factory: ControlPlaneFactory,
) -> None:
    text = waved_pipeline(fleet_gates=f"[{BROKEN_CHECK}]", on_failure="rollback", merge="direct")
    path = create(factory, text)
    x = Git(path).out("rev-parse", "main")
    assert orchestrator(path).promote(x).ok
    platform = Git(factory.platform)
    assert len(platform.out("rev-list", "--first-parent", "qa").split()) == 1 + 3  # the seed, a push per wave
    assert first_parent_merges(factory.platform, "qa") == []
    y = factory.commit(
        "main", {"workloads/app.yaml": WORKLOAD.replace("./qa", "./BROKEN")}, "break qa", keep=True
    )
    assert not orchestrator(path).promote(y).ok
    subjects = platform.out("log", "--format=%s", "-3", "qa").splitlines()
    assert subjects[0] == f"Roll back qa large to {x[:7]}: {y[:12]} failed its gates"
    assert subjects[1].startswith(f"Promote {y[:7]} to qa, wave fleet (2/3): ")
    assert subjects[2].startswith(f"Promote {y[:7]} to qa, wave canary (1/3): ")
    assert folder_commits(factory) == {"edge": y, "large": x, "small": x}


def test_each_step_carries_the_flux_releases_its_cluster_types_run() -> None:
    """What a commitStatus gate is told (GateContext.flux): its wave's cluster types' releases,
    each its own or the Pipeline's; an Argo CD cluster type is none."""
    src = Source("promoter.yaml", 9)

    def ct(name: str, reconciler: str = "flux", flux: tuple[int, int] | None = None) -> ClusterType:
        return ClusterType(name, {}, reconciler, "default", "configmap", src, Versions(flux=flux))

    types = {"edge": ct("edge", flux=(2, 8)), "large": ct("large"), "argo": ct("argo", "argocd")}
    objects = EnvironmentObjects("qa", "e" * 40, types, {}, {})
    canary = Wave("canary", ("edge",), None, None, 0.0, None, src)
    env = Environment("qa", "qa", "qa", ".", "auto", 600.0, (), src, waves=(canary,))
    steps = resolve(env, objects, Versions(flux=(2, 7)))
    assert [(s.name, s.cluster_types, s.flux) for s in steps] == [
        ("canary", ("edge",), ((2, 8),)),
        ("rest", ("argo", "large"), ((2, 7),)),
    ]
    assert resolve(env, objects)[1].flux == ()  # nothing declared: nothing said
    [whole] = resolve(replace(env, waves=()), objects, Versions(flux=(2, 9)))
    assert whole.flux == ((2, 8), (2, 9))
