"""The scheduling flow on an environment whose folders hold different main commits (a promotion
in waves stopped in a wave): each folder is rendered again with its own main commit, keeps its
provenance, and nothing reaches a wave it has not passed."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.errors import PromotionFailed
from promoter.gitcmd import Git
from promoter.model import Environment, Source
from promoter.platform.provenance import FolderProvenance, Provenance
from promoter.promotion import mixed
from promoter.promotion.waves import Step
from tests.support.flows import orchestrator
from tests.support.helpers import WORKLOAD, ControlPlaneFactory
from tests.support.waves import (
    BROKEN_CHECK,
    QA_TYPES,
    create,
    first_parent_merges,
    provenance,
    waved_pipeline,
)

FOLDER = "{}/app-t2/{}.yaml"
# the gate fails when the wave's own folders mention BROKEN
WAVE_CHECK = BROKEN_CHECK.replace(
    '"$PROMOTER_PLATFORM_SHA"', '"$PROMOTER_PLATFORM_SHA" -- $PROMOTER_CLUSTER_TYPES'
)


def stopped_in_a_wave(factory: ControlPlaneFactory, on_failure: str = "stop") -> tuple[Path, str, str]:
    """x promoted everywhere, then y stopped in qa's wave fleet (its gate fails on BROKEN)."""
    path = create(
        factory,
        waved_pipeline(
            canary_gates='[{command: ["true"]}]', fleet_gates=f"[{WAVE_CHECK}]", on_failure=on_failure
        ),
    )
    x = Git(path).out("rev-parse", "main")
    assert orchestrator(path).promote(x).ok
    y = factory.commit(
        "main", {"workloads/app.yaml": WORKLOAD.replace("./qa", "./BROKEN")}, "break qa", keep=True
    )
    assert not orchestrator(path).promote(y).ok
    return path, x, y


def schedule(path: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["promote", "--control-plane", str(path), "--schedule", "qa", *extra])
    return result.exit_code, result.output


def folders(factory: ControlPlaneFactory) -> dict[str, tuple[str, str, str]]:
    """cluster type -> (main commit, environment commit, wave) of its folder."""
    listed = provenance(factory)["folders"]
    assert isinstance(listed, dict)
    return {ct: (f["mainCommit"], f["environmentCommit"], f["wave"]) for ct, f in listed.items()}


def file(factory: ControlPlaneFactory, ct: str, name: str) -> str:
    return factory.platform_file("qa", FOLDER.format(ct, name)) or ""


@pytest.mark.parametrize(
    ("on_failure", "landed"), [("stop", ("edge", "large")), ("rollback", ("edge",))], ids=["stop", "rollback"]
)
def test_each_folder_is_rendered_again_with_its_own_main_commit(
    factory: ControlPlaneFactory, on_failure: str, landed: tuple[str, ...]
) -> None:
    path, x, y = stopped_in_a_wave(factory, on_failure)
    held = {ct: (y if ct in landed else x) for ct in ("edge", "large", "small")}
    waves = {ct: wave for ct, (_, _, wave) in folders(factory).items()}
    status = CliRunner().invoke(cli, ["status", "--control-plane", str(path), "--output", "json"])
    qa = json.loads(status.output)["environments"][1]
    assert qa["state"] == "failure" and qa["deployedMainCommit"] == y
    assert [(w["name"], w["mainCommits"]) for w in qa["waves"]] == [
        (wave, {ct: held[ct]}) for wave, ct in (("canary", "edge"), ("fleet", "large"), ("rest", "small"))
    ]
    assert waves == {"edge": "canary", "large": "fleet", "small": "rest"}  # a rollback restores its wave too
    merges = len(first_parent_merges(factory.platform, "qa"))
    forge = orchestrator(path).forge
    before = {c: forge.get_statuses(c)["promoter/qa"] for c in (x, y)}

    values = factory.commit("qa", {"env.yaml": QA_TYPES.replace("REGION: here", "REGION: there")}, "new")
    code, output = schedule(path)
    assert code == 0, output
    groups = ", ".join(
        f"{c[:12]} ({', '.join(t for t in sorted(held) if held[t] == c)})"
        for c in dict.fromkeys(held.values())
    )
    assert f"qa: its folders hold 2 main commits: {groups}" in output
    message = Git(factory.platform).out("log", "-1", "--format=%B", "qa^2")
    assert f"- each folder rendered again with its own main commit: {groups}" in message
    # all at once: one merge; each folder at its own commit, with the new values
    assert len(first_parent_merges(factory.platform, "qa")) == merges + 1
    assert folders(factory) == {ct: (held[ct], values, waves[ct]) for ct in held}
    for ct, commit in held.items():
        assert "REGION: there" in file(factory, ct, "platform-config")
        assert ("./BROKEN" in file(factory, ct, "reconciler")) == (commit == y)
    prov = provenance(factory)
    assert prov["mainCommit"] == y and prov["environmentCommit"] == values
    # no commit's status moved: y stays held in qa, prod's guard still stops it
    assert {c: forge.get_statuses(c)["promoter/qa"] for c in (x, y)} == before
    refs = factory.refs()
    code, output = schedule(path)  # nothing new: nothing pushed
    assert code == 0 and "no changes" in output and factory.refs() == refs

    # with --waves each wave lands its own folders at their own commits, gated by its gates:
    # after a stop, wave fleet's folders still hold broken y and its gate fails again
    newer = factory.commit("qa", {"env.yaml": QA_TYPES.replace("REGION: here", "REGION: elsewhere")}, "newer")
    code, output = schedule(path, "--waves")
    done = ("canary", "fleet") if on_failure == "stop" else ("canary", "fleet", "rest")
    assert code == (1 if on_failure == "stop" else 0), output
    assert ("FAILED: wave fleet (2/3): gate command" in output) == (on_failure == "stop")
    latest = first_parent_merges(factory.platform, "qa")
    assert len(latest) == merges + 1 + len(done)
    changed = [
        sorted(
            {p.split("/")[0] for p in Git(factory.platform).out("diff", "--name-only", f"{m}^1", m).split()}
        )
        for m in reversed(latest[: len(done)])
    ]
    assert changed == [[".promoter", ct] for ct in ("edge", "large", "small")[: len(done)]]
    assert folders(factory) == {
        ct: (held[ct], newer if waves[ct] in done else values, waves[ct]) for ct in held
    }
    assert {c: forge.get_statuses(c)["promoter/qa"] for c in (x, y)} == before

    # a later promotion goes through the waves as usual, with the newest values
    z = factory.commit("main", {"workloads/app.yaml": WORKLOAD}, "fix qa", keep=True)
    report = orchestrator(path).promote(z)
    assert report.ok, [r.message for r in report.results]
    assert [w.name for w in report.results[1].waves] == ["canary", "fleet", "rest"]
    # a wave whose folders would not change lands nothing and keeps their provenance (z
    # renders what x did): after the rollback, fleet's and rest's folders are already right
    same = {} if on_failure == "stop" else {"large": (x, newer, "fleet"), "small": (x, newer, "rest")}
    assert folders(factory) == {
        "edge": (z, newer, "canary"),
        "large": (z, newer, "fleet"),
        "small": (z, newer, "rest"),
        **same,
    }
    assert all("REGION: elsewhere" in file(factory, ct, "platform-config") for ct in held)
    assert not any("./BROKEN" in file(factory, ct, "reconciler") for ct in held)
    assert forge.get_statuses(z)["promoter/prod"].state == "success"


def rewrite_provenance(factory: ControlPlaneFactory, tmp: Path, old: str, new: str) -> None:
    """Edit the qa branch's provenance by hand, as someone might, and push it."""
    clone = tmp / "edit"
    run = ["git", "-C", str(clone)]
    subprocess.run(["git", "clone", "-q", "-b", "qa", str(factory.platform), str(clone)], check=True)
    target = clone / ".promoter" / "promotion.yaml"
    target.write_text(target.read_text().replace(old, new))
    subprocess.run([*run, "commit", "-qam", "edit provenance"], check=True)
    subprocess.run([*run, "push", "-q", "origin", "qa"], check=True)


@pytest.mark.parametrize("case", ["gone", "unknown"])
def test_a_folder_whose_main_commit_is_gone_or_unknown_is_refused(
    factory: ControlPlaneFactory, tmp_path: Path, case: str
) -> None:
    path, x, y = stopped_in_a_wave(factory)
    gone = "0123456789abcdef" * 2 + "01234567"
    # small is the only folder at x (and the only one of its wave)
    rewrite_provenance(
        factory, tmp_path, f"mainCommit: {x}", f"mainCommit: {gone}" if case == "gone" else "mainCommit: null"
    )
    factory.commit("qa", {"env.yaml": QA_TYPES.replace("REGION: here", "REGION: there")}, "new values")
    refs = factory.refs()
    for extra in ([], ["--waves"]):
        code, output = schedule(path, *extra)
        assert code == 1, output
        if case == "gone":
            assert f"qa: the folders of small hold main commit {gone[:12]}, which no longer exists" in output
        else:
            assert (
                "qa: the folder of cluster type 'small' is on qa, but its provenance "
                "(.promoter/promotion.yaml) names no main commit for it" in output
            )
        assert factory.refs() == refs  # nothing pushed, no status posted
    code, output = schedule(path, "--commit", y)  # the way on: one commit for every folder
    assert code == 0, output


def steps() -> tuple[Step, ...]:
    def step(name: str, i: int, types: tuple[str, ...]) -> Step:
        return Step(name, i, 2, types, (), 0.0, 60.0)

    return (step("canary", 1, ("edge", "new-edge")), step("rest", 2, ("large", "small")))


def test_a_cluster_type_without_a_folder_takes_the_commit_of_its_wave() -> None:
    x, y = "a" * 40, "b" * 40
    env = Environment("qa", "qa", "qa", "", "auto", 60.0, (), Source("promoter.yaml", 4))
    held_by = {"edge": FolderProvenance(y, "e", "canary"), "large": FolderProvenance(x, "e", "rest")}
    previous = Provenance(main_commit=y, cluster_types=("edge", "large"), folders=held_by)
    found = mixed.held(env, previous, steps(), {"edge", "large"})
    assert found is not None
    assert dict(found.commits) == {"edge": y, "new-edge": y, "large": x, "small": x}
    assert dict(found.waves) == {"edge": "canary", "new-edge": "canary", "large": "rest", "small": "rest"}
    assert found.describe() == f"{y[:12]} (edge, new-edge), {x[:12]} (large, small)"
    # the folders agree: the scheduling flow renders them all with one commit, as before
    same = {"edge": FolderProvenance(x, "e", "canary"), "large": FolderProvenance(x, "e", "rest")}
    assert mixed.held(env, replace(previous, folders=same), steps(), {"edge", "large"}) is None
    # a tree written without waves holds one commit throughout
    assert mixed.held(env, replace(previous, folders={}), steps(), {"edge", "large"}) is None
    # a wave whose folders hold several commits (a promotion under way in it): no guessing
    split = {**held_by, "small": FolderProvenance(y, "e", "rest")}
    only_new = (steps()[0], Step("rest", 2, 2, ("large", "small", "tiny"), (), 0.0, 60.0))
    with pytest.raises(PromotionFailed, match="cluster type 'tiny' has no folder yet and wave 'rest' holds "):
        mixed.held(env, replace(previous, folders=split), only_new, {"edge", "large", "small"})


def test_a_failed_wave_of_a_per_folder_scheduling_run_is_rolled_back_like_any(
    factory: ControlPlaneFactory,
) -> None:
    bad = WAVE_CHECK.replace("BROKEN", '"REGION: bad"')
    path = create(
        factory, waved_pipeline(canary_gates=f"[{bad}]", fleet_gates=f"[{WAVE_CHECK}]", on_failure="rollback")
    )
    x = Git(path).out("rev-parse", "main")
    assert orchestrator(path).promote(x).ok
    y = factory.commit(
        "main", {"workloads/app.yaml": WORKLOAD.replace("./qa", "./BROKEN")}, "break qa", keep=True
    )
    assert not orchestrator(path).promote(y).ok
    good = folders(factory)
    assert {ct: c for ct, (c, _, _) in good.items()} == {"edge": y, "large": x, "small": x}
    forge = orchestrator(path).forge
    before = {c: forge.get_statuses(c)["promoter/qa"] for c in (x, y)}
    factory.commit("qa", {"env.yaml": QA_TYPES.replace("REGION: here", "REGION: bad")}, "bad values")
    code, output = schedule(path, "--waves")
    assert code == 1, output
    assert "FAILED: wave canary (1/3): gate command" in output and f"rolled back to {x[:12]}" in output
    # the canary folder goes back to the last healthy promotion there (x's), the others never moved
    assert folders(factory) == {**good, "edge": (x, good["large"][1], "canary")}
    assert "REGION: here" in file(factory, "edge", "platform-config")
    assert {c: forge.get_statuses(c)["promoter/qa"] for c in (x, y)} == before
